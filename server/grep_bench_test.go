package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/gen"
	"github.com/vault-rag/vault-rag/internal/vault"
)

// BenchmarkGrep times vault_grep's search (runGrep: reading the notes from
// disk and matching them) on generated vaults of 3,000 and 30,000 notes,
// without the index: the notes are those the scanner lists, as the index's
// would be. The vaults are written once under $VAULT_RAG_GREP_BENCH (default:
// the system's temporary folder) and kept for the next run.
//
//	go test -tags sqlite_fts5 ./server -run '^$' -bench BenchmarkGrep -benchtime 5x
func BenchmarkGrep(b *testing.B) {
	base := os.Getenv("VAULT_RAG_GREP_BENCH")
	if base == "" {
		base = os.TempDir()
	}
	searches := []struct {
		name          string
		pattern       string
		regex, cs, fo bool
	}{
		{"literal-common", "the", false, false, false},     // in nearly every note
		{"literal-rare", "wal fsync", false, false, false}, // a phrase of a few notes
		{"literal-absent", "zqxjv", false, false, false},   // no match: a pure scan
		{"literal-case", "The", false, true, false},
		{"regex-literal", `lease (renewal|expiry)`, true, false, false},
		{"regex-no-literal", `\b[A-Z]{3,}-\d+\b`, true, true, false},
		{"files-only-common", "the", false, false, true},
	}
	for _, n := range []int{3000, 30000} {
		dir := filepath.Join(base, fmt.Sprintf("vault-rag-grep-bench-%d", n))
		if _, err := os.Stat(filepath.Join(dir, ".done")); err != nil {
			os.RemoveAll(dir)
			if _, err := gen.Generate(context.Background(), dir, gen.Options{Notes: n, Seed: 1}); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		root, err := filepath.EvalSymlinks(dir)
		if err != nil {
			b.Fatal(err)
		}
		var notes []grepNote
		if err := vault.Walk(context.Background(), root, vault.ScanOptions{}, func(rel, _ string) {
			notes = append(notes, grepNote{path: rel})
		}); err != nil {
			b.Fatal(err)
		}
		slices.SortFunc(notes, func(a, b grepNote) int {
			if a.path < b.path {
				return -1
			}
			return 1
		})
		for _, s := range searches {
			b.Run(fmt.Sprintf("notes=%d/%s", len(notes), s.name), func(b *testing.B) {
				m, err := newGrepMatcher(s.pattern, s.regex, s.cs)
				if err != nil {
					b.Fatal(err)
				}
				r := grepRequest{m: m, sort: grepSortPath, limit: DefaultGrepLimit, filesOnly: s.fo}
				if s.fo {
					r.limit = DefaultGrepFilesLimit
				}
				var out GrepResult
				for b.Loop() {
					if out, err = runGrep(context.Background(), root, notes, r, time.Now().Add(time.Minute)); err != nil {
						b.Fatal(err)
					}
				}
				if !out.Complete || out.Searched != len(notes) {
					b.Fatalf("incomplete: %+v", out)
				}
				b.ReportMetric(float64(out.Matches), "matches")
				b.ReportMetric(float64(out.Notes), "notes-matched")
			})
		}
	}
}
