package index

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	vpkg "github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// A build leaves out what the vault's Obsidian settings and the exclude globs
// say, counts every skip by kind, and reports settings it could not use as
// warnings without failing; a later exclusion removes the notes it covers.
func TestBuildScope(t *testing.T) {
	vault := filepath.Join(t.TempDir(), "vault")
	dbPath := filepath.Join(t.TempDir(), "vault.db")
	vaulttest.WriteTree(t, vault, map[string]string{
		".obsidian/app.json": `{"userIgnoreFilters": ["Archive/", "/[/"]}`,
		"a.md":               "# A\nkept\n",
		"b.md":               "# B\nexcluded later\n",
		"Archive/x.md":       "# X\n",
		"drafts/d.md":        "# D\n",
		"empty.md":           "",
		".hidden/h.md":       "# H\n",
	}, testTime)
	before := vaulttest.MustDigest(t, vault)
	opts := BuildOptions{VaultPath: vault, DBPath: dbPath, Scan: vpkg.ScanOptions{Exclude: []string{"drafts/**", "[bad"}}}
	rep, err := Build(context.Background(), newFake(), opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if rep.Notes != 2 {
		t.Errorf("%d notes, want 2 (a.md, b.md)", rep.Notes)
	}
	want := map[string]int{
		"excluded in Obsidian's settings": 1,
		"excluded by VAULT_RAG_EXCLUDE":   1,
		"empty file":                      1,
		"hidden folder":                   2,
	}
	if !reflect.DeepEqual(rep.SkippedByKind, want) {
		t.Errorf("SkippedByKind = %v, want %v", rep.SkippedByKind, want)
	}
	var warned []string
	for _, w := range rep.Warnings {
		warned = append(warned, w.Path+": "+w.Kind)
	}
	wantWarned := []string{
		".obsidian/app.json: userIgnoreFilters regular expression does not compile (ignored)",
		"VAULT_RAG_EXCLUDE: exclude pattern does not parse (ignored)",
	}
	if !reflect.DeepEqual(warned, wantWarned) {
		t.Errorf("warnings %q, want %q", warned, wantWarned)
	}

	opts.Incremental = true
	opts.Scan.Exclude = append(opts.Scan.Exclude, "b.md")
	rep, err = Build(context.Background(), newFake(), opts)
	if err != nil {
		t.Fatalf("incremental Build: %v", err)
	}
	if rep.Notes != 1 || rep.Removed != 1 {
		t.Errorf("after excluding b.md: %d notes, %d removed; want 1 and 1", rep.Notes, rep.Removed)
	}
	if d := vaultfs.Diff(before, vaulttest.MustDigest(t, vault), ""); d != nil {
		t.Errorf("the builds changed the vault: %q", d)
	}
}
