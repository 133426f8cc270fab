package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/internal/measure"
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

// ExperimentName is the winner's configuration name.
func (r *Result) ExperimentName() string { return experimentName(r.Sweep.Name) }

// experimentName is the configuration name of a sweep's winner.
func experimentName(sweep string) string { return "sweep-" + sweep }

// DefaultExperimentPath is where the winner is written unless told otherwise.
func DefaultExperimentPath(root, sweepName string) string {
	return filepath.Join(root, "experiments", experimentName(sweepName)+".yaml")
}

// WinnerYAML is the winning point as an experiment file, under header: a
// comment saying how it was chosen and what to expect of it
// (report.WinnerHeader).
func (r *Result) WinnerYAML(header string) ([]byte, error) {
	sw, w := r.Sweep, r.Points[r.Winner]
	desc := fmt.Sprintf("%s with %s (sweep %s winner)", sw.Base.Name, w.Label(sw), sw.Name)
	return sw.Experiment(w, r.ExperimentName(), desc, header)
}

// WriteWinner writes the winning point as an experiment file under header
// (WinnerYAML) and checks it decodes, strictly, into the very configuration
// that was scored.
func (r *Result) WriteWinner(path, header string) error {
	raw, err := r.WinnerYAML(header)
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
