package sweep

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/internal/table"
	"github.com/vault-rag/vault-rag/pipeline"
)

// Result is a sweep run over several datasets.
type Result struct {
	Sweep  *Sweep
	Points []*Point
	// Runs holds one run per dataset: Configs[0] is the base configuration
	// (a reference, never a candidate), Configs[1+p] grid point p.
	Runs []*eval.DatasetRun
	// Folds[d][q] is the fold of query q of dataset d.
	Folds [][]int
	// Scores[d][p][q] is nDCG@10 of query q of dataset d under point p.
	Scores [][][]float64
	// Candidates are the points that ran on every dataset (a point whose
	// model is missing is skipped).
	Candidates []int
	// InSample[p] is point p's macro mean nDCG@10 over every query.
	InSample []float64
	// Selection says which datasets decide (vaults) and which guard.
	Selection Selection
	// Winner is the candidate the selection rule picks on every query: the
	// point written out.
	Winner int
	CV     CV
	// LODO is leave-one-dataset-out: for each dataset, the rule's choice on
	// the others, scored on it.
	LODO LODO
	Took time.Duration
}

// Run indexes each dataset once, runs the base and every grid point over
// it (the runner of Run, so latency is recorded per configuration), and
// cross-validates the choice of point.
func Run(ctx context.Context, sw *Sweep, datasets []*eval.Dataset, opts eval.Options) (*Result, error) {
	start := time.Now()
	points, err := sw.Points()
	if err != nil {
		return nil, err
	}
	if len(datasets) == 0 {
		return nil, fmt.Errorf("a sweep needs at least one dataset")
	}
	base := *sw.Base
	cfgs := []*pipeline.Config{&base}
	for _, p := range points {
		cfgs = append(cfgs, p.Config)
	}
	res := &Result{Sweep: sw, Points: points}
	o := opts
	o.Configs = cfgs
	o.Variants = []string{sw.Expansions}
	for _, ds := range datasets {
		if sw.Expansions != "" && ds.Expansions == nil {
			return nil, fmt.Errorf("sweep %s scores with the client's expansions, and dataset %s has none (pass --expansions DIR, or put client.json in its folder)", sw.Name, ds.Name)
		}
		run, err := eval.Run(ctx, ds, o)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, run)
		ids := make([]string, len(ds.Queries))
		for i, q := range ds.Queries {
			ids[i] = q.ID
		}
		res.Folds = append(res.Folds, AssignFolds(ds.Name, ids, sw.Folds, sw.Seed))
		per := make([][]float64, len(points))
		for p := range points {
			cr := run.Configs[1+p]
			per[p] = make([]float64, len(ds.Queries))
			for qi, qr := range cr.Queries {
				per[p][qi] = qr.Score.NDCG
			}
		}
		res.Scores = append(res.Scores, per)
	}
	for p := range points {
		ok := true
		for _, run := range res.Runs {
			if run.Configs[1+p].Skipped != "" {
				ok = false
			}
		}
		if ok {
			res.Candidates = append(res.Candidates, p)
		}
	}
	if len(res.Candidates) == 0 {
		return nil, fmt.Errorf("sweep %s: no grid point ran on every dataset (%s)", sw.Name, res.Runs[0].Configs[1].Skipped)
	}
	all := func(d, q int) bool { return true }
	res.InSample = make([]float64, len(points))
	for _, p := range res.Candidates {
		res.InSample[p], _ = Objective(res.Scores, p, all)
	}
	res.Selection = selectionOf(res.Runs)
	res.Winner = res.Selection.Choose(res.Scores, res.Candidates, all)
	if res.Winner < 0 {
		return nil, fmt.Errorf("sweep %s: every grid point loses more than %.2f to %s on a guard collection", sw.Name, GuardLoss, sw.Base.Name)
	}
	res.CV = CrossValidateRule(res.Scores, res.Folds, sw.Folds, res.Candidates, res.Selection)
	res.LODO = LeaveOneDatasetOut(res.Scores, res.Candidates, res.Selection)
	res.Took = time.Since(start)
	return res, nil
}

// selectionOf is the selection rule over runs: vault datasets decide,
// classic collections guard against a loss to the base (Configs[0]). When no
// dataset is a vault, every dataset decides.
func selectionOf(runs []*eval.DatasetRun) Selection {
	sel := Selection{Decides: make([]bool, len(runs)), Base: make([]float64, len(runs)), BaseQueries: make([][]float64, len(runs))}
	vaults := 0
	for d, run := range runs {
		sel.Decides[d] = run.Dataset.Vault
		sel.Base[d] = run.Configs[0].Mean.NDCG
		for _, qr := range run.Configs[0].Queries {
			sel.BaseQueries[d] = append(sel.BaseQueries[d], qr.Score.NDCG)
		}
		if run.Dataset.Vault {
			vaults++
		}
	}
	if vaults == 0 {
		for d := range sel.Decides {
			sel.Decides[d] = true
		}
	}
	return sel
}

