package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/eval/report"
	"github.com/vault-rag/vault-rag/eval/sweep"
)

// cmdSweep runs a sweep file: a grid over a base configuration's settings
// on every --dataset, scored by k-fold and leave-one-dataset-out
// cross-validation; the winning setting is written as an experiment file.
func cmdSweep(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	var datasets listFlag
	fs.Var(&datasets, "dataset", datasetUsage())
	out := fs.String("sweep-out", "", "where the winning configuration is written (default experiments/sweep-<name>.yaml under --root)")
	reportDir := fs.String("report", "", "write the sweep's report here: its tables as markdown and its charts")
	markdown := fs.Bool("markdown", false, "print the tables as markdown")
	root := fs.String("root", configRoot(), "folder holding configs/, experiments/, eval/ and vault/ [VAULT_RAG_ROOT]")
	embedder := fs.String("embedder", "", "the embedding model datasets are indexed with (default: each dataset's gate model, the fp32 original of the model a first index of its vault would choose by its script)")
	nowFlag := fs.String("now", eval.DefaultNow().Format("2006-01-02"), "the clock recency measures from")
	expansions := fs.String("expansions", "", "a folder of client expansion files, <dataset>.json each (e.g. ../shared/client-expansions), for a sweep scored with them (expansions: client); a vault dataset's own client.json is always used")
	setUsage(fs, "FILE.yaml [flags]", "Runs the grid of a sweep file (see experiments/sweeps/) over every --dataset, chooses a setting with\nk-fold cross-validation and writes it as an experiment (--sweep-out).")
	file, err := sweepOperand(fs, args)
	if err != nil {
		return err
	}
	now, err := parseNow(*nowFlag)
	if err != nil {
		return err
	}
	if len(datasets) == 0 {
		datasets = listFlag{"demo"}
	}
	sw, err := sweep.Load(file, *root)
	if err != nil {
		return err
	}
	opts, err := evalOptions("sweep", now)
	if err != nil {
		return err
	}
	defer opts.Registry.Close()
	opts.Embedder = *embedder
	return runSweep(ctx, sw, sweepOptions{datasets: datasets, root: *root, work: opts.WorkDir, expansions: *expansions,
		out: *out, reportDir: *reportDir, markdown: *markdown, eval: opts})
}

// sweepOperand parses the sweep command's flags and its one operand, the
// sweep file, which may come before the flags or after them.
func sweepOperand(fs *flag.FlagSet, args []string) (string, error) {
	if err := parseFlags(fs, args, operands{any: true}); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", exitError{code: 2, msg: "vault-rag sweep: name the sweep file, e.g. vault-rag sweep experiments/sweeps/rrf-depth.yaml --dataset demo\n  run \"vault-rag sweep -h\" for its flags"}
	}
	file, rest := fs.Arg(0), fs.Args()[1:]
	// The flags after the file; no second operand.
	if err := parseFlags(fs, rest, operands{}); err != nil {
		return "", err
	}
	return file, nil
}

// sweepOptions are what runSweep needs besides the sweep itself.
type sweepOptions struct {
	datasets   []string // --dataset: names or folders
	root       string   // --root
	work       string   // where dataset indexes are kept (data/eval)
	expansions string   // --expansions: a folder of <dataset>.json client expansions
	out        string   // --sweep-out: where the winner is written ("": experiments/sweep-<name>.yaml)
	reportDir  string   // --report ("": no report)
	markdown   bool     // print the tables as markdown
	eval       eval.Options
}

// runSweep runs a sweep file over the datasets, prints its tables and writes
// the winning configuration (and, with a report folder, the sweep's report).
func runSweep(ctx context.Context, sw *sweep.Sweep, o sweepOptions) error {
	var dss []*eval.Dataset
	for _, name := range o.datasets {
		ds, err := eval.OpenDataset(name, eval.OpenOptions{Root: o.root, WorkDir: o.work, Expansions: o.expansions})
		if err != nil {
			return err
		}
		dss = append(dss, ds)
	}
	res, err := sweep.Run(ctx, sw, dss, o.eval)
	if err != nil {
		return err
	}
	if err := report.PrintSweep(os.Stdout, res, o.markdown); err != nil {
		return err
	}
	out := o.out
	if out == "" {
		out = sweep.DefaultExperimentPath(o.root, sw.Name)
	}
	if err := res.WriteWinner(out, report.WinnerHeader(res)); err != nil {
		return fmt.Errorf("write the winner: %w", err)
	}
	fmt.Printf("sweep: wrote the winner to %s\n", out)
	if o.reportDir != "" {
		if err := report.WriteSweepReport(o.reportDir, res); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		fmt.Printf("sweep: wrote the sweep report to %s\n", o.reportDir)
	}
	fmt.Fprintf(os.Stderr, "sweep: done in %s\n", res.Took.Round(time.Millisecond))
	return nil
}
