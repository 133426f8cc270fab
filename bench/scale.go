package bench

import (
	"context"

	"github.com/vault-rag/vault-rag/models/bow"
	"github.com/vault-rag/vault-rag/stages"
)

// scaleEmbedder is the embedder the scale vaults are indexed with: models/bow's
// bag of words, under its own name (bow-384). Embedding 150,000 chunks of a
// 30,000-note vault with bge-small would take hours on two cores, and the
// cost of a KNN over stored vectors does not depend on their values, so they
// are searched with QueryCost, which pays for a real query embedding.
var scaleEmbedder = bow.Embedder{}

// QueryCost is the bag-of-words embedder with the real model's query cost:
// EmbedQuery first embeds the query with the real embedder (and discards the
// vector), so a query's latency on a bag-of-words index is what it would be
// on a real one.
type QueryCost struct {
	bow.Embedder
	Real stages.Embedder
}

// EmbedQuery implements stages.Embedder.
func (q QueryCost) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if _, err := q.Real.EmbedQuery(ctx, text); err != nil {
		return nil, err
	}
	return bow.Vector(text), nil
}

// scaleModels serves QueryCost for the scale indexes' embedder and the
// registry otherwise.
type scaleModels struct {
	stages.Models
	cost QueryCost
}

func (m scaleModels) Embedder(ctx context.Context, name string) (stages.Embedder, error) {
	if name == m.cost.Name() {
		return m.cost, nil
	}
	return m.Models.Embedder(ctx, name)
}