// DatasetMean is point p's mean nDCG@10 over dataset d's queries.
func (r *Result) DatasetMean(d, p int) float64 {
	return r.Runs[d].Configs[1+p].Mean.NDCG
}

// BaseMean is the base configuration's macro mean nDCG@10, and per dataset.
func (r *Result) BaseMean() (float64, []float64) {
	per := make([]float64, len(r.Runs))
	m := 0.0
	for d, run := range r.Runs {
		per[d] = run.Configs[0].Mean.NDCG
		m += per[d]
	}
	return m / float64(len(r.Runs)), per
}

// P50 is point p's median query latency over every dataset's queries
// (p = -1: the base).
func (r *Result) P50(p int) time.Duration {
	var all []time.Duration
	for _, run := range r.Runs {
		all = append(all, run.Configs[1+p].Latency...)
	}
	return measure.Percentile(all, 50)
}

func (r *Result) datasetNames() string {
	parts := make([]string, len(r.Runs))
	for d, run := range r.Runs {
		parts[d] = fmt.Sprintf("%s (%d queries)", run.Dataset.Name, len(run.Dataset.Queries))
	}
	return strings.Join(parts, ", ")
}

// ExperimentName is the winner's configuration name.
func (r *Result) ExperimentName() string { return experimentName(r.Sweep.Name) }

// experimentName is the configuration name of a sweep's winner.
func experimentName(sweep string) string { return "sweep-" + sweep }

// DefaultExperimentPath is where the winner is written unless told otherwise.
func DefaultExperimentPath(root, sweepName string) string {
	return filepath.Join(root, "experiments", experimentName(sweepName)+".yaml")
}

// WinnerYAML is the winning point as an experiment file, with a header
// saying how it was chosen and what to expect of it.
func (r *Result) WinnerYAML() ([]byte, error) {
	sw, w := r.Sweep, r.Points[r.Winner]
	var h strings.Builder
	fmt.Fprintf(&h, "Written by `vault-rag sweep %s`: the best of %d settings of %s\n", filepath.ToSlash(sw.File), len(r.Points), filepath.ToSlash(sw.BaseFile))
	fmt.Fprintf(&h, "by mean nDCG@10 over %s.\n", r.datasetNames())
	fmt.Fprintf(&h, "Setting: %s\n", w.Label(sw))
	bm, bper := r.BaseMean()
	rows := [][2]string{
		{"in-sample (chosen on these queries)", r.perDataset(func(d int) float64 { return r.DatasetMean(d, r.Winner) }, r.InSample[r.Winner])},
		{fmt.Sprintf("%d-fold cross-validated (seed %d)", sw.Folds, sw.Seed), r.perDataset(func(d int) float64 { return r.CV.Estimate[d] }, r.CV.Macro)},
		{"leave-one-dataset-out", r.perDataset(func(d int) float64 { return r.LODO.Estimate[d] }, mean(r.LODO.Estimate))},
		{"of the base (" + sw.Base.Name + ")", r.perDataset(func(d int) float64 { return bper[d] }, bm)},
	}
	width := 0
	for _, row := range rows {
		width = max(width, len(row[0]))
	}
	for _, row := range rows {
		fmt.Fprintf(&h, "nDCG@10 %-*s  %s\n", width+1, row[0]+":", row[1])
	}
	h.WriteString("Expect the cross-validated figure elsewhere: the in-sample one is tuned on the queries it is measured on.")
	desc := fmt.Sprintf("%s with %s (sweep %s winner)", sw.Base.Name, w.Label(sw), sw.Name)
	return sw.Experiment(w, r.ExperimentName(), desc, h.String())
}

func (r *Result) perDataset(get func(d int) float64, macro float64) string {
	parts := make([]string, 0, len(r.Runs)+1)
	for d, run := range r.Runs {
		parts = append(parts, fmt.Sprintf("%s %.4f", run.Dataset.Name, get(d)))
	}
	if len(r.Runs) > 1 {
		parts = append(parts, fmt.Sprintf("mean %.4f", macro))
	}
	return strings.Join(parts, ", ")
}

