package stages_test

import (
	"context"
	"testing"

	"github.com/vault-rag/vault-rag/index"
)

// noteIDs maps each note's path to its id.
func noteIDs(t *testing.T, db *index.DB) map[string]int64 {
	t.Helper()
	rows, _, err := db.List(context.Background(), index.Filter{}, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, n := range rows {
		out[n.Path] = n.ID
	}
	return out
}
