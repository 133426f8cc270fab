package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/eval/sweep"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/internal/table"
)

// sweepTable is one of a sweep's tables: its header and its rows of cells.
type sweepTable struct {
	head []string
	rows [][]string
}

// sweepTables are the sweep's tables: every point, each fold's choice, the
// summary (base, best in-sample, cross-validated) and leave-one-dataset-out.
func sweepTables(r *sweep.Result) []sweepTable {
	sw := r.Sweep
	var out []sweepTable
	// Grid.
	head := []string{"#"}
	for _, a := range sw.Axes {
		head = append(head, a.Key)
	}
	for _, run := range r.Runs {
		head = append(head, run.Dataset.Name+" nDCG@10")
	}
	if len(r.Runs) > 1 {
		head = append(head, "mean")
	}
	head = append(head, "p50 ms", "folds won")
	won := map[int]int{}
	for _, c := range r.CV.Chosen {
		won[c]++
	}
	var rows [][]string
	for p, pt := range r.Points {
		row := []string{fmt.Sprint(p)}
		row = append(row, pt.Values...)
		skipped := ""
		for d, run := range r.Runs {
			if c := run.Configs[1+p]; c.Skipped != "" {
				row = append(row, "—")
				skipped = c.Skipped
			} else {
				row = append(row, table.Fixed(r.DatasetMean(d, p)))
			}
		}
		if len(r.Runs) > 1 {
			if skipped != "" {
				row = append(row, "skipped")
			} else {
				row = append(row, table.Fixed(r.InSample[p]))
			}
		}
		mark := fmt.Sprint(won[p])
		if p == r.Winner {
			mark += " (winner)"
		}
		row = append(row, fmt.Sprintf("%.1f", measure.Millis(r.P50(p))), mark)
		rows = append(rows, row)
	}
	out = append(out, sweepTable{head, rows})
	// Folds.
	head = []string{"fold", "queries", "chosen", "training nDCG@10"}
	for _, run := range r.Runs {
		head = append(head, run.Dataset.Name+" held-out")
	}
	rows = nil
	for f := 0; f < sw.Folds; f++ {
		n := 0
		for d := range r.Folds {
			for _, fq := range r.Folds[d] {
				if fq == f {
					n++
				}
			}
		}
		row := []string{fmt.Sprint(f + 1), fmt.Sprint(n), pointName(r, r.CV.Chosen[f]), table.Fixed(r.CV.Train[f])}
		for d := range r.Runs {
			if v := r.CV.HeldOut[f][d]; v < 0 {
				row = append(row, "—")
			} else {
				row = append(row, table.Fixed(v))
			}
		}
		rows = append(rows, row)
	}
	out = append(out, sweepTable{head, rows})
	// Summary.
	head = []string{"nDCG@10"}
	for _, run := range r.Runs {
		head = append(head, run.Dataset.Name)
	}
	if len(r.Runs) > 1 {
		head = append(head, "mean")
	}
	bm, bper := r.BaseMean()
	line := func(label string, get func(d int) float64, macro float64) []string {
		row := []string{label}
		for d := range r.Runs {
			row = append(row, table.Fixed(get(d)))
		}
		if len(r.Runs) > 1 {
			row = append(row, table.Fixed(macro))
		}
		return row
	}
	win := r.Winner
	rows = [][]string{
		line("base ("+sw.Base.Name+")", func(d int) float64 { return bper[d] }, bm),
		line("chosen in-sample (#"+fmt.Sprint(win)+")", func(d int) float64 { return r.DatasetMean(d, win) }, r.InSample[win]),
		line(fmt.Sprintf("cross-validated (%d folds)", sw.Folds), func(d int) float64 { return r.CV.Estimate[d] }, r.CV.Macro),
		line("leave-one-dataset-out", func(d int) float64 { return r.LODO.Estimate[d] }, r.LODO.Mean()),
		line("in-sample − CV", func(d int) float64 { return r.DatasetMean(d, win) - r.CV.Estimate[d] }, r.InSample[win]-r.CV.Macro),
	}
	out = append(out, sweepTable{head, rows})
	// Leave one dataset out: what the rule picks without each dataset.
	head = []string{"left out", "role", "chosen on the others", "its nDCG@10 there", "base there", "Δ"}
	rows = nil
	for d, run := range r.Runs {
		role := "guard"
		if r.Selection.Decides[d] {
			role = "decides"
		}
		rows = append(rows, []string{run.Dataset.Name, role, pointName(r, r.LODO.Chosen[d]), table.Fixed(r.LODO.Estimate[d]), table.Fixed(bper[d]), fmt.Sprintf("%+.4f", r.LODO.Estimate[d]-bper[d])})
	}
	out = append(out, sweepTable{head, rows})
	return out
}

