package main

import (
	"encoding/json"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/index"
)

// smallVault copies two notes of the demo vault: enough to search, quick to
// index.
func smallVault(t *testing.T, dst string) string {
	t.Helper()
	for _, rel := range []string{
		"sessions/orchard/2025-11-18-lease-expiry-storm.md",
		"sessions/orchard/2024-08-27-lease-renewal-bug-postmortem.md",
	} {
		to := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := vaultfs.CopyFile(filepath.Join(repoRoot, "vault", filepath.FromSlash(rel)), to, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestCorruptIndex damages the index file in several ways and checks that
// search refuses it with a message that says to reindex (no panic, no raw
// SQLite text alone), that reindex rebuilds it, and that reindex
// --incremental does too, saying it fell back to a full build.
func TestCorruptIndex(t *testing.T) {
	binary(t)
	work := t.TempDir()
	vault := smallVault(t, filepath.Join(work, "vault"))
	good := filepath.Join(work, "good.db")
	mustRun(t, work, vault, good, "reindex")
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	wantFP := openFingerprint(t, good)

	garbage := make([]byte, len(raw))
	for i := range garbage {
		garbage[i] = byte(i*7 + i/251)
	}
	// Each damage is repaired by one kind of reindex (both kinds each
	// time would double the test's time for little).
	// The search reads what the damage hit: the second half of a first
	// build's file holds the vectors, added after the keyword index, so a
	// keyword search there reads sound pages and answers rightly.
	damage := []struct {
		name   string
		data   []byte
		mode   string // the reindex that repairs it
		config string // the search that reads the damaged pages
	}{
		{"truncated to half", raw[:len(raw)/2], "incremental", "keyword"},
		{"truncated to the header", raw[:100], "full", "keyword"},
		{"garbage", garbage, "incremental", "keyword"},
		{"empty file", nil, "full", "keyword"},
		{"zeroed second half", append(append([]byte{}, raw[:len(raw)/2]...), make([]byte, len(raw)-len(raw)/2)...), "incremental", "vector"},
		{"not SQLite", []byte("# this is a markdown note, not an index\n"), "full", "keyword"},
	}
	for _, dmg := range damage {
		t.Run(dmg.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "vault.db")
			if err := os.WriteFile(db, dmg.data, 0o644); err != nil {
				t.Fatal(err)
			}
			r := run(t, work, vault, db, "search", "--root", repoRoot, "--config", dmg.config, "lease")
			if r.code == 0 {
				t.Fatalf("search on a damaged index succeeded:\n%s", r)
			}
			if !strings.Contains(r.stderr, "vault-rag reindex") {
				t.Errorf("search on a damaged index does not say to reindex:\n%s", r)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("search on a damaged index: want one line of error, got:\n%s", r.stderr)
			}

			args := []string{"reindex", "--json"}
			if dmg.mode == "incremental" {
				args = append(args, "--incremental")
			}
			r = mustRun(t, work, vault, db, args...)
			var rep index.Report
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("reindex --json: %v\n%s", err, r)
			}
			if rep.Mode != "full" || rep.Notes != 2 {
				t.Errorf("%s reindex of a damaged index: mode %q, %d notes; want a full build of 2", dmg.mode, rep.Mode, rep.Notes)
			}
			if dmg.mode == "incremental" && rep.Fallback == "" {
				t.Errorf("reindex --incremental rebuilt a damaged index without saying why: %+v", rep)
			}
			if fp := openFingerprint(t, db); fp != wantFP {
				t.Errorf("rebuilt index fingerprint %s, want %s", fp, wantFP)
			}
			r = mustRun(t, work, vault, db, "search", "--root", repoRoot, "--config", "keyword", "lease")
			if !strings.Contains(r.stdout, "lease") {
				t.Errorf("search after the rebuild:\n%s", r)
			}
		})
	}
}
