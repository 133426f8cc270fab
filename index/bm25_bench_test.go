package index

import (
	"context"
	"os"
	"strings"
	"testing"
)

// BenchmarkKeywordIndex times the keyword index call on the postings and by
// FTS5 alone over an index named by VAULT_RAG_BENCH_INDEX (e.g. make bench's
// data/bench/gen-30000/index.db), with its notes' titles as queries:
//
//	VAULT_RAG_BENCH_INDEX=data/bench/gen-30000/index.db go test -tags=sqlite_fts5 -run '^$' -bench KeywordIndex ./index
func BenchmarkKeywordIndex(b *testing.B) {
	path := os.Getenv("VAULT_RAG_BENCH_INDEX")
	if path == "" {
		b.Skip("VAULT_RAG_BENCH_INDEX names no index")
	}
	ctx := context.Background()
	d, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	rows, err := d.sql.QueryContext(ctx, `SELECT title FROM notes ORDER BY id LIMIT 50`)
	if err != nil {
		b.Fatal(err)
	}
	var queries []string
	for rows.Next() {
		var t string
		rows.Scan(&t)
		var q []string
		for _, w := range strings.Fields(strings.ToLower(t)) {
			q = append(q, `"`+strings.Trim(w, `.,:;!?()"'`)+`"`)
		}
		queries = append(queries, strings.Join(q, " OR "))
	}
	rows.Close()
	for _, run := range []struct {
		name string
		f    func(string) ([]Hit, error)
	}{
		{"postings", func(q string) ([]Hit, error) { return d.Keyword(ctx, KeywordQuery{Match: q, Limit: 40}) }},
		{"fts5", func(q string) ([]Hit, error) {
			return d.Keyword(ctx, KeywordQuery{Match: q, Limit: 40, Engine: EngineFTS5})
		}},
	} {
		b.Run(run.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := run.f(queries[i%len(queries)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