// WinnerHeader is the comment atop a sweep's winner file
// (sweep.Result.WriteWinner): how the setting was chosen, its nDCG@10
// in-sample, cross-validated, left out dataset by dataset, and the base's.
func WinnerHeader(r *sweep.Result) string {
	sw, w := r.Sweep, r.Points[r.Winner]
	var h strings.Builder
	fmt.Fprintf(&h, "Written by `vault-rag sweep %s`: the best of %d settings of %s\n", filepath.ToSlash(sw.File), len(r.Points), filepath.ToSlash(sw.BaseFile))
	fmt.Fprintf(&h, "by mean nDCG@10 over %s.\n", datasetNames(r))
	fmt.Fprintf(&h, "Setting: %s\n", w.Label(sw))
	bm, bper := r.BaseMean()
	rows := [][2]string{
		{"in-sample (chosen on these queries)", perDataset(r, func(d int) float64 { return r.DatasetMean(d, r.Winner) }, r.InSample[r.Winner])},
		{fmt.Sprintf("%d-fold cross-validated (seed %d)", sw.Folds, sw.Seed), perDataset(r, func(d int) float64 { return r.CV.Estimate[d] }, r.CV.Macro)},
		{"leave-one-dataset-out", perDataset(r, func(d int) float64 { return r.LODO.Estimate[d] }, r.LODO.Mean())},
		{"of the base (" + sw.Base.Name + ")", perDataset(r, func(d int) float64 { return bper[d] }, bm)},
	}
	width := 0
	for _, row := range rows {
		width = max(width, len(row[0]))
	}
	for _, row := range rows {
		fmt.Fprintf(&h, "nDCG@10 %-*s  %s\n", width+1, row[0]+":", row[1])
	}
	h.WriteString("Expect the cross-validated figure elsewhere: the in-sample one is tuned on the queries it is measured on.")
	return h.String()
}

// perDataset is one figure per dataset and, over several, their mean
// (macro): "demo 0.7285, tiny 1.0000, mean 0.8643".
func perDataset(r *sweep.Result, get func(d int) float64, macro float64) string {
	parts := make([]string, 0, len(r.Runs)+1)
	for d, run := range r.Runs {
		parts = append(parts, fmt.Sprintf("%s %.4f", run.Dataset.Name, get(d)))
	}
	if len(r.Runs) > 1 {
		parts = append(parts, fmt.Sprintf("mean %.4f", macro))
	}
	return strings.Join(parts, ", ")
}

// datasetNames lists the datasets with their query counts, for the winner's
// file and the tables' title: "demo (24 queries), cranfield (225 queries)".
func datasetNames(r *sweep.Result) string {
	parts := make([]string, len(r.Runs))
	for d, run := range r.Runs {
		parts[d] = fmt.Sprintf("%s (%d queries)", run.Dataset.Name, len(run.Dataset.Queries))
	}
	return strings.Join(parts, ", ")
}

func pointName(r *sweep.Result, p int) string {
	if p < 0 {
		return "none qualifies: the base (" + r.Sweep.Base.Name + ") stays"
	}
	return fmt.Sprintf("#%d %s", p, r.Points[p].Label(r.Sweep))
}

// WriteSweepReport writes sweep-<name>.md (the tables),
// sweep-<name>-tradeoff.png (mean nDCG@10 against p50 latency, a point per
// grid setting and the base) and sweep-<name>-transfer.png (transferChart)
// under dir.
func WriteSweepReport(dir string, r *sweep.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := "sweep-" + r.Sweep.Name
	bm, _ := r.BaseMean()
	pts := []TradeoffPoint{{Label: "base " + r.Sweep.Base.Name, P50: r.P50(-1), Score: bm}}
	for _, p := range r.Candidates {
		pts = append(pts, TradeoffPoint{Label: fmt.Sprintf("#%d", p), P50: r.P50(p), Score: r.InSample[p]})
	}
	score := "nDCG@10"
	if len(r.Runs) > 1 {
		score = "mean nDCG@10 over the datasets"
	}
	if err := tradeoffChart(filepath.Join(dir, name+"-tradeoff.png"), "sweep "+r.Sweep.Name+": in-sample "+score+" against p50 latency", score, pts); err != nil {
		return err
	}
	if err := transferChart(filepath.Join(dir, name+"-transfer.png"), r); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, name+".md"))
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "# sweep %s\n\n![tradeoff](%s-tradeoff.png)\n![transfer](%s-transfer.png)\n", r.Sweep.Name, name, name)
	if err := PrintSweep(f, r, true); err != nil {
		return err
	}
	return f.Close()
}

// PrintSweep writes the sweep's tables; markdown when md is set.
func PrintSweep(w io.Writer, r *sweep.Result, md bool) error {
	sw := r.Sweep
	fmt.Fprintf(w, "\nsweep %s: %d settings of %s over %s; %d folds, seed %d; took %s\n", sw.Name, len(r.Points), filepath.ToSlash(sw.BaseFile), datasetNames(r), sw.Folds, sw.Seed, r.Took.Round(time.Second))
	for _, t := range sweepTables(r) {
		render := table.Terminal
		if md {
			fmt.Fprintln(w)
			render = table.Markdown
		}
		if err := render(w, t.head, t.rows); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "winner: %s\n", pointName(r, r.Winner))
	return err
}
