// Package evaltest holds the fixtures eval's packages test with: a small
// hand-made run, a tiny BEIR collection beside the demo vault, and client
// expansion files.
package evaltest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
)

// SampleRun is a two-configuration run over three queries.
func SampleRun() *eval.DatasetRun {
	ds := &eval.Dataset{Name: "tiny", Queries: []eval.Query{
		{ID: "a", Kind: "vocabulary", Relevant: map[string]int{"x.md": 1}},
		{ID: "b", Kind: "paraphrase", Relevant: map[string]int{"y.md": 2}},
		{ID: "c", Kind: "paraphrase", Relevant: map[string]int{"z.md": 1}},
	}}
	mk := func(name string, ranked [][]string) *eval.ConfigRun {
		cr := &eval.ConfigRun{Name: name}
		var all []eval.Scores
		byKind := map[string][]eval.Scores{}
		for i, q := range ds.Queries {
			qr := eval.QueryRun{ID: q.ID, Kind: q.Kind, Ranked: ranked[i], Score: eval.Score(ranked[i], q.Relevant)}
			for r, p := range ranked[i] {
				if q.Relevant[p] > 0 {
					qr.RelevantRanks = append(qr.RelevantRanks, r+1)
				}
			}
			cr.Queries = append(cr.Queries, qr)
			all = append(all, qr.Score)
			byKind[q.Kind] = append(byKind[q.Kind], qr.Score)
		}
		cr.Mean = eval.Mean(all)
		cr.ByKind = map[string]eval.Scores{}
		for k, v := range byKind {
			cr.ByKind[k] = eval.Mean(v)
		}
		return cr
	}
	return &eval.DatasetRun{Dataset: ds, Stamp: "stamp-one-0123456789", Notes: 3, Chunks: 4, Configs: []*eval.ConfigRun{
		mk("vector", [][]string{{"x.md", "y.md"}, {"y.md"}, {"q.md", "z.md"}}),
		mk("keyword", [][]string{{"y.md", "x.md"}, {"z.md", "y.md"}, {"z.md"}}),
		{Name: "rerank", Skipped: "model not installed: cross-encoder"},
	}}
}

// TinyBEIR writes a six-document BEIR collection with five judged queries.
func TinyBEIR(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		t.Fatal(err)
	}
	docs := []string{
		`{"_id": "1", "title": "Wing flutter", "text": "flutter of a swept wing at transonic speed"}`,
		`{"_id": "2", "title": "Boundary layer", "text": "laminar boundary layer transition on a flat plate"}`,
		`{"_id": "3", "title": "Heat transfer", "text": "heat transfer to a blunt body in hypersonic flow"}`,
		`{"_id": "4", "title": "Shock waves", "text": "shock wave interaction with a boundary layer"}`,
		`{"_id": "5", "title": "Buckling", "text": "buckling of thin cylindrical shells under pressure"}`,
		`{"_id": "6", "title": "Panel flutter", "text": "panel flutter in supersonic flow"}`,
	}
	queries := []string{
		`{"_id": "a", "text": "flutter of wings"}`,
		`{"_id": "b", "text": "boundary layer transition"}`,
		`{"_id": "c", "text": "hypersonic heat transfer"}`,
		`{"_id": "d", "text": "shell buckling"}`,
		`{"_id": "e", "text": "shock boundary layer interaction"}`,
	}
	qrels := "query-id\tcorpus-id\tscore\na\t1\t2\na\t6\t1\nb\t2\t1\nc\t3\t1\nd\t5\t1\ne\t4\t2\ne\t2\t1\n"
	for name, content := range map[string]string{
		"corpus.jsonl":   strings.Join(docs, "\n") + "\n",
		"queries.jsonl":  strings.Join(queries, "\n") + "\n",
		"qrels/test.tsv": qrels,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// DemoAndTiny loads the demo vault (root/vault) and a tiny BEIR collection, and returns
// the work folder the collection was laid out in (the runs' WorkDir).
func DemoAndTiny(t *testing.T, root string) (demo, tiny *eval.Dataset, work string) {
	t.Helper()
	demo, err := eval.LoadDemo(root)
	if err != nil {
		t.Fatal(err)
	}
	work = t.TempDir()
	tiny, err = eval.LoadBEIR(TinyBEIR(t), filepath.Join(work, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	return demo, tiny, work
}

// WriteExpansions writes a client expansions file (the shape
// eval.LoadExpansions reads) for the queries, each query's keywords and
// answer from text(query).
func WriteExpansions(t *testing.T, path string, qs []eval.Query, text func(eval.Query) string) {
	t.Helper()
	f := struct {
		Description string                    `json:"description"`
		Queries     map[string]eval.Expansion `json:"queries"`
	}{Description: "test", Queries: map[string]eval.Expansion{}}
	for _, q := range qs {
		f.Queries[q.ID] = eval.Expansion{Keywords: text(q), Answer: text(q)}
	}
	raw, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
