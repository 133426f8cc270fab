package vaultfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTreeDigest(t *testing.T) {
	src := t.TempDir()
	mtime := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for rel, content := range map[string]string{"a.md": "a", "sub/b.md": "b"} {
		p := filepath.Join(src, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.md", filepath.Join(src, "link.md")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if err := CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	before, err := Digest(dst)
	if err != nil {
		t.Fatal(err)
	}
	if target := before["link.md"].Link; target != "a.md" {
		t.Errorf("the copy's link points at %q", target)
	}
	if got := before["sub/b.md"].MTime; got != mtime.UnixNano() {
		t.Errorf("the copy's sub/b.md has time %d, want the source's %d", got, mtime.UnixNano())
	}
	if err := os.WriteFile(filepath.Join(dst, "sub", "b.md"), []byte("B"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "new.md"), []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}
	after, err := Digest(dst)
	if err != nil {
		t.Fatal(err)
	}
	diffs := Diff(before, after, "sub/b.md")
	if len(diffs) != 2 || !strings.HasPrefix(diffs[0], ".: changed") || diffs[1] != "new.md: added" {
		t.Errorf("diffs skipping the changed note: %q; want the root folder changed and new.md added", diffs)
	}
	if d := Diff(before, after, ""); len(d) != 3 {
		t.Errorf("diffs: %q, want 3", d)
	}
}
