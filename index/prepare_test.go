package index

import (
	"context"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/gen"
	"github.com/vault-rag/vault-rag/internal/vault"
)

// wordIDs is a TokenEmbedder whose tokens are hashed words (a few per word,
// so long words count more), enough for the chunker to split by.
type wordIDs struct{ *fakeEmbedder }

func (wordIDs) Tokens(s string) []int32 {
	var out []int32
	for _, w := range strings.Fields(s) {
		h := fnv.New32a()
		h.Write([]byte(w))
		for k := 0; k <= len(w)/6; k++ {
			out = append(out, int32(h.Sum32()%30000)+int32(k))
		}
	}
	return out
}
func (w wordIDs) CountTokens(s string) int { return len(w.Tokens(s)) }
func (wordIDs) Window() int                { return 510 }
func (wordIDs) EmbedTokens(context.Context, [][]int32) ([][]float32, error) {
	return nil, errors.New("not used")
}

// TestPrepareSameOnEveryCoreCount: notes prepared on several goroutines come
// out in file order with the same chunks, ids, skips and warnings as on one.
func TestPrepareSameOnEveryCoreCount(t *testing.T) {
	dir := t.TempDir()
	if _, err := gen.Generate(t.Context(), dir, gen.Options{Notes: 400, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	// An empty note (skipped) and notes with warnings, among the others.
	for name, body := range map[string]string{"0-empty.md": "  \n", "m-bad.md": "---\ntitle: [unclosed\n---\nbody\n", "z-empty.md": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _, err := vault.Scan(t.Context(), dir, vault.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	emb := wordIDs{newFake()}
	run := func(procs int) ([]parsed, Report) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var rep Report
		ps, err := prepare(t.Context(), files, emb, 0, &rep)
		if err != nil {
			t.Fatal(err)
		}
		return ps, rep
	}
	one, oneRep := run(1)
	if len(one) != len(files)-2 || len(oneRep.Skipped) != 2 {
		t.Fatalf("one goroutine: %d notes, %d skipped of %d files", len(one), len(oneRep.Skipped), len(files))
	}
	if one[0].ids == nil {
		t.Fatal("no token ids kept")
	}
	for _, procs := range []int{2, 3, 8} {
		many, manyRep := run(procs)
		if !reflect.DeepEqual(one, many) {
			t.Errorf("GOMAXPROCS=%d: the prepared notes differ from one goroutine's", procs)
		}
		if !reflect.DeepEqual(oneRep, manyRep) {
			t.Errorf("GOMAXPROCS=%d: report %+v, one goroutine's %+v", procs, manyRep, oneRep)
		}
	}
}

// TestPrepareStopsWhenCancelled: a cancelled context ends preparing with its
// error, whatever the number of goroutines.
func TestPrepareStopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	if _, err := gen.Generate(t.Context(), dir, gen.Options{Notes: 50, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	files, _, err := vault.Scan(t.Context(), dir, vault.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 4} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			ctx, cancel := context.WithCancel(t.Context())
			n := 0
			err := prepareEach(ctx, files, wordIDs{newFake()}, 0, &Report{}, func(int, parsed, bool) error {
				if n++; n == 10 {
					cancel()
				}
				return nil
			})
			if !errors.Is(err, context.Canceled) || n != 10 {
				t.Errorf("GOMAXPROCS=%d: err %v after %d notes, want context.Canceled after 10", procs, err, n)
			}
		}()
	}
}
