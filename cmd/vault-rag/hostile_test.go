package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/mcptest"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// TestHostileVaultCLI: the generated hostile vault (internal/vaulttest),
// indexed by `vault-rag reindex` with the real embedder and then served over
// stdio and reindexed with vault_reindex: every good note is found by its
// word, every bad file is in skipped or warnings with its reason, nothing
// refused is found, and the vault is unaltered, byte for byte. That nothing
// refused reaches the model is index/hostile_vault_test.go's, with an
// embedder that counts texts.
func TestHostileVaultCLI(t *testing.T) {
	dir := t.TempDir()
	vault, outside := filepath.Join(dir, "vault"), filepath.Join(dir, "outside")
	h := vaulttest.WriteHostile(t, vault, outside, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	before := vaulttest.MustDigest(t, vault)
	db := filepath.Join(dir, "index", "vault.db")

	r := run(t, dir, vault, db, "reindex", "--json")
	if r.code != 0 {
		t.Fatalf("reindex: %s", r)
	}
	var rep index.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("reindex --json: %v\n%s", err, r)
	}
	got := map[string]string{}
	for _, s := range rep.Skipped {
		got[s.Path] = "skipped: " + s.Reason
	}
	for _, w := range rep.Warnings {
		got[w.Path] = "warning: " + w.Reason
	}
	for p, w := range h.Bad {
		if g, ok := got[p]; !ok || !strings.HasPrefix(g, w) {
			t.Errorf("reindex: %q: %q, want %q…", p, g, w)
		}
	}
	for p, g := range got {
		if _, ok := h.Bad[p]; !ok {
			t.Errorf("reindex: %q: unexpected %q", p, g)
		}
	}

	cmd := command(t, dir, vault, db, "serve", "--transport", "stdio", "--watch=false", "--tools", "all")
	cmd.Env = append(cmd.Env, "VAULT_RAG_ROOT="+repoRoot)
	srv := mcptest.StartStdio(t, cmd)
	c := srv.Client
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := mcptest.Initialize(ctx, c); err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, srv.Stderr())
	}
	callTool := func(name string, args map[string]any) string {
		t.Helper()
		text, isErr := srv.CallTool(ctx, t, name, args)
		if isErr {
			t.Fatalf("%s(%v): %s", name, args, text)
		}
		return text
	}
	var re struct {
		Skipped []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		} `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(callTool("vault_reindex", map[string]any{})), &re); err != nil {
		t.Fatal(err)
	}
	skipped := map[string]string{}
	for _, s := range re.Skipped {
		skipped[s.Path] = "skipped: " + s.Reason
	}
	for p, w := range h.Bad {
		if g := skipped[p]; strings.HasPrefix(w, "skipped: ") && !strings.HasPrefix(g, w) {
			t.Errorf("vault_reindex: %q: %q, want %q…", p, g, w)
		}
	}
	search := func(word string) []string {
		t.Helper()
		var res struct {
			Notes []struct {
				Path string `json:"path"`
			} `json:"notes"`
		}
		if err := json.Unmarshal([]byte(callTool("vault_search", map[string]any{"query": word, "config": "keyword"})), &res); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range res.Notes {
			out = append(out, n.Path)
		}
		slices.Sort(out)
		return out
	}
	for p, w := range h.Good {
		want := []string{p}
		for link, target := range h.Linked {
			if target == p {
				want = append(want, link)
			}
		}
		slices.Sort(want)
		if got := search(w); !slices.Equal(got, want) {
			t.Errorf("vault_search %s (of %s): %q, want %q", w, p, got, want)
		}
	}
	for _, w := range h.Unseen {
		if got := search(w); len(got) != 0 {
			t.Errorf("vault_search %s, of a refused file: %q", w, got)
		}
	}
	if err := srv.Close(); err != nil {
		t.Errorf("serve: %v", err)
	}
	if diff := vaultfs.Diff(before, vaulttest.MustDigest(t, vault), ""); diff != nil {
		t.Errorf("the vault changed: %v", diff)
	}
}
