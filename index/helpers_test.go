package index

import (
	"context"
	"fmt"
	"github.com/vault-rag/vault-rag/models/bow"
	"strings"
	"sync"
	"time"
)

// testTime is the file time the tests' vaults are written with.
var testTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeEmbedder is a deterministic index.Embedder: a hashed, signed bag of
// words, L2-normalised, so texts sharing words are near each other. It
// records what it embedded and can fail after a number of calls.
type fakeEmbedder struct {
	name      string
	failAfter int // EmbedPassages fails on every call after this many; < 0 never

	mu       sync.Mutex
	calls    int
	embedded []string
}

func newFake() *fakeEmbedder { return &fakeEmbedder{name: "fake-bow", failAfter: -1} }

func (f *fakeEmbedder) Name() string { return f.name }
func (f *fakeEmbedder) Dim() int     { return 384 }

func (f *fakeEmbedder) CountTokens(text string) int { return len(strings.Fields(text)) }

func (f *fakeEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failAfter >= 0 && f.calls > f.failAfter {
		return nil, fmt.Errorf("fake embedder: failing call %d", f.calls)
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = bow.Vector(t)
		f.embedded = append(f.embedded, t)
	}
	return out, nil
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
