package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/models/bow"
)

// TestChooseEmbedder: the model asked for wins; else the index's; else, at
// the first index, the one for the vault's script.
func TestChooseEmbedder(t *testing.T) {
	ctx := context.Background()
	m, err := models.LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("VAULT_RAG_EMBEDDER", "")
	zh, en := t.TempDir(), t.TempDir()
	vaulttest.WriteTree(t, zh, map[string]string{"导入.md": "# 从印象笔记导入\n\n你可以从印象笔记导入笔记和附件。\n"}, time.Now())
	vaulttest.WriteTree(t, en, map[string]string{"lease.md": "# Leases\n\nA lease expires when it is not renewed.\n"}, time.Now())
	noIndex := filepath.Join(t.TempDir(), "vault.db")

	check := func(label, asked, vault, db, want, why string) {
		t.Helper()
		got, reason, _, err := chooseEmbedder(ctx, m, asked, vault, db)
		if err != nil || got != want || !strings.Contains(reason, why) {
			t.Errorf("%s: %s (%q, %v), want %s (%q)", label, got, reason, err, want, why)
		}
	}
	check("a Chinese vault's first index", "", zh, noIndex, "bge-small-zh-v1.5-q", "letters are Han")
	check("an English vault's first index", "", en, noIndex, models.DefaultEmbedder, "letters are Latin")
	check("asked for", "bge-small-en-v1.5", zh, noIndex, "bge-small-en-v1.5", "as asked")
	t.Setenv("VAULT_RAG_EMBEDDER", "bge-small-en-v1.5")
	check("VAULT_RAG_EMBEDDER", "", zh, noIndex, "bge-small-en-v1.5", "as asked")
	t.Setenv("VAULT_RAG_EMBEDDER", "")

	// An index built with a model keeps it, whatever the vault now holds.
	db := filepath.Join(t.TempDir(), "vault.db")
	if _, err := index.Build(ctx, bow.Embedder{ModelName: models.DefaultEmbedder}, index.BuildOptions{VaultPath: zh, DBPath: db}); err != nil {
		t.Fatal(err)
	}
	check("an existing index", "", zh, db, models.DefaultEmbedder, "the index's")
	// Another vault's index says nothing of this vault: its script decides.
	check("another vault's index", "", en, db, models.DefaultEmbedder, "letters are Latin")
	zh2 := t.TempDir()
	vaulttest.WriteTree(t, zh2, map[string]string{"导入.md": "# 从印象笔记导入\n\n你可以从印象笔记导入笔记和附件。\n"}, time.Now())
	check("another Chinese vault, pointed at that index", "", zh2, db, "bge-small-zh-v1.5-q", "letters are Han")

	if _, _, _, err := chooseEmbedder(ctx, m, "no-such-model", zh, noIndex); err == nil {
		t.Error("an unknown model was accepted")
	}
}
