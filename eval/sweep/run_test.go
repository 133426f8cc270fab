package sweep_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/eval/report"
	"github.com/vault-rag/vault-rag/eval/sweep"
	"github.com/vault-rag/vault-rag/internal/evaltest"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/pipeline"
)

// repoRoot holds configs/, experiments/, eval/ and vault/ (tests run in
// eval/sweep/).
const repoRoot = "../.."

// TestRunSweepEndToEnd runs a small grid over the demo vault and a tiny BEIR
// collection, indexed with the bag-of-words embedder (a few seconds, so it
// runs under -short too), and writes the winner.
func TestRunSweepEndToEnd(t *testing.T) {
	ctx := context.Background()
	demo, tiny, work := evaltest.DemoAndTiny(t, repoRoot)
	src := "name: small\nbase: configs/hybrid.yaml\nfolds: 3\nseed: 4\ngrid:\n  rrf.k: [1, 60]\n  keyword.limit: [1, 40]\n"
	sw, err := sweep.Parse("small.yaml", []byte(src), repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	opts := eval.Options{WorkDir: work, IndexWith: stagetest.Embedder(), Models: stagetest.Models{}}
	res, err := sweep.Run(ctx, sw, []*eval.Dataset{demo, tiny}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 4 || len(res.Runs) != 2 || len(res.Candidates) != 4 {
		t.Fatalf("%d points, %d runs, %d candidates; want 4, 2, 4", len(res.Points), len(res.Runs), len(res.Candidates))
	}
	for d, run := range res.Runs {
		if len(run.Configs) != 5 {
			t.Fatalf("dataset %d: %d configurations ran, want the base and 4 points", d, len(run.Configs))
		}
		for _, c := range run.Configs {
			if c.Skipped != "" || len(c.Queries) != len(run.Dataset.Queries) || len(c.Latency) != len(run.Dataset.Queries) {
				t.Fatalf("%s on %s: skipped %q, %d queries, %d latencies", c.Name, run.Dataset.Name, c.Skipped, len(c.Queries), len(c.Latency))
			}
		}
	}
	// keyword.limit 1 keeps one keyword hit: it must score differently from
	// 40 on the demo, or the sweep measured nothing.
	if res.DatasetMean(0, 0) == res.DatasetMean(0, 1) && res.DatasetMean(0, 2) == res.DatasetMean(0, 3) {
		t.Error("keyword.limit 1 and 40 scored the same: the grid settings did not reach the runs")
	}
	// The winner has the best in-sample objective of all points.
	for _, p := range res.Candidates {
		if res.InSample[p] > res.InSample[res.Winner] {
			t.Errorf("point %d (%.4f) beats the winner %d (%.4f)", p, res.InSample[p], res.Winner, res.InSample[res.Winner])
		}
	}
	// Each fold's choice is the best on the other folds' queries only, and
	// scores only its fold's queries.
	for f := 0; f < sw.Folds; f++ {
		train := func(d, q int) bool { return res.Folds[d][q] != f }
		best, _ := sweep.Objective(res.Scores, res.CV.Chosen[f], train)
		for _, p := range res.Candidates {
			if s, _ := sweep.Objective(res.Scores, p, train); s > best {
				t.Errorf("fold %d: chose point %d (%.4f on training), point %d has %.4f", f, res.CV.Chosen[f], best, p, s)
			}
		}
	}
	for d := range res.Scores {
		for q, f := range res.Folds[d] {
			if got, want := res.CV.PerQuery[d][q], res.Scores[d][res.CV.Chosen[f]][q]; got != want {
				t.Errorf("dataset %d query %d: CV score %v, want %v (fold %d's choice)", d, q, got, want, f)
			}
		}
	}
	// Run again: the same folds and the same choices.
	again, err := sweep.Run(ctx, sw, []*eval.Dataset{demo, tiny}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Folds, res.Folds) || !reflect.DeepEqual(again.CV.Chosen, res.CV.Chosen) || again.Winner != res.Winner || again.CV.Macro != res.CV.Macro {
		t.Error("a second run of the same sweep gave other folds or choices")
	}
	// The winner round-trips through the strict configuration decoder.
	out := filepath.Join(t.TempDir(), "experiments", "sweep-small.yaml")
	if err := res.WriteWinner(out, report.WinnerHeader(res)); err != nil {
		t.Fatal(err)
	}
	back, err := pipeline.LoadFile(out)
	if err != nil {
		t.Fatalf("the written experiment does not decode: %v", err)
	}
	if back.Name != "sweep-small" || !strings.Contains(back.Description, res.Points[res.Winner].Label(sw)) {
		t.Errorf("written as %q: %q", back.Name, back.Description)
	}
	if !reflect.DeepEqual(back.Stages, res.Points[res.Winner].Config.Stages) {
		t.Errorf("the written experiment decodes to other stages")
	}
	raw, _ := os.ReadFile(out)
	for _, want := range []string{"# Written by `vault-rag sweep small.yaml`", "cross-validated", "in-sample"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the experiment file lacks %q:\n%s", want, raw)
		}
	}
	// The tables and the report render.
	var b strings.Builder
	if err := report.PrintSweep(&b, res, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "cross-validated (3 folds)") || !strings.Contains(b.String(), "winner: #") || !strings.Contains(b.String(), "leave-one-dataset-out") {
		t.Errorf("sweep tables:\n%s", b.String())
	}
	dir := t.TempDir()
	if err := report.WriteSweepReport(dir, res); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sweep-small.md", "sweep-small-tradeoff.png", "sweep-small-transfer.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("report file %s: %v", f, err)
		}
	}
}
