package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/vault-rag/vault-rag/models/bow"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeTree writes files (vault-relative slash paths → content) under root,
// creating folders as needed, and sets every file's time to mtime so dates
// taken from the file time are reproducible.
func writeTree(t *testing.T, root string, files map[string]string, mtime time.Time) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
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
}

// treeDigest describes every entry under root (path, type, mode, size, mtime,
// content or link target) so a test can tell whether anything was written.
func treeDigest(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := fmt.Sprintf("%s %v %d %d", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		case fi.Mode().IsRegular():
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(raw)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// fakeEmbedder is a deterministic index.Embedder: a hashed, signed bag of
// words, L2-normalised, so texts sharing words are near each other. It
// records what it embedded and can fail after a number of calls.
type fakeEmbedder struct {
	name      string
	failAfter int // EmbedPassages fails on every call after this many; < 0 never

	mu       sync.Mutex
	calls    int
	embedded []string
}

func newFake() *fakeEmbedder { return &fakeEmbedder{name: "fake-bow", failAfter: -1} }

func (f *fakeEmbedder) Name() string { return f.name }
func (f *fakeEmbedder) Dim() int     { return 384 }

func (f *fakeEmbedder) CountTokens(text string) int { return len(strings.Fields(text)) }

func (f *fakeEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failAfter >= 0 && f.calls > f.failAfter {
		return nil, fmt.Errorf("fake embedder: failing call %d", f.calls)
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = bow.Vector(t)
		f.embedded = append(f.embedded, t)
	}
	return out, nil
}

// reset forgets what was embedded so far.
func (f *fakeEmbedder) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.embedded = 0, nil
}

func (f *fakeEmbedder) texts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.embedded...)
}
