// Package bench measures what vault-rag costs: reindex times, query latency
// per configuration from the demo vault to 30,000 notes, rerank cost, the
// indexer's embedding throughput against the raw ONNX session, and index size.
package bench

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"

	"github.com/vault-rag/vault-rag/stages"
)

// HashEmbedder makes 384-dimensional bag-of-words vectors by feature hashing.
// Embedding 150,000 chunks of a 30,000-note vault with bge-small would take
// hours on two cores, and the cost of a KNN over stored vectors does not depend
// on their values, so the scale vaults are indexed with this and searched with
// QueryCost, which pays for a real query embedding.
type HashEmbedder struct{}

// HashName is the name a hash-embedded index records.
const HashName = "hash-384"

// Name implements index.Embedder.
func (HashEmbedder) Name() string { return HashName }

// Dim implements index.Embedder.
func (HashEmbedder) Dim() int { return 384 }

// CountTokens approximates WordPiece by words and punctuation.
func (HashEmbedder) CountTokens(text string) int {
	return len(strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) })) * 13 / 10
}

// EmbedPassages implements index.Embedder.
func (h HashEmbedder) EmbedPassages(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = hashVector(t)
	}
	return out, nil
}

// EmbedQuery implements stages.Embedder.
func (h HashEmbedder) EmbedQuery(_ context.Context, q string) ([]float32, error) {
	return hashVector(q), nil
}

func hashVector(text string) []float32 {
	v := make([]float32, 384)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := float32(1)
		if x&1 == 1 {
			sign = -1
		}
		v[(x>>1)%384] += sign
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(n))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

// QueryCost is the hash embedder with the real model's query cost: EmbedQuery
// first embeds the query with the real embedder (and discards the vector), so a
// query's latency on a hash-embedded index is what it would be on a real one.
type QueryCost struct {
	HashEmbedder
	Real stages.Embedder
}

// EmbedQuery implements stages.Embedder.
func (q QueryCost) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if _, err := q.Real.EmbedQuery(ctx, text); err != nil {
		return nil, err
	}
	return hashVector(text), nil
}

// scaleModels serves QueryCost for the hash index and the registry otherwise.
type scaleModels struct {
	stages.Models
	cost QueryCost
}

func (m scaleModels) Embedder(ctx context.Context, name string) (stages.Embedder, error) {
	if name == HashName {
		return m.cost, nil
	}
	return m.Models.Embedder(ctx, name)
}
