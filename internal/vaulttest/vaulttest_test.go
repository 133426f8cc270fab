package vaulttest

import (
	"testing"
	"time"
)

// WriteTree writes every file with the time given, and MustDigest sees them.
func TestWriteTree(t *testing.T) {
	root := t.TempDir()
	mtime := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	WriteTree(t, root, map[string]string{"a.md": "a", "sub/b.md": "bb"}, mtime)
	d := MustDigest(t, root)
	for rel, size := range map[string]int64{"a.md": 1, "sub/b.md": 2} {
		e, ok := d[rel]
		if !ok {
			t.Errorf("%s not written", rel)
			continue
		}
		if e.Size != size || e.MTime != mtime.UnixNano() {
			t.Errorf("%s: size %d, time %d; want %d, %d", rel, e.Size, e.MTime, size, mtime.UnixNano())
		}
	}
}
