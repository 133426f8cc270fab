// Package stagetest holds the test doubles the stages, pipeline and eval
// tests share: the bag-of-words embedder standing in for the real one,
// models that serve it, a fixed file time, and a small vault written,
// indexed and opened. Only tests import it.
package stagetest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/models/bow"
	"github.com/vault-rag/vault-rag/stages"
)

// EmbedderName is the name the bag-of-words embedder goes by.
const EmbedderName = "fake-bow"

// Embedder is the bag-of-words stand-in for the real embedder (models/bow):
// texts sharing words are near each other, and no model is needed.
func Embedder() bow.Embedder { return bow.Embedder{ModelName: EmbedderName} }

// Models serves Embedder under any name and reports the cross-encoder as not
// installed, as on a machine without it.
type Models struct{}

// Embedder implements stages.Models.
func (Models) Embedder(ctx context.Context, name string) (stages.Embedder, error) {
	return Embedder(), nil
}

// CrossEncoder implements stages.Models.
func (Models) CrossEncoder(ctx context.Context, name string) (stages.PairScorer, error) {
	return nil, fmt.Errorf("%w: %s (test double)", models.ErrNotInstalled, name)
}

// FileTime is every test note's modification time, so dates taken from the
// file time are reproducible.
func FileTime() time.Time { return time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC) }

// WriteVault writes files (vault-relative path → content) to a new vault
// folder of the test, with FileTime, and returns the folder.
func WriteVault(t testing.TB, files map[string]string) string {
	t.Helper()
	vault := filepath.Join(t.TempDir(), "vault")
	vaulttest.WriteTree(t, vault, files, FileTime())
	return vault
}

// Open indexes vault into dbPath with emb and opens the index.
func Open(ctx context.Context, emb index.Embedder, vault, dbPath string) (*index.DB, error) {
	if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: dbPath}); err != nil {
		return nil, fmt.Errorf("build index of %s: %w", vault, err)
	}
	return index.Open(ctx, dbPath)
}

// IndexEnv indexes a vault folder with Embedder into a file of the test and
// returns an Env over it: Models, and a passage cache. The index is closed
// when the test ends.
func IndexEnv(t testing.TB, vault string) *stages.Env {
	t.Helper()
	db, err := Open(context.Background(), Embedder(), vault, filepath.Join(t.TempDir(), "vault.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return stages.NewEnv(db, Models{})
}

// DB is env's index, for a test that reads it beside the stages.
func DB(t testing.TB, env *stages.Env) *index.DB {
	t.Helper()
	db, err := env.Index()
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// Env writes files to a new vault (WriteVault) and returns IndexEnv of it.
func Env(t testing.TB, files map[string]string) *stages.Env {
	t.Helper()
	return IndexEnv(t, WriteVault(t, files))
}
