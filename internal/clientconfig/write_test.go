package clientconfig

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Write says what it did, which is all `connect --write` words: the file it
// wrote (the one a symlink names), whether it created it, the backup of the
// old content, whether it replaced an entry; a file it cannot merge into is
// a *MergeError naming it, with nothing written.
func TestWrite(t *testing.T) {
	c, _ := Lookup("cursor")
	s := Server{Command: "/bin/vault-rag", Args: []string{"serve"}, Env: map[string]string{}}
	// The folder by its real path, which Write names a file by.
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "sub", "mcp.json")

	w, err := Write(c, file, "vault-rag", s)
	if err != nil || w != (Written{File: file, Created: true}) {
		t.Fatalf("a missing file: %+v, %v", w, err)
	}
	first, _ := os.ReadFile(file)

	w, err = Write(c, file, "vault-rag", s)
	if err != nil || w.File != file || w.Created || !w.Replaced || w.Backup == "" {
		t.Fatalf("the same name again: %+v, %v", w, err)
	}
	if b, _ := os.ReadFile(w.Backup); string(b) != string(first) {
		t.Errorf("the backup holds %q, want the old content %q", b, first)
	}

	w, err = Write(c, file, "other", s)
	if err != nil || w.Created || w.Replaced || w.Backup == "" {
		t.Fatalf("another name: %+v, %v", w, err)
	}

	if runtime.GOOS != "windows" {
		link := filepath.Join(dir, "link.json")
		if err := os.Symlink(file, link); err != nil {
			t.Fatal(err)
		}
		if w, err = Write(c, link, "vault-rag", s); err != nil || w.File != file {
			t.Errorf("through a symlink: %+v, %v; want the file it names, %s", w, err, file)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the symlink was replaced: %v", err)
		}
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("[]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err = Write(c, bad, "vault-rag", s)
	var refused *MergeError
	if !errors.As(err, &refused) || refused.File != bad || w.Backup != "" {
		t.Errorf("an array: %+v, %v; want a *MergeError naming %s and no backup", w, err, bad)
	}
}

// Two backups in the same second do not overwrite each other: the second
// takes -2.
func TestWriteBackupSameSecond(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mcp.json")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, err := writeBackup(file, []byte("one"), 0o600, now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := writeBackup(file, []byte("two"), 0o600, now)
	if err != nil {
		t.Fatal(err)
	}
	if a != file+".bak-20260102-030405" || b != a+"-2" {
		t.Errorf("backups %s and %s, want %s and its -2", a, b, file+".bak-20260102-030405")
	}
	if got, _ := os.ReadFile(a); string(got) != "one" {
		t.Errorf("the first backup holds %q", got)
	}
}
