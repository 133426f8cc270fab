package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/eval/gate"
)

// TestResultsPageIsCurrent renders the results page from the committed
// baselines and compares it with the committed docs/results.md, so the page
// cannot drift from the numbers the gate holds.
func TestResultsPageIsCurrent(t *testing.T) {
	var got bytes.Buffer
	if err := RenderResults(&got, filepath.Join(repoRoot, "baselines")); err != nil {
		t.Fatal(err)
	}
	regenerate := "regenerate it with: make build && bin/vault-rag eval --results " + ResultsPage + " (make eval does it too), and commit it"
	want, err := os.ReadFile(filepath.Join(repoRoot, ResultsPage))
	if err != nil {
		t.Fatalf("%v\n%s", err, regenerate)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%s is not what baselines/*.json render (%s)\n%s", ResultsPage, firstDifference(got.String(), string(want)), regenerate)
	}
}

// firstDifference says where two texts first differ, line by line.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: rendered %q, committed %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("rendered %d lines, committed %d", len(g), len(w))
}

// TestRenderResults renders a small baseline folder and checks the page's
// parts: the summary row, shipping first, the variants beside their plain
// run, the skipped configurations, the split by kind, and a JSON file that
// is not a baseline passed over.
func TestRenderResults(t *testing.T) {
	dir := t.TempDir()
	m := func(x float64) *gate.Metrics {
		f := gate.FourDecimals(x)
		return &gate.Metrics{Recall1: f, Recall3: f, Recall5: f, Recall10: f, MRR10: f, NDCG10: f}
	}
	kinds := func(x float64) map[string]gate.Metrics {
		return map[string]gate.Metrics{"howto": *m(x), "lookup": *m(x + 0.1)}
	}
	b := gate.Baseline{Dataset: "tiny", Embedder: "bge-small-en-v1.5", Queries: 3, Notes: 5, Chunks: 9, Configs: []gate.BaselineConfig{
		{Name: "hybrid", Status: "ok", Metrics: m(0.5), ByKind: kinds(0.5)},
		{Name: "hybrid-rerank", Status: "skipped: model not installed"},
		{Name: "shipping", Status: "ok", Metrics: m(0.6), ByKind: kinds(0.6)},
		{Name: "shipping +client", Status: "ok", Metrics: m(0.8), ByKind: kinds(0.8)},
		{Name: "shipping +echo", Status: "ok", Metrics: m(0.6), ByKind: kinds(0.6)},
		{Name: "shipping +mismatched", Status: "ok", Metrics: m(0.1), ByKind: kinds(0.1)},
	}}
	if err := gate.WriteBaseline(filepath.Join(dir, "tiny.json"), b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), []byte(`{"machine": "x", "figures": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := RenderResults(&out, dir); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	for _, want := range []string{
		"| tiny ",   // the summary's row
		"## tiny\n", // the dataset's section
		"3 queries, 5 notes, 9 chunks, indexed with `bge-small-en-v1.5`",
		"Not measured (model not installed): hybrid-rerank.",
		"+0.2000", // shipping's gain with the client
		"| howto ",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "bench") {
		t.Errorf("bench.json was rendered as a dataset:\n%s", page)
	}
	plain := page[strings.Index(page, "### Without"):]
	if s, h := strings.Index(plain, "| shipping "), strings.Index(plain, "| hybrid "); s < 0 || h < 0 || s > h {
		t.Errorf("shipping is not the first row of the dataset's table:\n%s", plain)
	}
	var again bytes.Buffer
	if err := RenderResults(&again, dir); err != nil {
		t.Fatal(err)
	}
	if again.String() != page {
		t.Error("two renders of the same baselines differ")
	}
}

// TestRenderResultsExpansionSet renders a baseline recorded with a further
// expansion set (--expansions-variant) beside one recorded without: the set's
// rows show in its dataset's section, against +client overall and by kind,
// and nowhere else.
func TestRenderResultsExpansionSet(t *testing.T) {
	dir := t.TempDir()
	m := func(x float64) *gate.Metrics {
		f := gate.FourDecimals(x)
		return &gate.Metrics{Recall1: f, Recall3: f, Recall5: f, Recall10: f, MRR10: f, NDCG10: f}
	}
	kinds := func(english, howto float64) map[string]gate.Metrics {
		return map[string]gate.Metrics{"english": *m(english), "howto": *m(howto)}
	}
	with := gate.Baseline{Dataset: "zh", Queries: 4, Notes: 5, Chunks: 9, Configs: []gate.BaselineConfig{
		{Name: "hybrid", Status: "ok", Metrics: m(0.5), ByKind: kinds(0.3, 0.6)},
		{Name: "shipping", Status: "ok", Metrics: m(0.55), ByKind: kinds(0.3, 0.7)},
		{Name: "shipping +client", Status: "ok", Metrics: m(0.8), ByKind: kinds(0.6, 0.9)},
		{Name: "shipping +echo", Status: "ok", Metrics: m(0.55), ByKind: kinds(0.3, 0.7)},
		{Name: "shipping +mismatched", Status: "ok", Metrics: m(0.1), ByKind: kinds(0.1, 0.1)},
		{Name: "shipping +vault-language", Status: "ok", Metrics: m(0.85), ByKind: kinds(0.75, 0.9)},
	}}
	without := gate.Baseline{Dataset: "en", Queries: 2, Notes: 3, Chunks: 3, Configs: []gate.BaselineConfig{
		{Name: "shipping", Status: "ok", Metrics: m(0.6)},
		{Name: "shipping +client", Status: "ok", Metrics: m(0.7)},
	}}
	for _, b := range []gate.Baseline{with, without} {
		if err := gate.WriteBaseline(filepath.Join(dir, b.Dataset+".json"), b); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := RenderResults(&out, dir); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	en, zh, ok := strings.Cut(page[strings.Index(page, "## en\n"):], "## zh\n")
	if !ok {
		t.Fatalf("no section for zh after en:\n%s", page)
	}
	if strings.Contains(en, "vault-language") || strings.Contains(page[:strings.Index(page, "## en\n")], "vault-language") {
		t.Errorf("the set shows outside the section of the dataset recorded with it:\n%s", page)
	}
	for _, want := range []string{
		"| +vault-language |",                  // a column of the variants' table
		"| shipping +vault-language | 0.8500 ", // every measure
		"### `+vault-language` against `+client`",
		"| configuration | all | english | howto |",
		"| shipping +client | 0.8000 | 0.6000 | 0.9000 |",
		"| shipping +vault-language | 0.8500 | 0.7500 | 0.9000 |",
		"| Δ | +0.0500 | +0.1500 | +0.0000 |",
	} {
		if !strings.Contains(squeeze(zh), squeeze(want)) {
			t.Errorf("zh's section lacks %q:\n%s", want, zh)
		}
	}
}

// squeeze drops the padding of markdown table cells, so a test can name a
// row without its column widths.
func squeeze(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		cells := strings.Split(l, "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		lines[i] = strings.Join(cells, "|")
	}
	return strings.Join(lines, "\n")
}

func TestRenderResultsEmpty(t *testing.T) {
	if err := RenderResults(&bytes.Buffer{}, t.TempDir()); err == nil {
		t.Error("no baselines rendered without an error")
	}
}

// TestReadmeQualityTable checks the README's table of how well shipping
// finds answers against the committed baselines: every row's notes,
// questions and nDCG@10 without and with the client's expansions, so the
// front page cannot keep figures the baselines no longer hold.
func TestReadmeQualityTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "<!-- quality table:")
	if !ok {
		t.Fatal("README.md has no <!-- quality table: ... --> marker before its table of results")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| [") {
			continue
		}
		rows++
		cells := strings.Split(strings.Trim(line, "| "), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		name := cells[0][1:strings.Index(cells[0], "]")]
		b, err := gate.ReadBaseline(gate.BaselinePath(repoRoot, name))
		if err != nil {
			t.Errorf("README row %q: %v", name, err)
			continue
		}
		bf := baselineFile{Baseline: b}
		client := bf.config(eval.VariantName(shippingName, eval.VariantClient))
		want := []string{fmt.Sprint(b.Notes), fmt.Sprint(b.Queries),
			metric(bf.config(shippingName), nDCGOf), metric(client, nDCGOf), metric(client, answerOf)}
		if got := cells[len(cells)-5:]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("README row %s says notes, questions, nDCG@10 without and with the client's expansions and answer@1 with them %v; baselines/%s.json has %v", name, got, name, want)
		}
	}
	if rows == 0 {
		t.Error("README.md's quality table has no rows")
	}
}
