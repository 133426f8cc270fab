package index

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// TestHostileVault: a generated vault of ordinary notes beside a binary
// ".md", a 20 MB note, invalid UTF-8, malformed YAML, a billion-laughs alias
// bomb, a 1 MB frontmatter value, 60 levels of folders, symlinks in and out
// of the vault (file and folder) and control characters in names builds,
// full and then incremental: every good note is searchable, every bad one is
// in skipped or warnings with its reason, nothing refused reaches the model,
// and the vault is unaltered, byte for byte.
func TestHostileVault(t *testing.T) {
	dir := t.TempDir()
	vaultDir, outside := filepath.Join(dir, "vault"), filepath.Join(dir, "outside")
	h := vaulttest.WriteHostile(t, vaultDir, outside, testTime)
	before := vaulttest.MustDigest(t, vaultDir)
	dbPath := filepath.Join(t.TempDir(), "vault.db")
	emb := newFake()
	for _, incremental := range []bool{false, true} {
		rep, err := Build(context.Background(), emb, BuildOptions{VaultPath: vaultDir, DBPath: dbPath, Incremental: incremental})
		if err != nil {
			t.Fatalf("Build(incremental=%v): %v", incremental, err)
		}
		got := map[string]string{}
		for _, s := range rep.Skipped {
			got[s.Path] = "skipped: " + s.Reason
		}
		for _, w := range rep.Warnings {
			got[w.Path] = "warning: " + w.Reason
		}
		for p, w := range h.Bad {
			if incremental && strings.HasPrefix(w, "warning: ") {
				continue // an unchanged note's warnings are the full build's
			}
			if g, ok := got[p]; !ok || !strings.HasPrefix(g, w) {
				t.Errorf("incremental=%v: %s: %q, want %q…", incremental, p, g, w)
			}
		}
		for p, g := range got {
			if _, ok := h.Bad[p]; !ok {
				t.Errorf("incremental=%v: %s: unexpected %q", incremental, p, g)
			}
		}
		if testing.Verbose() {
			for p, g := range got {
				t.Logf("%s: %.200s", p, g)
			}
		}
	}
	d := open(t, dbPath)
	for p, w := range h.Good {
		want := []string{p}
		for link, target := range h.Linked {
			if target == p {
				want = append(want, link)
			}
		}
		got := keywordPaths(t, d, `"`+w+`"`, Filter{})
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("keyword search for %s's word %s: %q, want %q", p, w, got, want)
		}
	}
	embedded := strings.Join(emb.texts(), "\n")
	for p, w := range h.Good {
		if !strings.Contains(embedded, w) && !slices.Contains(h.Unembedded, w) {
			t.Errorf("%s (%s) never reached the model", p, w)
		}
	}
	for _, w := range h.Unembedded {
		if strings.Contains(embedded, w) {
			t.Errorf("the model was given %s, of a note too long to embed", w)
		}
	}
	for _, w := range h.Unseen {
		if got := keywordPaths(t, d, `"`+w+`"`, Filter{}); len(got) != 0 {
			t.Errorf("keyword search for %s, of a refused file: %q", w, got)
		}
		for _, text := range emb.texts() {
			if strings.Contains(text, w) {
				t.Errorf("the model was given %s, of a refused file: %.100q", w, text)
			}
		}
	}
	if diff := vaultfs.Diff(before, vaulttest.MustDigest(t, vaultDir), ""); diff != nil {
		t.Errorf("the vault changed: %v", diff)
	}
}
