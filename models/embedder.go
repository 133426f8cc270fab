package models

import (
	"context"
	"math"
)

// Embedder turns text into L2-normalised sentence vectors with a BERT model,
// pooled as its manifest entry says (PoolCLS, the BGE family's recipe, or
// PoolMean). It is safe for concurrent use.
type Embedder struct {
	b           *bert
	dim         int
	pooling     Pooling
	queryPrefix string
}

// Name is the model's name, as in the manifest.
func (e *Embedder) Name() string { return e.b.name }

// Dim is the vector width.
func (e *Embedder) Dim() int { return e.dim }

// CountTokens counts text's tokens without special tokens.
func (e *Embedder) CountTokens(text string) int { return len(e.b.ids(text)) }

// EmbedQuery embeds a search query, with the model's query instruction (BGE
// asks for one on the query side only).
func (e *Embedder) EmbedQuery(ctx context.Context, q string) ([]float32, error) {
	v, err := e.embed(ctx, []string{e.queryPrefix + q})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// EmbedPassages embeds texts to be searched, truncated to the model's window.
func (e *Embedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts)
}

func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.runSeqs(ctx, e.Prepare(texts).seqs)
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Cosine is the cosine similarity of two vectors.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Prepared is a batch of texts tokenized for the embedder, so a benchmark can
// time the ONNX session alone.
type Prepared struct{ seqs []sequence }

// Prepare tokenizes texts as EmbedPassages would.
func (e *Embedder) Prepare(texts []string) *Prepared {
	p := &Prepared{seqs: make([]sequence, len(texts))}
	for i, t := range texts {
		ids := e.b.ids(t)
		if len(ids) > e.b.maxLen-2 {
			ids = ids[:e.b.maxLen-2]
		}
		row := append(append([]int64{e.b.cls}, ids...), e.b.sep)
		p.seqs[i] = sequence{ids: row, types: make([]int64, len(row))}
	}
	return p
}

// RunPrepared runs the ONNX session over prepared texts, in the same batches
// EmbedPassages uses, and discards the output: the raw model cost.
func (e *Embedder) RunPrepared(ctx context.Context, p *Prepared) error {
	return e.b.run(ctx, p.seqs, func(int, []float32, []int64) {})
}
