package stages_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

// A stage that searches stored vectors must embed the query with the model
// the index was built with; naming another one is refused, not compared
// across two vector spaces.
func TestVectorStagesUseTheIndexEmbedder(t *testing.T) {
	env := stagetest.Env(t, map[string]string{"a.md": "# A\n\nwrites stalled during compaction\n"})
	for _, tc := range []struct {
		stage   stages.Stage
		wantErr string
	}{
		{&stages.Vector{}, ""},
		{&stages.Vector{Model: "fake-bow"}, ""},
		{&stages.Vector{Model: "bge-small-en-v1.5-q"}, "the index was embedded with fake-bow, but the stage asks for bge-small-en-v1.5-q"},
		{&stages.Hyde{}, ""},
		{&stages.Hyde{Model: "other"}, "the index was embedded with fake-bow"},
	} {
		if err := tc.stage.Validate(); err != nil {
			t.Fatal(err)
		}
		st := stages.NewState(stages.Query{Text: "compaction stall"})
		err := tc.stage.Run(context.Background(), env, st)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s %+v: %v", tc.stage.Name(), tc.stage, err)
		case tc.wantErr == "" && len(st.Ranking) != 1:
			t.Errorf("%s %+v: ranking %v, want the one note", tc.stage.Name(), tc.stage, st.Ranking)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s %+v: error %v, want %q", tc.stage.Name(), tc.stage, err, tc.wantErr)
		}
	}
}
