package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/eval/gate"
	"github.com/vault-rag/vault-rag/eval/report"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func cmdEval(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var datasets, configs listFlag
	fs.Var(&datasets, "dataset", datasetUsage())
	fs.Var(&configs, "config", "configuration name; repeatable (default: every file in configs/ and experiments/)")
	check := fs.Bool("check", false, "compare with baselines/ and exit 1 on any difference; writes nothing")
	update := fs.Bool("update", false, "rewrite baselines/<dataset>.json")
	reportDir := fs.String("report", "", "write a markdown report, charts and TREC run files here")
	markdown := fs.Bool("markdown", false, "print the tables as markdown")
	reference := fs.String("reference", "shipping", "the configuration others are compared with")
	root := fs.String("root", configRoot(), "folder holding configs/, experiments/, eval/, vault/ and baselines/ [VAULT_RAG_ROOT]")
	embedder := fs.String("embedder", "", "the embedding model datasets are indexed with (default: the gate's, the fp32 original of VAULT_RAG_EMBEDDER's model or, unset, of the model a first index of the dataset's vault would choose by its script; that model's quality is then checked against it)")
	nowFlag := fs.String("now", eval.DefaultNow().Format("2006-01-02"), "the clock recency measures from")
	expansions := fs.String("expansions", "", "a folder of client expansion files, <dataset>.json each (e.g. ../shared/client-expansions): configurations that read the client's keywords and answer run with them too; a vault dataset's own client.json is always used")
	var sets eval.ExpansionDirs
	fs.Var(&sets, "expansions-variant", `NAME=DIR: a further set of client expansions, DIR/<dataset>.json each: on a dataset with a file there, configurations that read the client's text run with it too, as rows "CONFIG +NAME"; repeatable`)
	results := fs.String("results", "", "write the results page rendered from the committed baselines/ to this file (e.g. "+report.ResultsPage+"); alone, it runs no dataset")
	setUsage(fs, "[flags]", "Scores every configuration (or those of --config) against labelled queries on each --dataset;\n--check compares with baselines/ and exits 1 if any number moved, --update rewrites them.")
	if err := movedToSweep(args); err != nil {
		return err
	}
	if err := parseFlags(fs, args, operands{}); err != nil {
		return err
	}
	if *check && *update {
		return errors.New("--check and --update exclude each other")
	}
	if *results != "" && len(datasets) == 0 && len(configs) == 0 && !*check && !*update {
		// The page comes from the committed baselines alone: no dataset
		// needs to run to write it.
		return writeResults(*root, *results)
	}
	now, err := parseNow(*nowFlag)
	if err != nil {
		return err
	}
	if len(datasets) == 0 {
		datasets = listFlag{"demo"}
	}
	cfgs, err := loadConfigs(*root, configs)
	if err != nil {
		return err
	}
	base, err := evalOptions("eval", now)
	if err != nil {
		return err
	}
	defer base.Registry.Close()
	start := time.Now()
	e := evalRun{root: *root, expansions: *expansions, sets: sets, setsUsed: map[string]bool{}, reportDir: *reportDir, reference: *reference,
		markdown: *markdown, check: *check, update: *update, cfgs: cfgs, base: base}
	// The gate records with the fp32 original of the users' model; the
	// users' model (int8 by default) is then checked against it, same
	// machine, on the shipped configurations (configs/).
	e.gateModel = *embedder
	if e.gateModel == "" {
		e.userModel = os.Getenv("VAULT_RAG_EMBEDDER")
		e.byScript = e.userModel == "" // each dataset gets the model a user's first index would choose
		e.manifest = base.Registry.Manifest()
		e.gateModel = e.manifest.GateModel(e.userModel)
	}
	var quality []gate.Quality
	failed := false
	for _, name := range datasets {
		qs, moved, err := e.dataset(ctx, name)
		if err != nil {
			return err
		}
		quality = append(quality, qs...)
		failed = failed || moved
	}
	for _, set := range sets {
		// A folder that matched no dataset is most likely the wrong one: say
		// so rather than leave its rows quietly missing.
		if !e.setsUsed[set.Name] {
			fmt.Fprintf(os.Stderr, "eval: --expansions-variant %s: %s holds no <dataset>.json for any dataset run\n", set.Name, set.Dir)
		}
	}
	if *reportDir != "" && len(quality) > 0 {
		if err := report.WriteQualityReport(*reportDir, quality); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	fmt.Fprintf(os.Stderr, "eval: done in %s\n", time.Since(start).Round(time.Millisecond))
	if *results != "" {
		if err := writeResults(*root, *results); err != nil {
			return err
		}
	}
	if failed {
		return exitError{code: 1, msg: "eval --check: numbers moved; if the change is intended, run `vault-rag eval --update` and commit the diff with its reason"}
	}
	return nil
}

// movedToSweep refuses eval's former --sweep and --sweep-out, which are now
// the sweep command's, with one line saying so (exit 2).
func movedToSweep(args []string) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "sweep" || name == "sweep-out") {
			return exitError{code: 2, msg: fmt.Sprintf("vault-rag eval: --%s has moved: run `vault-rag sweep FILE.yaml [--dataset ...] [--sweep-out FILE]`", name)}
		}
	}
	return nil
}

