// Package report renders eval's results for people, and is the only part of
// eval that does: the terminal and markdown tables of a run, the per-dataset
// report with its charts and TREC run files, the quality check's table and
// quality.md, what the gate found (eval --check's lines), the results page
// generated from the committed baselines (docs/results.md), and a sweep's
// tables and report. gate and sweep return data; this package shows it. It
// is the only part of eval that draws charts (gonum/plot).
package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/eval/gate"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/internal/table"
)

func ms(r *eval.ConfigRun, p float64) string {
	return fmt.Sprintf("%.1f", measure.Millis(measure.Percentile(r.Latency, p)))
}

// summaryRows are the rows of the main table: one per configuration.
func summaryRows(r *eval.DatasetRun) ([]string, [][]string) {
	head := []string{"configuration", "R@1", "R@3", "R@5", "R@10", "MRR@10", "nDCG@10", "p50 ms", "p95 ms"}
	var rows [][]string
	for _, c := range r.Configs {
		if c.Skipped != "" {
			rows = append(rows, []string{c.Name, "—", "—", "—", "—", "—", "—", "—", c.Skipped})
			continue
		}
		m := c.Mean
		rows = append(rows, []string{c.Name, table.Fixed(m.Recall[1]), table.Fixed(m.Recall[3]), table.Fixed(m.Recall[5]), table.Fixed(m.Recall[10]), table.Fixed(m.MRR), table.Fixed(m.NDCG), ms(c, 50), ms(c, 95)})
	}
	return head, rows
}

// kindRows split the measures by query kind (the demo vault's vocabulary and
// paraphrase queries).
func kindRows(r *eval.DatasetRun) ([]string, [][]string) {
	kinds := map[string]int{}
	for _, q := range r.Dataset.Queries {
		if q.Kind != "" {
			kinds[q.Kind]++
		}
	}
	if len(kinds) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	head := []string{"configuration"}
	for _, k := range names {
		head = append(head, fmt.Sprintf("%s (%d) MRR@10", k, kinds[k]), k+" R@10", k+" nDCG@10")
	}
	var rows [][]string
	for _, c := range r.Configs {
		if c.Skipped != "" {
			continue
		}
		row := []string{c.Name}
		for _, k := range names {
			s := c.ByKind[k]
			row = append(row, table.Fixed(s.MRR), table.Fixed(s.Recall[10]), table.Fixed(s.NDCG))
		}
		rows = append(rows, row)
	}
	return head, rows
}

