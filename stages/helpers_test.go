package stages_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

// countingModels is stagetest.Models counting the texts it embeds, as
// queries and as passages.
type countingModels struct {
	stagetest.Models
	queries, passages atomic.Int64
}

func (m *countingModels) Embedder(ctx context.Context, name string) (stages.Embedder, error) {
	return countingEmbedder{stagetest.Embedder(), m}, nil
}

type countingEmbedder struct {
	stages.Embedder
	m *countingModels
}

func (e countingEmbedder) EmbedQuery(ctx context.Context, q string) ([]float32, error) {
	e.m.queries.Add(1)
	return e.Embedder.EmbedQuery(ctx, q)
}

func (e countingEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	e.m.passages.Add(int64(len(texts)))
	return e.Embedder.EmbedPassages(ctx, texts)
}

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
