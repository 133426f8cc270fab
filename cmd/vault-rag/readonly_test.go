package main

import (
	"context"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
)

// TestVaultNeverWritten runs every command that reads the vault or the eval
// root (reindex, reindex --incremental, search with a query and --demo,
// eval, eval --check, models) and checks that nothing under the root changed:
// no content, mode or modification time, no file added or removed. With
// --check, eval writes no baseline.
func TestVaultNeverWritten(t *testing.T) {
	d := demoIndex(t)
	// The full reindex ran when the shared demo index was built.
	if diff := vaultfs.Diff(d.before, d.after, ""); diff != nil {
		t.Errorf("reindex changed the root: %q", diff)
	}
	if !strings.Contains(d.reindex.stdout, "indexed 33 notes") {
		t.Errorf("reindex of the demo vault:\n%s", d.reindex)
	}

	work := t.TempDir()
	db := filepath.Join(work, "index", "vault.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vaultfs.CopyFile(d.db, db, 0o644); err != nil {
		t.Fatal(err)
	}

	// eval indexes the demo vault into VAULT_RAG_DATA/eval unless an index
	// stamped with the same files is there: give it the one just built.
	seedEvalIndex(t, d)
	// eval --check needs a baseline to compare with; write it before the
	// digest (writing it is --update's job).
	r := mustRun(t, d.root, "", "", "eval", "--root", d.root, "--dataset", "demo", "--config", "keyword", "--update")
	if !strings.Contains(r.stdout, "eval: wrote") {
		t.Fatalf("eval --update:\n%s", r)
	}

	before := vaulttest.MustDigest(t, d.root)
	baselinesBefore := vaulttest.MustDigest(t, filepath.Join(d.root, "baselines"))
	steps := []struct {
		name string
		args []string
		want string // in stdout
	}{
		{"reindex --incremental", []string{"reindex", "--incremental"}, "(incremental"},
		{"search with a query", []string{"search", "lease expiry storm"}, ".md"},
		{"search --demo", []string{"search", "--demo"}, "$ vault-rag search"},
		{"eval", []string{"eval", "--root", d.root, "--dataset", "demo", "--config", "keyword"}, "keyword"},
		{"eval --check", []string{"eval", "--root", d.root, "--dataset", "demo", "--config", "keyword", "--check"}, "eval --check: demo matches"},
		{"models", []string{"models"}, models.DefaultEmbedder + "  [embedder]  installed"},
	}
	for _, s := range steps {
		// Run from the root, as a user in their checkout would: search reads
		// configs/ there.
		r := mustRun(t, d.root, d.vault, db, s.args...)
		if !strings.Contains(r.stdout, s.want) {
			t.Errorf("%s: stdout lacks %q:\n%s", s.name, s.want, r)
		}
		if diff := vaultfs.Diff(before, vaulttest.MustDigest(t, d.root), ""); diff != nil {
			t.Fatalf("%s changed the root: %q", s.name, diff)
		}
	}
	if diff := vaultfs.Diff(baselinesBefore, vaulttest.MustDigest(t, filepath.Join(d.root, "baselines")), ""); diff != nil {
		t.Errorf("baselines changed: %q", diff)
	}
}

// seedEvalIndex puts the shared demo index where eval looks for its demo
// index, with the stamp of the demo vault's files, so eval need not index
// the vault again. (If the layout changes, eval builds its own: slower, not
// wrong.)
func seedEvalIndex(t *testing.T, d *demo) {
	t.Helper()
	files, _, err := vault.Scan(context.Background(), d.vault, vault.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataDir(t), "eval", "demo", models.DefaultEmbedder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vaultfs.CopyFile(d.db, filepath.Join(dir, "index.db"), 0o644); err != nil {
		t.Fatal(err)
	}
	stamp := index.VaultStamp(files, models.DefaultEmbedder)
	if err := os.WriteFile(filepath.Join(dir, "index.db.stamp"), []byte(stamp+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
