package eval

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/pipeline"
)

func TestParseExpansionDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "demo.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value, want string // want: "" accepted, else a part of the error
	}{
		{"vault-language=" + dir, ""},
		{"v2=" + dir, ""},
		{dir, "want NAME=DIR"},
		{"=" + dir, "want NAME=DIR"},
		{"vault-language=", "want NAME=DIR"},
		{"Vault=" + dir, "lower-case letters"},
		{"vault language=" + dir, "lower-case letters"},
		{"a+b=" + dir, "lower-case letters"},
		{"-x=" + dir, "lower-case letters"},
		{"client=" + dir, "built-in variant"},
		{"echo=" + dir, "built-in variant"},
		{"mismatched=" + dir, "built-in variant"},
		{"x=" + filepath.Join(dir, "missing"), "no such file"},
		{"x=" + file, "is not a folder"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			got, err := ParseExpansionDir(tc.value)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
				name, d, _ := strings.Cut(tc.value, "=")
				if got.Name != name || got.Dir != d {
					t.Errorf("read as %+v", got)
				}
			case err == nil:
				t.Fatalf("accepted as %+v, want an error with %q", got, tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
	// As a flag, a name may be given once.
	var dirs ExpansionDirs
	if err := dirs.Set("a=" + dir); err != nil {
		t.Fatal(err)
	}
	if err := dirs.Set("a=" + dir); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a repeated name: %v", err)
	}
	if err := dirs.Set("b=" + dir); err != nil || len(dirs) != 2 || dirs.String() != "a="+dir+",b="+dir {
		t.Errorf("two sets: %v, %q", err, dirs.String())
	}
}

// writeExpansions writes an expansions file for the queries, each query's
// keywords and answer from text(query).
func writeExpansions(t *testing.T, path string, qs []Query, text func(Query) string) {
	t.Helper()
	f := expansionsFile{Description: "test", Queries: map[string]Expansion{}}
	for _, q := range qs {
		f.Queries[q.ID] = Expansion{Keywords: text(q), Answer: text(q)}
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

// bestNoteWords is an oracle's expansion: the words of the file name of the
// query's best judged note, which the keyword branch finds by its title.
func bestNoteWords(q Query) string {
	best, grade := "", 0
	for _, p := range slices.Sorted(maps.Keys(q.Relevant)) {
		if q.Relevant[p] > grade {
			best, grade = p, q.Relevant[p]
		}
	}
	return strings.NewReplacer("-", " ", "_", " ").Replace(strings.TrimSuffix(filepath.Base(best), ".md"))
}

// TestExpansionSetRows runs a further expansion set end to end with the
// bag-of-words embedder: the dataset with a file in the set's folder gets a
// row per configuration that reads the client's text, run with that file's
// expansions and split by kind; the dataset without one gets none; the
// baseline records the rows, reads them back unchanged, and the gate names
// them when a baseline lacks them.
func TestExpansionSetRows(t *testing.T) {
	ctx := context.Background()
	demo, tiny, work := demoAndTiny(t)
	question := func(q Query) string { return q.Text }
	setDir := filepath.Join(t.TempDir(), "oracle")
	writeExpansions(t, filepath.Join(setDir, "demo.json"), demo.Queries, bestNoteWords)
	dirs := []ExpansionDir{{Name: "oracle", Dir: setDir}}
	for _, ds := range []*Dataset{demo, tiny} {
		ds.Expansions = map[string]Expansion{}
		for _, q := range ds.Queries {
			ds.Expansions[q.ID] = Expansion{Keywords: question(q), Answer: question(q)}
		}
		if err := LoadExpansionSets(ds, dirs); err != nil {
			t.Fatal(err)
		}
	}
	if len(demo.ExpansionSets) != 1 || demo.ExpansionSets[0].Name != "oracle" || len(tiny.ExpansionSets) != 0 {
		t.Fatalf("sets loaded: demo %d, tiny %d; want 1 and 0", len(demo.ExpansionSets), len(tiny.ExpansionSets))
	}
	var cfgs []*pipeline.Config
	for _, name := range []string{"shipping", "hybrid"} {
		c, err := pipeline.Find(repoRoot, name)
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, c)
	}
	opts := Options{Configs: cfgs, WorkDir: work, IndexWith: stagetest.Embedder(), Models: stagetest.Models{}}
	names := func(r *DatasetRun) []string {
		var out []string
		for _, c := range r.Configs {
			out = append(out, c.Name)
		}
		return out
	}

	demoRun, err := Run(ctx, demo, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"shipping", "shipping +client", "shipping +echo", "shipping +mismatched", "shipping +oracle", "hybrid"}
	if got := names(demoRun); !slices.Equal(got, want) {
		t.Fatalf("demo rows %q, want %q", got, want)
	}
	rows := map[string]*ConfigRun{}
	for _, c := range demoRun.Configs {
		rows[c.Name] = c
	}
	oracle := rows["shipping +oracle"]
	if oracle.Config != "shipping" || oracle.Variant != "oracle" {
		t.Errorf("the set's row is configuration %q, variant %q", oracle.Config, oracle.Variant)
	}
	// The oracle names the answering note: its row must beat the question
	// alone, or the set's texts never reached the pipeline.
	if plain := rows["shipping"]; oracle.Mean.NDCG <= plain.Mean.NDCG {
		t.Errorf("shipping +oracle nDCG@10 %.4f, not above shipping's %.4f", oracle.Mean.NDCG, plain.Mean.NDCG)
	}
	if _, ok := oracle.ByKind["paraphrase"]; !ok {
		t.Errorf("the set's row has no split by kind: %v", oracle.ByKind)
	}
	var md strings.Builder
	if err := MarkdownTables(&md, demoRun, "shipping"); err != nil {
		t.Fatal(err)
	}
	// squeeze: the cells without the padding that aligns the columns.
	for _, s := range []string{"| +oracle | Δ vs +client | p |", "paraphrase +oracle"} {
		if !strings.Contains(squeeze(md.String()), squeeze(s)) {
			t.Errorf("the tables lack %q:\n%s", s, md.String())
		}
	}

	tinyRun, err := Run(ctx, tiny, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(tinyRun), []string{"shipping", "shipping +client", "shipping +echo", "shipping +mismatched", "hybrid"}; !slices.Equal(got, want) {
		t.Errorf("tiny, with no file in the set's folder: rows %q, want %q", got, want)
	}

	// A variant the dataset has no expansions for is refused, not run as the
	// plain configuration under its name.
	o := opts
	o.Variants = []string{"oracle"}
	if _, err := Run(ctx, tiny, o); err == nil || !strings.Contains(err.Error(), `no client expansions for the variant "oracle"`) {
		t.Errorf("tiny run with the oracle variant: %v", err)
	}

	// The baseline records the rows like the built-in variants and reads
	// them back unchanged.
	b := BaselineOf(demoRun)
	var rec *BaselineConfig
	for i := range b.Configs {
		if b.Configs[i].Name == "shipping +oracle" {
			rec = &b.Configs[i]
		}
	}
	if rec == nil || rec.Status != "ok" || rec.Metrics == nil || len(rec.NDCG) != len(demo.Queries) || len(rec.ByKind) == 0 {
		t.Fatalf("the baseline's shipping +oracle: %+v", rec)
	}
	path := BaselinePath(t.TempDir(), "demo")
	if err := WriteBaseline(path, b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(back, b); d.Failed() || len(d.Flips) > 0 {
		t.Errorf("the baseline read back differs: %q %q", d.Changes, d.Flips)
	}
	// A baseline recorded without the set fails the gate, naming the row.
	without := b
	without.Configs = slices.DeleteFunc(slices.Clone(b.Configs), func(c BaselineConfig) bool { return c.Name == "shipping +oracle" })
	if d := Diff(without, b); !d.Failed() || !strings.Contains(strings.Join(d.Changes, "\n"), "shipping +oracle: new configuration") {
		t.Errorf("a baseline without the set's rows: %q", d.Changes)
	}
	if d := Diff(b, without); !strings.Contains(strings.Join(d.Changes, "\n"), "shipping +oracle: in the baseline but not run") {
		t.Errorf("a run without the set's rows: %q", d.Changes)
	}
}

// TestLoadExpansionSetsChecksTheFile: a set's file is held to the same
// checks as the dataset's own expansions, and the error names the set.
func TestLoadExpansionSetsChecksTheFile(t *testing.T) {
	demo, err := LoadDemo(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeExpansions(t, filepath.Join(dir, "demo.json"), demo.Queries[1:], func(q Query) string { return q.Text })
	err = LoadExpansionSets(demo, []ExpansionDir{{Name: "short", Dir: dir}})
	if err == nil || !strings.Contains(err.Error(), "expansion set short") || !strings.Contains(err.Error(), "no expansion for query "+demo.Queries[0].ID) {
		t.Errorf("a set missing a query: %v", err)
	}
}