// expansionRows put each configuration that reads the client's texts beside
// itself without them: nDCG@10 without, with the client's expansions, with an
// echo of the question, and with another query's expansions, overall and by
// query kind, and the client's gain with its p; then each further expansion
// set (Dataset.ExpansionSets) with its difference from the client's own
// expansions and that difference's p, overall and by kind.
func expansionRows(r *eval.DatasetRun) ([]string, [][]string) {
	rows := map[string]map[string]*eval.ConfigRun{}
	var order, sets []string
	for _, c := range r.Configs {
		if c.Skipped != "" {
			continue
		}
		if rows[c.Config] == nil {
			rows[c.Config] = map[string]*eval.ConfigRun{}
			order = append(order, c.Config)
		}
		rows[c.Config][c.Variant] = c
		if c.Variant != "" && !slices.Contains(eval.Variants, c.Variant) && !slices.Contains(sets, c.Variant) {
			sets = append(sets, c.Variant)
		}
	}
	kinds := queryKinds(r)
	head := []string{"configuration", "without", "+client", "Δ", "p", "+echo", "+mismatched"}
	for _, s := range sets {
		head = append(head, "+"+s, "Δ vs +client", "p")
	}
	for _, k := range kinds {
		head = append(head, k+" without", k+" +client")
		for _, s := range sets {
			head = append(head, k+" +"+s)
		}
	}
	ndcg := func(c *eval.ConfigRun) string {
		if c == nil {
			return "—"
		}
		return table.Fixed(c.Mean.NDCG)
	}
	kindNDCG := func(c *eval.ConfigRun, k string) string {
		if c == nil {
			return "—"
		}
		return table.Fixed(c.ByKind[k].NDCG)
	}
	var out [][]string
	for _, name := range order {
		v := rows[name]
		plain, client := v[""], v[eval.VariantClient]
		if plain == nil || len(v) == 1 {
			continue
		}
		row := []string{name, table.Fixed(plain.Mean.NDCG), ndcg(client), "—", "—", ndcg(v[eval.VariantEcho]), ndcg(v[eval.VariantMismatched])}
		if client != nil {
			cmp := gate.ComparePaired(plain, client)
			row[3], row[4] = fmt.Sprintf("%+.4f", cmp.Delta), table.Fixed(cmp.P)
		}
		for _, s := range sets {
			row = append(row, ndcg(v[s]))
			if other := v[s]; other != nil && client != nil {
				cmp := gate.ComparePaired(client, other)
				row = append(row, fmt.Sprintf("%+.4f", cmp.Delta), table.Fixed(cmp.P))
			} else {
				row = append(row, "—", "—")
			}
		}
		for _, k := range kinds {
			row = append(row, kindNDCG(plain, k), kindNDCG(client, k))
			for _, s := range sets {
				row = append(row, kindNDCG(v[s], k))
			}
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return head, out
}

// queryKinds are the dataset's query kinds, sorted.
func queryKinds(r *eval.DatasetRun) []string {
	seen := map[string]bool{}
	for _, q := range r.Dataset.Queries {
		if q.Kind != "" {
			seen[q.Kind] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Comparisons pairs every configuration that ran with the reference one.
func Comparisons(r *eval.DatasetRun, reference string) []gate.PairedComparison {
	var base *eval.ConfigRun
	for _, c := range r.Configs {
		if c.Name == reference && c.Skipped == "" {
			base = c
		}
	}
	if base == nil {
		return nil
	}
	var out []gate.PairedComparison
	for _, c := range r.Configs {
		if c.Skipped != "" || c == base {
			continue
		}
		out = append(out, gate.ComparePaired(base, c))
	}
	return out
}

func compareRows(cs []gate.PairedComparison) ([]string, [][]string) {
	if len(cs) == 0 {
		return nil, nil
	}
	head := []string{"configuration vs " + cs[0].Baseline, "Δ nDCG@10", "wins", "losses", "p (randomization)"}
	var rows [][]string
	for _, c := range cs {
		rows = append(rows, []string{c.Config, fmt.Sprintf("%+.4f", c.Delta), fmt.Sprint(len(c.Wins)), fmt.Sprint(len(c.Losses)), table.Fixed(c.P)})
	}
	return head, rows
}

// PrintTables writes the terminal tables of one dataset.
func PrintTables(w io.Writer, r *eval.DatasetRun, reference string) error {
	fmt.Fprintf(w, "\n%s: %d queries, %d notes, %d chunks\n", r.Dataset.Name, len(r.Dataset.Queries), r.Notes, r.Chunks)
	return tables(w, r, reference, table.Terminal)
}

// MarkdownTables writes the summary tables as markdown (for the README).
func MarkdownTables(w io.Writer, r *eval.DatasetRun, reference string) error {
	return tables(w, r, reference, table.Markdown)
}

// tables writes the summary tables of one dataset with render.
func tables(w io.Writer, r *eval.DatasetRun, reference string, render func(io.Writer, []string, [][]string) error) error {
	for _, t := range []func() ([]string, [][]string){
		func() ([]string, [][]string) { return summaryRows(r) },
		func() ([]string, [][]string) { return kindRows(r) },
		func() ([]string, [][]string) { return expansionRows(r) },
		func() ([]string, [][]string) { return compareRows(Comparisons(r, reference)) },
	} {
		head, rows := t()
		if err := render(w, head, rows); err != nil {
			return err
		}
	}
	return nil
}

// WriteReport writes, under dir: <dataset>.md (tables, per-query wins and
// losses against the reference, stage diagnosis), PNG charts, and TREC run
// and qrels files for independent checking with trec_eval or ranx.
func WriteReport(dir string, r *eval.DatasetRun, reference string) error {
	name := r.Dataset.Name
	if err := os.MkdirAll(filepath.Join(dir, "runs", name), 0o755); err != nil {
		return err
	}
	if err := writeTREC(filepath.Join(dir, "runs", name), r); err != nil {
		return err
	}
	if err := qualityChart(filepath.Join(dir, name+"-quality.png"), r); err != nil {
		return err
	}
	if err := latencyChart(filepath.Join(dir, name+"-latency.png"), r); err != nil {
		return err
	}
	charts, err := writeDatasetCharts(dir, r, reference)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, name+".md"))
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "# %s\n\n%d queries, %d notes, %d chunks (index stamp %s). Source: `%s`.\n\n", name, len(r.Dataset.Queries), r.Notes, r.Chunks, eval.ShortStamp(r.Stamp), r.Dataset.Source)
	fmt.Fprintf(f, "![quality](%s-quality.png)\n![latency](%s-latency.png)\n", name, name)
	for _, c := range charts {
		fmt.Fprintf(f, "![%s](%s)\n", strings.TrimSuffix(c, ".png"), c)
	}
	fmt.Fprintf(f, "\n## Measures\n\n")
	if err := MarkdownTables(f, r, reference); err != nil {
		return err
	}
	cs := Comparisons(r, reference)
	if len(cs) > 0 {
		fmt.Fprintf(f, "## Query by query against %s\n\nRank of the first relevant note in the top 10 (0: none).\n\n", reference)
		for _, c := range cs {
			fmt.Fprintf(f, "**%s** (Δ nDCG@10 %+.4f, p = %.4f): wins %s; losses %s\n\n", c.Config, c.Delta, c.P, changes(c.Wins), changes(c.Losses))
		}
	}
	fmt.Fprintf(f, "## Stage diagnosis\n\nFor each query, the rank of its first relevant note after each stage (— : not in that stage's list), and the kind of miss when no relevant note reached the top 10: *recall* (no stage found one) or *ranking* (found, then ranked out).\n\n")
	for _, c := range r.Configs {
		if c.Skipped != "" || len(c.Queries) == 0 || len(c.Queries[0].Stages) < 2 {
			continue
		}
		misses := map[string]int{}
		for _, q := range c.Queries {
			if q.Miss != "" {
				misses[q.Miss]++
			}
		}
		fmt.Fprintf(f, "### %s\n\nmisses: %d recall, %d ranking\n\n", c.Name, misses["recall"], misses["ranking"])
		head := []string{"query"}
		for _, s := range c.Queries[0].Stages {
			head = append(head, s.Stage)
		}
		head = append(head, "miss")
		var rows [][]string
		for _, q := range c.Queries {
			row := []string{q.ID}
			for _, s := range q.Stages {
				if s.Rank == 0 {
					row = append(row, "—")
				} else {
					row = append(row, fmt.Sprint(s.Rank))
				}
			}
			rows = append(rows, append(row, q.Miss))
		}
		if err := table.Markdown(f, head, rows); err != nil {
			return err
		}
	}
	return f.Close()
}

func changes(cs []gate.QueryChange) string {
	if len(cs) == 0 {
		return "none"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %d→%d", c.ID, c.From, c.To)
	}
	return strings.Join(parts, ", ")
}

// writeTREC writes qrels.txt and one <config>.run per configuration, in the
// formats trec_eval reads: "qid 0 docid grade" and "qid Q0 docid rank score tag".
func writeTREC(dir string, r *eval.DatasetRun) error {
	var q strings.Builder
	for _, query := range r.Dataset.Queries {
		for _, p := range slices.Sorted(maps.Keys(query.Relevant)) {
			fmt.Fprintf(&q, "%s 0 %s %d\n", query.ID, trecDoc(p), query.Relevant[p])
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "qrels.txt"), []byte(q.String()), 0o644); err != nil {
		return err
	}
	for _, c := range r.Configs {
		if c.Skipped != "" {
			continue
		}
		var b strings.Builder
		for _, qr := range c.Queries {
			for i, p := range qr.Ranked {
				// trec_eval orders by score, so the score written is derived
				// from the rank: the pipeline's own scores can tie.
				fmt.Fprintf(&b, "%s Q0 %s %d %d %s\n", qr.ID, trecDoc(p), i+1, len(qr.Ranked)-i, c.Name)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".run"), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// trecDoc makes a note path one whitespace-free token.
func trecDoc(p string) string { return strings.ReplaceAll(p, " ", "%20") }

func qualityChart(path string, r *eval.DatasetRun) error {
	ran := ranConfigs(r)
	if len(ran) == 0 {
		return nil
	}
	measures := []struct {
		name string
		get  func(eval.Scores) float64
	}{
		{"nDCG@10", func(s eval.Scores) float64 { return s.NDCG }},
		{"MRR@10", func(s eval.Scores) float64 { return s.MRR }},
		{"R@10", func(s eval.Scores) float64 { return s.Recall[10] }},
	}
	var series []barSeries
	for _, m := range measures {
		vals := make(plotter.Values, len(ran))
		for i, c := range ran {
			vals[i] = m.get(c.Mean)
		}
		series = append(series, barSeries{m.name, vals})
	}
	return groupedBars(path, r.Dataset.Name+": quality by configuration", "score", configNames(ran), series, 1, "%.3f")
}

// ranConfigs are the run's configurations that ran (not skipped).
func ranConfigs(r *eval.DatasetRun) []*eval.ConfigRun {
	var ran []*eval.ConfigRun
	for _, c := range r.Configs {
		if c.Skipped == "" {
			ran = append(ran, c)
		}
	}
	return ran
}

func configNames(rs []*eval.ConfigRun) []string {
	names := make([]string, len(rs))
	for i, c := range rs {
		names[i] = c.Name
	}
	return names
}

func latencyChart(path string, r *eval.DatasetRun) error {
	ran := ranConfigs(r)
	if len(ran) == 0 {
		return nil
	}
	var series []barSeries
	for _, pct := range []float64{50, 95} {
		vals := make(plotter.Values, len(ran))
		for i, c := range ran {
			vals[i] = measure.Millis(measure.Percentile(c.Latency, pct))
		}
		series = append(series, barSeries{fmt.Sprintf("p%.0f", pct), vals})
	}
	return groupedBars(path, r.Dataset.Name+": latency per query (ms)", "ms", configNames(ran), series, 0, "%.1f")
}

// barSeries is one measure across configurations.
type barSeries struct {
	name string
	vals plotter.Values
}

// groupedBars draws one group of bars per name, a bar per series, each bar
// carrying its value; yMax 0 scales the axis to the data (with room for the
// values), otherwise it ends there (a score axis ends at 1). The legend sits
// beside the plot, never over a bar.
func groupedBars(path, title, ylabel string, names []string, series []barSeries, yMax float64, format string) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	top := 0.0
	for _, s := range series {
		for _, v := range s.vals {
			top = math.Max(top, v)
		}
	}
	if yMax > 0 {
		p.Y.Max = yMax
		if yMax == 1 {
			p.Y.Tick.Marker = scoreTicks{}
		}
	} else {
		p.Y.Max = math.Max(top*1.25, 1)
	}
	w := vg.Points(11)
	legend := plot.NewLegend()
	var legendNames []string
	for si, s := range series {
		bars, err := plotter.NewBarChart(s.vals, w)
		if err != nil {
			return err
		}
		bars.LineStyle.Width = 0
		bars.Color = plotutil.Color(si)
		bars.Offset = w * (vg.Length(si) - vg.Length(len(series)-1)/2)
		p.Add(bars)
		legend.Add(s.name, bars)
		legendNames = append(legendNames, s.name)
		var xy plotter.XYLabels
		for i, v := range s.vals {
			xy.XYs = append(xy.XYs, plotter.XY{X: float64(i), Y: v})
			xy.Labels = append(xy.Labels, fmt.Sprintf(format, v))
		}
		lb, err := plotter.NewLabels(xy)
		if err != nil {
			return err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font.Size = vg.Points(7)
			lb.TextStyle[i].Rotation = math.Pi / 2
			lb.TextStyle[i].XAlign = 0
			lb.TextStyle[i].YAlign = -0.5
		}
		lb.Offset = vg.Point{X: bars.Offset, Y: vg.Points(2)}
		p.Add(lb)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign = -0.9
	return saveWithLegend(p, legend, legendNames, nil, vg.Length(80+60*len(names)), 10*vg.Centimeter, path)
}
