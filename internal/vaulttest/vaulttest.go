// Package vaulttest holds the folder helpers of tests: writing a small vault,
// and taking a digest (internal/vaultfs) that fails the test when the tree
// cannot be read.
package vaulttest

import (
	"os"
	"path/filepath"
	"time"

	"github.com/vault-rag/vault-rag/internal/vaultfs"
)

// T is what the helpers need of a *testing.T.
type T interface {
	Helper()
	Fatal(args ...any)
}

// WriteFiles writes files (vault-relative slash paths → content) under
// root, creating folders as needed, and sets every file's time to mtime so
// dates taken from the file time are reproducible.
func WriteFiles(root string, files map[string]string, mtime time.Time) error {
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			return err
		}
	}
	return nil
}

// WriteTree is WriteFiles for a test: a file it cannot write fails the test.
func WriteTree(t T, root string, files map[string]string, mtime time.Time) {
	t.Helper()
	if err := WriteFiles(root, files, mtime); err != nil {
		t.Fatal(err)
	}
}

// MustDigest is vaultfs.Digest for a test: a tree it cannot read fails the test.
func MustDigest(t T, root string) vaultfs.Tree {
	t.Helper()
	d, err := vaultfs.Digest(root)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
