package report

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/eval/gate"
	"github.com/vault-rag/vault-rag/internal/evaltest"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/pipeline"
)

// repoRoot holds configs/, eval/, vault/ and baselines/ (tests run in
// eval/report/).
const repoRoot = "../.."

func TestFrontier(t *testing.T) {
	pts := []TradeoffPoint{
		{"fast-poor", 1e6, 0.5},
		{"slow-good", 9e6, 0.8},
		{"dominated", 9e6, 0.6},     // as slow as slow-good, worse
		{"mid", 4e6, 0.7},           // on the frontier
		{"tie-a", 2e6, 0.6},         // on it
		{"tie-b", 2e6, 0.6},         // equal to tie-a: both on it
		{"slower-worse", 5e6, 0.65}, // mid is faster and better
	}
	want := []bool{true, true, false, true, true, true, false}
	if got := Frontier(pts); !reflect.DeepEqual(got, want) {
		t.Errorf("frontier %v, want %v", got, want)
	}
}

func TestWriteReportCharts(t *testing.T) {
	r := evaltest.SampleRun()
	for _, c := range r.Configs {
		for range c.Queries {
			c.Latency = append(c.Latency, 3e6)
		}
	}
	r.Configs[0].Name = "shipping"
	dir := t.TempDir()
	if err := WriteReport(dir, r, "shipping"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tiny-tradeoff.png", "tiny-delta-keyword.png", "tiny.md"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("report file %s: %v", f, err)
		}
	}
}

// bestNoteWords is an oracle's expansion: the words of the file name of the
// query's best judged note, which the keyword branch finds by its title.
func bestNoteWords(q eval.Query) string {
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
	demo, tiny, work := evaltest.DemoAndTiny(t, repoRoot)
	question := func(q eval.Query) string { return q.Text }
	setDir := filepath.Join(t.TempDir(), "oracle")
	evaltest.WriteExpansions(t, filepath.Join(setDir, "demo.json"), demo.Queries, bestNoteWords)
	dirs := []eval.ExpansionDir{{Name: "oracle", Dir: setDir}}
	for _, ds := range []*eval.Dataset{demo, tiny} {
		ds.Expansions = map[string]eval.Expansion{}
		for _, q := range ds.Queries {
			ds.Expansions[q.ID] = eval.Expansion{Keywords: question(q), Answer: question(q)}
		}
		if err := eval.LoadExpansionSets(ds, dirs); err != nil {
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
	opts := eval.Options{Configs: cfgs, WorkDir: work, IndexWith: stagetest.Embedder(), Models: stagetest.Models{}}
	names := func(r *eval.DatasetRun) []string {
		var out []string
		for _, c := range r.Configs {
			out = append(out, c.Name)
		}
		return out
	}

	demoRun, err := eval.Run(ctx, demo, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"shipping", "shipping +client", "shipping +echo", "shipping +mismatched", "shipping +oracle", "hybrid"}
	if got := names(demoRun); !slices.Equal(got, want) {
		t.Fatalf("demo rows %q, want %q", got, want)
	}
	rows := map[string]*eval.ConfigRun{}
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

	tinyRun, err := eval.Run(ctx, tiny, opts)
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
	if _, err := eval.Run(ctx, tiny, o); err == nil || !strings.Contains(err.Error(), `no client expansions for the variant "oracle"`) {
		t.Errorf("tiny run with the oracle variant: %v", err)
	}

	// The baseline records the rows like the built-in variants and reads
	// them back unchanged.
	b := gate.BaselineOf(demoRun)
	var rec *gate.BaselineConfig
	for i := range b.Configs {
		if b.Configs[i].Name == "shipping +oracle" {
			rec = &b.Configs[i]
		}
	}
	if rec == nil || rec.Status != "ok" || rec.Metrics == nil || len(rec.NDCG) != len(demo.Queries) || len(rec.ByKind) == 0 {
		t.Fatalf("the baseline's shipping +oracle: %+v", rec)
	}
	path := gate.BaselinePath(t.TempDir(), "demo")
	if err := gate.WriteBaseline(path, b); err != nil {
		t.Fatal(err)
	}
	back, err := gate.ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := gate.DiffBaseline(back, b); d.Failed() || len(d.Flips) > 0 {
		t.Errorf("the baseline read back differs: %q %q", FindingLines(d.Changes), FindingLines(d.Flips))
	}
	// A baseline recorded without the set fails the gate, naming the row.
	without := b
	without.Configs = slices.DeleteFunc(slices.Clone(b.Configs), func(c gate.BaselineConfig) bool { return c.Name == "shipping +oracle" })
	if d := gate.DiffBaseline(without, b); !d.Failed() || !strings.Contains(strings.Join(FindingLines(d.Changes), "\n"), "shipping +oracle: new configuration") {
		t.Errorf("a baseline without the set's rows: %q", FindingLines(d.Changes))
	}
	if d := gate.DiffBaseline(b, without); !strings.Contains(strings.Join(FindingLines(d.Changes), "\n"), "shipping +oracle: in the baseline but not run") {
		t.Errorf("a run without the set's rows: %q", FindingLines(d.Changes))
	}
}
