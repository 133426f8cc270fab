package index

import (
	"context"
	"fmt"
	"github.com/vault-rag/vault-rag/models/bow"
	"sync"
	"time"
)

// testTime is the file time the tests' vaults are written with.
var testTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeEmbedder is models/bow's embedder (a hashed bag of words, so texts
// sharing words are near each other) that records what it embedded and can
// fail after a number of calls.
type fakeEmbedder struct {
	bow.Embedder
	failAfter int // EmbedPassages fails on every call after this many; < 0 never

	mu       sync.Mutex
	calls    int
	embedded []string
}

func newFake() *fakeEmbedder {
	return &fakeEmbedder{Embedder: bow.Embedder{ModelName: "fake-bow"}, failAfter: -1}
}

func (f *fakeEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failAfter >= 0 && f.calls > f.failAfter {
		return nil, fmt.Errorf("fake embedder: failing call %d", f.calls)
	}
	f.embedded = append(f.embedded, texts...)
	return f.Embedder.EmbedPassages(ctx, texts)
}

// reset forgets what was embedded so far.
func (f *fakeEmbedder) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.embedded = 0, nil
}

func (f *fakeEmbedder) texts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.embedded...)
}

// exactKNN and binaryKNN are chunk searches (DB.Vector with K) by each mode,
// binaryKNN rescoring the given number of candidates.
func exactKNN(ctx context.Context, d *DB, v []float32, k int) ([]Hit, error) {
	res, err := d.Vector(ctx, VectorQuery{Vector: v, Mode: VectorExact, K: k})
	return res.Hits, err
}

func binaryKNN(ctx context.Context, d *DB, v []float32, k, candidates int) ([]Hit, error) {
	res, err := d.Vector(ctx, VectorQuery{Vector: v, Mode: VectorBinary, K: k, Candidates: candidates})
	return res.Hits, err
}
