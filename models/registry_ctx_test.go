package models

import (
	"context"
	"errors"
	"testing"
)

// Registry.Embedder and CrossEncoder honour their context: a caller whose
// context has ended, or ends while it waits for another caller's load, gets
// the context's error instead of a model (or a wait it cannot leave).
func TestRegistryHonoursContext(t *testing.T) {
	r, err := NewRegistry(t.TempDir(), Runtime{Lib: "no-onnxruntime-here"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Embedder(ctx, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Embedder with an ended context: %v, want context.Canceled", err)
	}
	if _, err := r.CrossEncoder(ctx, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("CrossEncoder with an ended context: %v, want context.Canceled", err)
	}

	// Another caller holds the embedder's slot (its load is under way).
	r.mu.Lock()
	e := r.entries[DefaultEmbedder]
	r.mu.Unlock()
	if err := e.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	waiting, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.Embedder(waiting, "")
		done <- err
	}()
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a caller waiting for another's load: %v, want context.Canceled", err)
	}
	e.release()
	// With the slot free and a live context the load goes ahead (and fails
	// here: nothing is installed) rather than reporting a cancellation.
	if _, err := r.Embedder(context.Background(), ""); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("Embedder on an empty data folder: %v, want not installed", err)
	}
}
