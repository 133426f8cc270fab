// Package embedtest holds an embedder for tests of a build that another
// process holds: one that stops the build part-way and keeps its lock until
// the process is killed. Only tests import it.
package embedtest

import (
	"context"
	"errors"
	"os"
	"time"
)

// Embedder is the embedder a build takes (index.Embedder, spelt out here so
// the index package's own tests can import this package).
type Embedder interface {
	Name() string
	Dim() int
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
	CountTokens(text string) int
}

// Hanging is Embedder whose first EmbedPassages writes the file Marker (so
// the test knows the build got that far) and never returns.
type Hanging struct {
	Embedder
	Marker string
}

// EmbedPassages writes Marker and sleeps until the process is killed.
func (h *Hanging) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	if err := os.WriteFile(h.Marker, nil, 0o644); err != nil {
		return nil, err
	}
	time.Sleep(time.Hour) // killed before it wakes
	return nil, errors.New("not killed")
}
