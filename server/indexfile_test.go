package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vaultfs"
)

// TestHealthNoticesIndexFile: the server stats its index file at every
// request. Deleted (or moved away) under a running server, /health says
// error with the reason, and so do the tools, until a file is back at the
// path; a file renamed over it is opened and served; the same file moved
// away and back is still the one open.
func TestHealthNoticesIndexFile(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, db string)
		status string
		index  string // a part of Health.Index
	}{
		{"untouched", func(*testing.T, string) {}, StatusOK, "ok"},
		{"deleted", func(t *testing.T, db string) { mustRemove(t, db) }, StatusError, "was deleted or moved away after it was opened"},
		{"moved away", func(t *testing.T, db string) { mustRename(t, db, db+".old") }, StatusError, "was deleted or moved away after it was opened"},
		{"moved away and back", func(t *testing.T, db string) { mustRename(t, db, db+".old"); mustRename(t, db+".old", db) }, StatusOK, "ok"},
		{"replaced by another file", func(t *testing.T, db string) {
			copyIndex(t, db+".new")
			mustRename(t, db+".new", db)
		}, StatusOK, "ok"},
		{"deleted, then a new file put there", func(t *testing.T, db string) {
			mustRemove(t, db)
			copyIndex(t, db)
		}, StatusOK, "ok"},
		{"replaced by something that is not an index", func(t *testing.T, db string) {
			if err := os.WriteFile(db+".new", []byte("not an index"), 0o644); err != nil {
				t.Fatal(err)
			}
			mustRename(t, db+".new", db)
		}, StatusError, "was replaced by another file after it was opened"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "vault.db")
			copyIndex(t, db)
			s := newModelFreeServer(t, func(o *Options) { o.DBPath = db })
			base := serveHTTP(t, s)
			if h := getHealth(t, base); h.Status != StatusOK || h.Index != "ok" {
				t.Fatalf("before: status %q, index %q", h.Status, h.Index)
			}
			tc.change(t, db)
			h := getHealth(t, base)
			if h.Status != tc.status || !strings.Contains(h.Index, tc.index) {
				t.Errorf("status %q, index %q; want %q, %q", h.Status, h.Index, tc.status, tc.index)
			}
			_, release, err := s.acquire(context.Background())
			if err == nil {
				release()
			}
			switch {
			case tc.status == StatusOK && (err != nil || h.Notes != fx.notes):
				t.Errorf("serving: %v, %d notes; want %d", err, h.Notes, fx.notes)
			case tc.status == StatusError && tc.index != "ok" && strings.Contains(tc.index, "deleted") && (err == nil || !strings.Contains(err.Error(), "vault_reindex")):
				t.Errorf("a request on a deleted index: %v, want the reason and the way out", err)
			}
		})
	}
}

func copyIndex(t *testing.T, to string) {
	t.Helper()
	if err := vaultfs.CopyFile(fx.db, to, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRemove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}