// writeResults writes the results page from root's committed baselines
// (after --update, the ones just written).
func writeResults(root, path string) error {
	var buf bytes.Buffer
	if err := report.RenderResults(&buf, filepath.Join(root, "baselines")); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the results page: %w", err)
	}
	fmt.Fprintf(os.Stderr, "eval: wrote %s\n", path)
	return nil
}

// evalRun is what an eval's datasets share: its flags, configurations and
// models.
type evalRun struct {
	root, expansions, reportDir, reference string
	sets                                   eval.ExpansionDirs // further expansion sets (--expansions-variant)
	setsUsed                               map[string]bool    // the sets some dataset had a file in
	markdown, check, update                bool
	cfgs                                   []*pipeline.Config
	base                                   eval.Options // the registry, work folder, clock and log
	gateModel                              string       // the model the baselines are recorded with
	userModel                              string       // the users' model, checked against the gate's ("": none)
	// byScript: no model was named, so each dataset's users' model is the
	// one a first index of its vault chooses by script (chooseEmbedder),
	// and its gate model that one's fp32 original.
	byScript bool
	manifest models.Manifest
}

// dataset scores the configurations on one dataset and prints the tables;
// then it writes (--update) or compares (--check) the baseline and checks the
// users' model against the gate's. failed: --check found numbers that moved.
func (e *evalRun) dataset(ctx context.Context, name string) (quality []gate.Quality, failed bool, err error) {
	ds, err := eval.OpenDataset(name, eval.OpenOptions{Root: e.root, WorkDir: e.base.WorkDir, Expansions: e.expansions})
	if err != nil {
		return nil, false, err
	}
	if err := eval.LoadExpansionSets(ds, e.sets); err != nil {
		return nil, false, err
	}
	for _, s := range ds.ExpansionSets {
		e.setsUsed[s.Name] = true
	}
	if e.byScript {
		script, _, err := vault.DetectScript(ctx, ds.VaultPath)
		if err != nil {
			return nil, false, err
		}
		e.userModel = e.manifest.EmbedderFor(script)
		e.gateModel = e.manifest.GateModel(e.userModel)
	}
	opts := e.base
	opts.Configs, opts.Embedder = e.cfgs, e.gateModel
	run, err := eval.Run(ctx, ds, opts)
	if err != nil {
		return nil, false, err
	}
	if e.markdown {
		fmt.Printf("\n### %s\n\n", ds.Name)
		err = report.MarkdownTables(os.Stdout, run, e.reference)
	} else {
		err = report.PrintTables(os.Stdout, run, e.reference)
	}
	if err != nil {
		return nil, false, err
	}
	if e.reportDir != "" {
		if err := report.WriteReport(e.reportDir, run, e.reference); err != nil {
			return nil, false, fmt.Errorf("write report: %w", err)
		}
	}
	if failed, err = e.baseline(ds.Name, run); err != nil {
		return nil, false, err
	}
	quality, qualityFailed, err := e.quality(ctx, ds, run)
	return quality, failed || qualityFailed, err
}

