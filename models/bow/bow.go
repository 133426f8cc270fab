// Package bow is a bag-of-words embedder: deterministic feature hashing of
// words into 384 signed dimensions, L2-normalised, so texts sharing words are
// near each other. It needs no model, which makes it the stand-in for tests
// that build indexes and for benchmarks that must index 30,000 notes.
package bow

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
)

// Dim is the vector width, the same as bge-small's.
const Dim = 384

// Vector embeds text: each word (lower-cased, surrounding punctuation trimmed)
// adds ±1 to one hashed dimension. Text with no words gets a fixed unit vector.
func Vector(text string) []float32 {
	v := make([]float32, Dim)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		w = strings.Trim(w, ".,;:!?()[]#|\"'`*")
		if w == "" {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%Dim] += sign
	}
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		v[0] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Embedder is Vector behind the embedder interfaces of index and stages.
type Embedder struct {
	ModelName string // what the index records (default "bow-384")
}

// Name implements index.Embedder and stages.Embedder.
func (e Embedder) Name() string {
	if e.ModelName == "" {
		return "bow-384"
	}
	return e.ModelName
}

// Dim implements index.Embedder.
func (Embedder) Dim() int { return Dim }

// CountTokens counts words.
func (Embedder) CountTokens(text string) int { return len(strings.Fields(text)) }

// EmbedQuery implements stages.Embedder.
func (Embedder) EmbedQuery(_ context.Context, q string) ([]float32, error) { return Vector(q), nil }

// EmbedPassages implements index.Embedder and stages.Embedder.
func (Embedder) EmbedPassages(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = Vector(t)
	}
	return out, nil
}
