package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/eval/gate"
	"github.com/vault-rag/vault-rag/internal/table"
)

// ResultsPage is where the generated results page lives, relative to the
// repository root.
const ResultsPage = "docs/results.md"

// shippingName is the configuration the page's summary follows: the one
// configs/shipping.yaml declares, what search and serve run by default.
const shippingName = "shipping"

// RenderResults writes the results page: every committed baseline in
// baselineDir (baselines/<dataset>.json) as markdown tables, with a summary of
// the shipping configuration on every dataset at the top. It reads nothing
// but the baselines, so the page states exactly what the gate holds, and two
// renders of the same baselines are byte for byte the same.
func RenderResults(w io.Writer, baselineDir string) error {
	bs, err := readBaselines(baselineDir)
	if err != nil {
		return err
	}
	if len(bs) == 0 {
		return fmt.Errorf("results: no baselines in %s", baselineDir)
	}
	var b strings.Builder
	b.WriteString(resultsIntro)
	b.WriteString("\n## Summary\n\n")
	b.WriteString("The shipping configuration (`configs/shipping.yaml`) on each dataset: without the caller's help " +
		"(the question alone, what the command line and a client that sends only `query` get) and with it " +
		"(`+client`: the question with the keywords and hypothetical answer a language model wrote for it).\n\n")
	if err := table.Markdown(&b, summaryHead, summaryOf(bs)); err != nil {
		return err
	}
	b.WriteString("Every configuration's nDCG@10 on every dataset, from the question alone, with its difference from " +
		"shipping's in brackets (the datasets' own sections below have every measure):\n\n")
	head, rows := acrossOf(bs)
	if err := table.Markdown(&b, head, rows); err != nil {
		return err
	}
	for _, bl := range bs {
		if err := renderDataset(&b, bl); err != nil {
			return fmt.Errorf("results: %s: %w", bl.file, err)
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// resultsIntro opens the page; it says where the page comes from, so nobody
// edits it by hand.
const resultsIntro = `<!-- Generated from baselines/*.json by "vault-rag eval --results docs/results.md" (make eval). Do not edit: a test compares it with the baselines. -->

# Results

Every figure on this page is read from the committed baselines (` + "`baselines/<dataset>.json`" + `), the
numbers ` + "`make eval-check`" + ` gates, recorded with each dataset's fp32 embedder (named per dataset). How they are
measured, what the datasets are and what the client expansions are: [evaluation.md](evaluation.md).
Measures are at note level: recall at 1, 3, 5 and 10 (R@k), MRR@10 and nDCG@10 (linear gain).
`

var summaryHead = []string{"dataset", "queries", "notes", "nDCG@10", "nDCG@10 +client", "R@10", "R@10 +client", "MRR@10", "MRR@10 +client"}

// baselineFile is a baseline with the file it came from.
type baselineFile struct {
	gate.Baseline
	file string
}

// readBaselines reads every dataset baseline in dir, by file name. A JSON
// file without a dataset name is not one (baselines/bench.json holds
// performance figures) and is passed over.
func readBaselines(dir string) ([]baselineFile, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []baselineFile
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var probe struct {
			Dataset string `json:"dataset"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if probe.Dataset == "" {
			continue
		}
		b, err := gate.ReadBaseline(p)
		if err != nil {
			return nil, err
		}
		out = append(out, baselineFile{b, filepath.Base(p)})
	}
	return out, nil
}

// summaryOf is the shipping configuration's row on every dataset.
func summaryOf(bs []baselineFile) [][]string {
	var rows [][]string
	for _, b := range bs {
		plain, client := b.config(shippingName), b.config(eval.VariantName(shippingName, eval.VariantClient))
		rows = append(rows, []string{b.Dataset, fmt.Sprint(b.Queries), fmt.Sprint(b.Notes),
			metric(plain, nDCGOf), metric(client, nDCGOf), metric(plain, recall10Of), metric(client, recall10Of), metric(plain, mrrOf), metric(client, mrrOf)})
	}
	return rows
}

// acrossOf is every configuration's nDCG@10 without the client's expansions
// on every dataset, shipping first, each beside its difference from
// shipping's; "—" where it did not run.
func acrossOf(bs []baselineFile) ([]string, [][]string) {
	head := []string{"configuration"}
	seen := map[string]bool{}
	var names []string
	for _, b := range bs {
		head = append(head, b.Dataset)
		for _, c := range rowsOf(b.Baseline).plain {
			if !seen[c.Name] {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
	}
	slices.SortFunc(names, shippingFirst)
	var rows [][]string
	for _, name := range names {
		row := []string{name}
		for _, b := range bs {
			m, ship := b.config(name), b.config(shippingName)
			switch {
			case m == nil:
				row = append(row, "—")
			case ship == nil || name == shippingName:
				row = append(row, metric(m, nDCGOf))
			default:
				row = append(row, fmt.Sprintf("%s (%+.4f)", metric(m, nDCGOf), float64(m.NDCG10)-float64(ship.NDCG10)))
			}
		}
		rows = append(rows, row)
	}
	return head, rows
}

// shippingFirst orders configuration names: shipping, then by name.
func shippingFirst(a, b string) int {
	first := func(name string) int {
		if name == shippingName {
			return 0
		}
		return 1
	}
	if d := first(a) - first(b); d != 0 {
		return d
	}
	return strings.Compare(a, b)
}

// config is the named configuration's figures, nil when it did not run.
func (b baselineFile) config(name string) *gate.Metrics {
	for _, c := range b.Configs {
		if c.Name == name {
			return c.Metrics
		}
	}
	return nil
}

func nDCGOf(m gate.Metrics) gate.FourDecimals { return m.NDCG10 }

// answerOf is answer@1, 0 on a run without passage judgements.
func answerOf(m gate.Metrics) gate.FourDecimals {
	if m.Answer1 == nil {
		return 0
	}
	return *m.Answer1
}
func recall10Of(m gate.Metrics) gate.FourDecimals { return m.Recall10 }
func mrrOf(m gate.Metrics) gate.FourDecimals      { return m.MRR10 }

// metric is one figure of m, "—" when m did not run.
func metric(m *gate.Metrics, f func(gate.Metrics) gate.FourDecimals) string {
	if m == nil {
		return "—"
	}
	return table.Fixed(float64(f(*m)))
}

var metricsHead = []string{"R@1", "R@3", "R@5", "R@10", "MRR@10", "nDCG@10"}

// answerHead are the columns of a dataset with passage judgements
// (gate.Metrics.Answer1 and Bytes).
var answerHead = []string{"answer@1", "bytes"}

// headOf is a measures table's head, with the answer columns when judged.
func headOf(judged bool) []string {
	head := append([]string{"configuration"}, metricsHead...)
	if judged {
		head = append(head, answerHead...)
	}
	return head
}

func metricCells(m gate.Metrics, judged bool) []string {
	cells := []string{table.Fixed(float64(m.Recall1)), table.Fixed(float64(m.Recall3)), table.Fixed(float64(m.Recall5)), table.Fixed(float64(m.Recall10)), table.Fixed(float64(m.MRR10)), table.Fixed(float64(m.NDCG10))}
	if judged {
		if m.Answer1 != nil && m.Bytes != nil {
			cells = append(cells, table.Fixed(float64(*m.Answer1)), fmt.Sprintf("%.0f", float64(*m.Bytes)))
		} else {
			cells = append(cells, "—", "—")
		}
	}
	return cells
}

// judged says whether a baseline's runs carry answer@1 and bytes.
func judged(b gate.Baseline) bool {
	for _, c := range b.Configs {
		if c.Metrics != nil && c.Metrics.Answer1 != nil {
			return true
		}
	}
	return false
}

// datasetRows sorts a baseline's configurations for the page: the plain runs
// (shipping first, then by name), the runs with each expansion variant by
// configuration, and the skipped ones grouped by their reason.
type datasetRows struct {
	plain    []gate.BaselineConfig
	variants map[string]map[string]gate.BaselineConfig // configuration → variant → run
	readers  []string                                  // configurations run with variants, by name
	// sets are the variants that are further expansion sets
	// (--expansions-variant), not built-in ones, by name: only a baseline
	// recorded with such a set has them.
	sets    []string
	skipped map[string][]string // reason → configurations
}

func rowsOf(b gate.Baseline) datasetRows {
	r := datasetRows{variants: map[string]map[string]gate.BaselineConfig{}, skipped: map[string][]string{}}
	for _, c := range b.Configs {
		if reason, ok := strings.CutPrefix(c.Status, "skipped: "); ok || c.Metrics == nil {
			if !ok {
				reason = c.Status
			}
			r.skipped[reason] = append(r.skipped[reason], c.Name)
			continue
		}
		name, variant, _ := strings.Cut(c.Name, " +")
		if variant == "" {
			r.plain = append(r.plain, c)
			continue
		}
		if r.variants[name] == nil {
			r.variants[name] = map[string]gate.BaselineConfig{}
			r.readers = append(r.readers, name)
		}
		r.variants[name][variant] = c
		if !slices.Contains(eval.Variants, variant) && !slices.Contains(r.sets, variant) {
			r.sets = append(r.sets, variant)
		}
	}
	slices.Sort(r.sets)
	slices.SortStableFunc(r.plain, func(a, b gate.BaselineConfig) int { return shippingFirst(a.Name, b.Name) })
	slices.SortFunc(r.readers, shippingFirst)
	return r
}

// renderDataset writes one dataset's section.
func renderDataset(b *strings.Builder, bl baselineFile) error {
	r := rowsOf(bl.Baseline)
	withAnswers := judged(bl.Baseline)
	fmt.Fprintf(b, "## %s\n\n%d queries, %d notes, %d chunks, indexed with `%s`; from [`baselines/%s`](../baselines/%s).\n\n",
		bl.Dataset, bl.Queries, bl.Notes, bl.Chunks, bl.Embedder, bl.file, bl.file)

	b.WriteString("### Without the client's expansions\n\n")
	var rows [][]string
	for _, c := range r.plain {
		rows = append(rows, append([]string{c.Name}, metricCells(*c.Metrics, withAnswers)...))
	}
	if withAnswers {
		b.WriteString("answer@1 is the share of questions whose first note's passages hold a sentence judged to answer it; bytes the size of vault_search's answer " +
			"at its default number of notes and detail ([evaluation.md](evaluation.md#answers-answer1-and-bytes)).\n\n")
	}
	if err := table.Markdown(b, headOf(withAnswers), rows); err != nil {
		return err
	}
	for _, reason := range slices.Sorted(maps.Keys(r.skipped)) {
		fmt.Fprintf(b, "Not measured (%s): %s.\n\n", reason, strings.Join(r.skipped[reason], ", "))
	}

	if len(r.readers) > 0 {
		b.WriteString("### With the client's expansions\n\n")
		b.WriteString("Configurations whose stages read the caller's text, run four ways: without it (the table above), " +
			"with the client's keywords and hypothetical answer (`+client`), with the question repeated in both fields " +
			"(`+echo`: a lazy client) and with another question's (`+mismatched`: a client that misunderstood).")
		if len(r.sets) > 0 {
			// Only a baseline recorded with --expansions-variant has these
			// rows: a page without them reads as before.
			fmt.Fprintf(b, " Beside them, further sets of expansions ([evaluation.md](evaluation.md#further-expansion-sets)): %s, set against `+client` below.", codeList(r.sets))
		}
		b.WriteString(" nDCG@10:\n\n")
		head := []string{"configuration", "without", "+client", "Δ"}
		others := append([]string{eval.VariantEcho, eval.VariantMismatched}, r.sets...)
		for _, v := range others {
			head = append(head, "+"+v)
		}
		rows = nil
		for _, name := range r.readers {
			plain := bl.config(name)
			row := []string{name, metric(plain, nDCGOf)}
			client, ok := r.variants[name][eval.VariantClient]
			if ok {
				row = append(row, metric(client.Metrics, nDCGOf))
			} else {
				row = append(row, "—")
			}
			if ok && plain != nil {
				row = append(row, fmt.Sprintf("%+.4f", float64(client.Metrics.NDCG10)-float64(plain.NDCG10)))
			} else {
				row = append(row, "—")
			}
			for _, v := range others {
				c, ok := r.variants[name][v]
				if ok {
					row = append(row, metric(c.Metrics, nDCGOf))
				} else {
					row = append(row, "—")
				}
			}
			rows = append(rows, row)
		}
		if err := table.Markdown(b, head, rows); err != nil {
			return err
		}
		b.WriteString("Every measure of those runs:\n\n")
		rows = nil
		for _, name := range r.readers {
			for _, v := range append(slices.Clone(eval.Variants), r.sets...) {
				if c, ok := r.variants[name][v]; ok {
					rows = append(rows, append([]string{c.Name}, metricCells(*c.Metrics, withAnswers)...))
				}
			}
		}
		if err := table.Markdown(b, headOf(withAnswers), rows); err != nil {
			return err
		}
	}
	for _, set := range r.sets {
		if err := renderSet(b, r, set); err != nil {
			return err
		}
	}
	return renderKinds(b, r)
}

// renderSet writes a further expansion set against the client's own
// expansions: nDCG@10 of each configuration run with both, overall and by
// kind of question, and the difference. Which queries the set rewrote is
// not in the baseline, so the split by kind is what shows where it acts.
func renderSet(b *strings.Builder, r datasetRows, set string) error {
	kinds := kindsOf(r)
	head := append([]string{"configuration", "all"}, kinds...)
	var rows [][]string
	cells := func(label string, m gate.Metrics, byKind map[string]gate.Metrics) []string {
		row := []string{label, table.Fixed(float64(m.NDCG10))}
		for _, k := range kinds {
			if km, ok := byKind[k]; ok {
				row = append(row, table.Fixed(float64(km.NDCG10)))
			} else {
				row = append(row, "—")
			}
		}
		return row
	}
	for _, name := range r.readers {
		other, ok := r.variants[name][set]
		if !ok {
			continue
		}
		client, hasClient := r.variants[name][eval.VariantClient]
		if hasClient {
			rows = append(rows, cells(client.Name, *client.Metrics, client.ByKind))
		}
		rows = append(rows, cells(other.Name, *other.Metrics, other.ByKind))
		if !hasClient {
			continue
		}
		delta := []string{"Δ", fmt.Sprintf("%+.4f", float64(other.Metrics.NDCG10)-float64(client.Metrics.NDCG10))}
		for _, k := range kinds {
			cm, hasC := client.ByKind[k]
			om, hasO := other.ByKind[k]
			if hasC && hasO {
				delta = append(delta, fmt.Sprintf("%+.4f", float64(om.NDCG10)-float64(cm.NDCG10)))
			} else {
				delta = append(delta, "—")
			}
		}
		rows = append(rows, delta)
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(b, "### `+%s` against `+client`\n\n", set)
	fmt.Fprintf(b, "The expansion set `%s` ([evaluation.md](evaluation.md#further-expansion-sets)) against the client's own "+
		"expansions, for each configuration run with both: nDCG@10 over all questions and by kind, and the difference (Δ: `+%s` − `+client`):\n\n", set, set)
	return table.Markdown(b, head, rows)
}

// kindsOf are the kinds of question of a baseline's plain runs, sorted.
func kindsOf(r datasetRows) []string {
	seen := map[string]bool{}
	for _, c := range r.plain {
		for k := range c.ByKind {
			seen[k] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// codeList writes variant names as "`+a`, `+b`".
func codeList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = "`+" + n + "`"
	}
	return strings.Join(parts, ", ")
}

// renderKinds writes nDCG@10 by kind of question, for a dataset whose
// questions have kinds: each configuration without, then with, the client's
// expansions.
func renderKinds(b *strings.Builder, r datasetRows) error {
	kinds := kindsOf(r)
	if len(kinds) == 0 {
		return nil
	}
	b.WriteString("### By kind of question\n\nnDCG@10 of each kind of question, without and with (`+client`) the client's expansions:\n\n")
	head := append([]string{"configuration"}, kinds...)
	var rows [][]string
	add := func(c gate.BaselineConfig) {
		row := []string{c.Name}
		for _, k := range kinds {
			if m, ok := c.ByKind[k]; ok {
				row = append(row, table.Fixed(float64(m.NDCG10)))
			} else {
				row = append(row, "—")
			}
		}
		rows = append(rows, row)
	}
	for _, c := range r.plain {
		add(c)
		if v, ok := r.variants[c.Name][eval.VariantClient]; ok {
			add(v)
		}
	}
	return table.Markdown(b, head, rows)
}