// WriteWinner writes the winning point as an experiment file and checks it
// decodes, strictly, into the very configuration that was scored.
func (r *Result) WriteWinner(path string) error {
	raw, err := r.WinnerYAML()
	if err != nil {
		return err
	}
	back, err := pipeline.Parse(path, raw)
	if err != nil {
		return fmt.Errorf("the winner's file does not decode: %w", err)
	}
	if err := sameStages(back, r.Points[r.Winner].Config); err != nil {
		return fmt.Errorf("the winner's file decodes to another pipeline: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}

// sameStages compares two configurations' stages setting by setting.
func sameStages(a, b *pipeline.Config) error {
	if len(a.Stages) != len(b.Stages) {
		return fmt.Errorf("%d stages, want %d", len(a.Stages), len(b.Stages))
	}
	for i := range a.Stages {
		if fa, fb := fmt.Sprintf("%s %+v", a.Stages[i].Name(), a.Stages[i]), fmt.Sprintf("%s %+v", b.Stages[i].Name(), b.Stages[i]); fa != fb {
			return fmt.Errorf("stage %d: %s, want %s", i+1, fa, fb)
		}
	}
	return nil
}

// Table is one of a sweep's tables: its header and its rows of cells.
type Table struct {
	Head []string
	Rows [][]string
}

// Tables are the sweep's tables: every point, each fold's choice, the
// summary (base, best in-sample, cross-validated) and leave-one-dataset-out.
func Tables(r *Result) []Table {
	sw := r.Sweep
	var out []Table
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
				row = append(row, f4(r.DatasetMean(d, p)))
			}
		}
		if len(r.Runs) > 1 {
			if skipped != "" {
				row = append(row, "skipped")
			} else {
				row = append(row, f4(r.InSample[p]))
			}
		}
		mark := fmt.Sprint(won[p])
		if p == r.Winner {
			mark += " (winner)"
		}
		row = append(row, fmt.Sprintf("%.1f", measure.Millis(r.P50(p))), mark)
		rows = append(rows, row)
	}
	out = append(out, Table{head, rows})
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
		row := []string{fmt.Sprint(f + 1), fmt.Sprint(n), pointName(r, r.CV.Chosen[f]), f4(r.CV.Train[f])}
		for d := range r.Runs {
			if v := r.CV.HeldOut[f][d]; v < 0 {
				row = append(row, "—")
			} else {
				row = append(row, f4(v))
			}
		}
		rows = append(rows, row)
	}
	out = append(out, Table{head, rows})
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
			row = append(row, f4(get(d)))
		}
		if len(r.Runs) > 1 {
			row = append(row, f4(macro))
		}
		return row
	}
	win := r.Winner
	rows = [][]string{
		line("base ("+sw.Base.Name+")", func(d int) float64 { return bper[d] }, bm),
		line("chosen in-sample (#"+fmt.Sprint(win)+")", func(d int) float64 { return r.DatasetMean(d, win) }, r.InSample[win]),
		line(fmt.Sprintf("cross-validated (%d folds)", sw.Folds), func(d int) float64 { return r.CV.Estimate[d] }, r.CV.Macro),
		line("leave-one-dataset-out", func(d int) float64 { return r.LODO.Estimate[d] }, mean(r.LODO.Estimate)),
		line("in-sample − CV", func(d int) float64 { return r.DatasetMean(d, win) - r.CV.Estimate[d] }, r.InSample[win]-r.CV.Macro),
	}
	out = append(out, Table{head, rows})
	// Leave one dataset out: what the rule picks without each dataset.
	head = []string{"left out", "role", "chosen on the others", "its nDCG@10 there", "base there", "Δ"}
	rows = nil
	for d, run := range r.Runs {
		role := "guard"
		if r.Selection.Decides[d] {
			role = "decides"
		}
		rows = append(rows, []string{run.Dataset.Name, role, pointName(r, r.LODO.Chosen[d]), f4(r.LODO.Estimate[d]), f4(bper[d]), fmt.Sprintf("%+.4f", r.LODO.Estimate[d]-bper[d])})
	}
	out = append(out, Table{head, rows})
	return out
}

func pointName(r *Result, p int) string {
	if p < 0 {
		return "none qualifies: the base (" + r.Sweep.Base.Name + ") stays"
	}
	return fmt.Sprintf("#%d %s", p, r.Points[p].Label(r.Sweep))
}

// Print writes the sweep's tables; markdown when md is set.
func Print(w io.Writer, r *Result, md bool) error {
	sw := r.Sweep
	fmt.Fprintf(w, "\nsweep %s: %d settings of %s over %s; %d folds, seed %d; took %s\n", sw.Name, len(r.Points), filepath.ToSlash(sw.BaseFile), r.datasetNames(), sw.Folds, sw.Seed, r.Took.Round(time.Second))
	for _, t := range Tables(r) {
		render := table.Terminal
		if md {
			fmt.Fprintln(w)
			render = table.Markdown
		}
		if err := render(w, t.Head, t.Rows); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "winner: %s\n", pointName(r, r.Winner))
	return err
}

func f4(x float64) string { return fmt.Sprintf("%.4f", x) }
