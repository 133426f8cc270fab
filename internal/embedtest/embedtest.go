// Package embedtest holds an embedder for tests of a build that another
// process holds: one that stops the build part-way and keeps its lock until
// the process is killed, and a wait for the build to get there. Only tests
// import it.
package embedtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
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
// the test knows the build got that far) and never returns, or, when
// Release is set, returns once Release is closed: then every call embeds
// with Embedder.
type Hanging struct {
	Embedder
	Marker  string
	Release <-chan struct{}
}

// EmbedPassages writes Marker and sleeps until the process is killed, or
// waits for Release (or ctx) and embeds.
func (h *Hanging) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	if h.Release != nil {
		select {
		case <-h.Release:
			return h.Embedder.EmbedPassages(ctx, texts)
		default:
		}
	}
	if err := os.WriteFile(h.Marker, nil, 0o644); err != nil {
		return nil, err
	}
	if h.Release != nil {
		select {
		case <-h.Release:
			return h.Embedder.EmbedPassages(ctx, texts)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	time.Sleep(time.Hour) // killed before it wakes
	return nil, errors.New("not killed")
}

// WaitForMarker waits for the child process cmd, whose build embeds with
// Hanging, to write marker, failing the test with the child's output out
// when it exits first (exited is closed) or never gets there (then it is
// killed).
func WaitForMarker(t *testing.T, marker string, cmd *exec.Cmd, out *bytes.Buffer, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // against a hang, not a measure
	for {
		if _, err := os.Stat(marker); err == nil {
			return
		}
		select {
		case <-exited:
			t.Fatalf("the child exited before it began embedding: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the child never began embedding: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