// baseline writes the dataset's baseline (--update) or compares the run with
// it (--check; failed: numbers moved).
func (e *evalRun) baseline(dataset string, run *eval.DatasetRun) (failed bool, err error) {
	path := gate.BaselinePath(e.root, dataset)
	cur := gate.BaselineOf(run)
	switch {
	case e.update:
		if err := gate.WriteBaseline(path, cur); err != nil {
			return false, err
		}
		fmt.Printf("eval: wrote %s\n", path)
	case e.check:
		old, err := gate.ReadBaseline(path)
		if err != nil {
			return false, fmt.Errorf("eval --check: %w (write it with `vault-rag eval --update`)", err)
		}
		diff := gate.DiffBaseline(old, cur)
		report.PrintBaselineDiff(os.Stdout, diff, dataset, path)
		return diff.Failed(), nil
	}
	return false, nil
}

// quality checks the users' model against the gate's run and prints the
// comparison; with --check a model outside the bound fails.
func (e *evalRun) quality(ctx context.Context, ds *eval.Dataset, gateRun *eval.DatasetRun) (qs []gate.Quality, failed bool, err error) {
	if e.userModel == "" || e.userModel == e.gateModel {
		return nil, false, nil
	}
	if qs, err = checkQuality(ctx, ds, gateRun, e.cfgs, e.userModel, e.base); err != nil {
		return nil, false, err
	}
	if err := report.PrintQuality(os.Stdout, qs, e.markdown); err != nil {
		return nil, false, err
	}
	for _, q := range qs {
		if !q.OK() && e.check {
			failed = true
			report.PrintQualityFailure(os.Stdout, q)
		}
	}
	return qs, failed, nil
}

// checkQuality runs the shipped configurations (those of configs/) over a
// dataset with the users' model and compares them with the gate's run: the
// model's mean nDCG@10 must stay within gate.QualityBound of its
// reference's.
func checkQuality(ctx context.Context, ds *eval.Dataset, gateRun *eval.DatasetRun, cfgs []*pipeline.Config, model string, opts eval.Options) ([]gate.Quality, error) {
	spec, err := opts.Registry.Manifest().Lookup(model)
	if err != nil {
		return nil, err
	}
	for _, c := range cfgs {
		if filepath.Base(filepath.Dir(c.File)) == "configs" {
			opts.Configs = append(opts.Configs, c)
		}
	}
	if len(opts.Configs) == 0 {
		return nil, nil
	}
	opts.Embedder = model
	run, err := eval.Run(ctx, ds, opts)
	if err != nil {
		return nil, fmt.Errorf("quality check of %s: %w", model, err)
	}
	return gate.CheckQuality(gateRun, run, spec.QualitySD), nil
}

// datasetUsage is the --dataset flag's help of eval and sweep: every
// registered kind of dataset.
func datasetUsage() string {
	ks := eval.DatasetKinds()
	descs := make([]string, len(ks))
	for i, k := range ks {
		descs[i] = k.Describe
	}
	if len(descs) > 1 {
		descs[len(descs)-2] += " or " + descs[len(descs)-1]
		descs = descs[:len(descs)-1]
	}
	return strings.Join(descs, ", ") + "; repeatable (default: demo)"
}

// loadConfigs reads the named configurations, or every one.
func loadConfigs(root string, names []string) ([]*pipeline.Config, error) {
	if len(names) > 0 {
		var out []*pipeline.Config
		for _, n := range names {
			c, err := pipeline.Find(root, n)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	var out []*pipeline.Config
	seen := map[string]string{}
	for _, dir := range []string{"configs", "experiments"} {
		cs, err := pipeline.LoadDir(filepath.Join(root, dir))
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if prev, dup := seen[c.Name]; dup {
				return nil, fmt.Errorf("configuration name %q is used by both %s and %s", c.Name, prev, c.File)
			}
			seen[c.Name] = c.File
			out = append(out, c)
		}
	}
	return out, nil
}

// evalOptions opens the model registry for eval and sweep and returns their
// run options: dataset indexes kept in the data folder's eval/, the clock
// now, progress lines on stderr after "command: ". The caller closes the
// registry.
func evalOptions(command string, now time.Time) (eval.Options, error) {
	reg, err := newRegistry()
	if err != nil {
		return eval.Options{}, err
	}
	return eval.Options{Registry: reg, WorkDir: filepath.Join(modelSettings().DataDir, "eval"), Now: now,
		Log: func(s string) { fmt.Fprintln(os.Stderr, command+": "+s) }}, nil
}
