package pipeline_test

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
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// repoRoot holds configs/, experiments/ and vault/ (tests run in pipeline/).
const repoRoot = ".."

// fakeBow is the bag-of-words stand-in for the real embedder (models/bow):
// texts sharing words are near each other, and no model is needed.
var fakeBow = bow.Embedder{ModelName: "fake-bow"}

// fakeModels serves the bag-of-words embedder under any name and reports the
// cross-encoder as not installed, as on this machine.
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

// testNow is the clock every test query carries.
var testNow = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// writeFiles writes files (vault-relative path → content) under vault, with
// the fixed file time.
func writeFiles(vault string, files map[string]string) error {
	return vaulttest.WriteFiles(vault, files, fileTime)
}

// openIndex indexes vault into dbPath with emb and opens it.
func openIndex(ctx context.Context, emb index.Embedder, vault, dbPath string) (*index.DB, error) {
	if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: dbPath}); err != nil {
		return nil, fmt.Errorf("build index of %s: %w", vault, err)
	}
	return index.Open(ctx, dbPath)
}

// writeVault writes files to a new vault folder of the test.
func writeVault(t *testing.T, files map[string]string) string {
	t.Helper()
	vault := filepath.Join(t.TempDir(), "vault")
	if err := writeFiles(vault, files); err != nil {
		t.Fatal(err)
	}
	return vault
}

// indexVault indexes a vault folder with the bag-of-words embedder and returns
// an Env over it.
func indexVault(t *testing.T, vault string) *stages.Env {
	t.Helper()
	db, err := openIndex(context.Background(), fakeBow, vault, filepath.Join(t.TempDir(), "vault.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &stages.Env{DB: db, Models: fakeModels{}, Passages: stages.NewVectorCache(1000)}
}

func buildEnv(t *testing.T, files map[string]string) *stages.Env {
	t.Helper()
	return indexVault(t, writeVault(t, files))
}

// config loads a configuration of the repository by name.
func config(t *testing.T, name string) *pipeline.Config {
	t.Helper()
	cfg, err := pipeline.Find(repoRoot, name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// inline parses a configuration written in the test.
func inline(t *testing.T, yaml string) *pipeline.Config {
	t.Helper()
	cfg, err := pipeline.Parse("inline.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func paths(res *pipeline.Result) []string {
	out := make([]string, len(res.Notes))
	for i, n := range res.Notes {
		out[i] = n.Path
	}
	return out
}

// stageStep returns what the named stage did.
func stageStep(t *testing.T, res *pipeline.Result, stage string) pipeline.StageInfo {
	t.Helper()
	for _, s := range res.Stages {
		if s.Stage == stage {
			return s
		}
	}
	t.Fatalf("no %s stage in %+v", stage, res.Stages)
	return pipeline.StageInfo{}
}

// stageInfo returns the named stage's line for people.
func stageInfo(t *testing.T, res *pipeline.Result, stage string) string {
	t.Helper()
	return stageStep(t, res, stage).Info
}

// stageOutcome returns how the named stage's scope search ended.
func stageOutcome(t *testing.T, res *pipeline.Result, stage string) stages.Outcome {
	t.Helper()
	return stageStep(t, res, stage).Outcome
}
