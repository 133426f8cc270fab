package stages_test

import (
	"context"
	"fmt"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models/bow"
	"path/filepath"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/stages"
)

// fakeBow is the bag-of-words stand-in for the real embedder (models/bow):
// texts sharing words are near each other, and no model is needed.
var fakeBow = bow.Embedder{ModelName: "fake-bow"}

// fakeModels serves the bag-of-words embedder under any name and reports the
// cross-encoder as not installed, as on a machine without it.
type fakeModels struct{}

func (fakeModels) Embedder(ctx context.Context, name string) (stages.Embedder, error) {
	return fakeBow, nil
}

func (fakeModels) CrossEncoder(ctx context.Context, name string) (stages.PairScorer, error) {
	return nil, fmt.Errorf("%w: %s (test double)", models.ErrNotInstalled, name)
}

// fileTime is every test note's modification time, so dates taken from the
// file time are reproducible.
var fileTime = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// buildEnv writes files (vault-relative path → content) to a temporary vault,
// indexes it with the bag-of-words embedder and returns an Env over it.
func buildEnv(t *testing.T, files map[string]string) *stages.Env {
	t.Helper()
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	vaulttest.WriteTree(t, vault, files, fileTime)
	ctx := context.Background()
	dbPath := filepath.Join(dir, "vault.db")
	if _, err := index.Build(ctx, fakeBow, index.BuildOptions{VaultPath: vault, DBPath: dbPath}); err != nil {
		t.Fatalf("build index: %v", err)
	}
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		t.Fatalf("open index: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return &stages.Env{DB: db, Models: fakeModels{}}
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
