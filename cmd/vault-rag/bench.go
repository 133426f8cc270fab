package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vault-rag/vault-rag/bench"
	"github.com/vault-rag/vault-rag/internal/measure"
)

// defaultThroughputVault is the vault the throughput section measures beside
// the demo's: blue-book, a real vault of about 3,200 chunks, where a checkout
// sits beside the shared datasets.
const defaultThroughputVault = "../shared/datasets/blue-book/vault"

func cmdBench(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	root := fs.String("root", configRoot(), "the repository (vault/, configs/, eval/) [VAULT_RAG_ROOT]")
	cranfield := fs.String("cranfield", "", "a BEIR folder to measure latency on (e.g. ../shared/datasets/cranfield)")
	sizes := fs.String("sizes", "3000,30000", "generated vault sizes, comma-separated (empty: none)")
	queries := fs.Int("queries", 50, "queries per dataset")
	reps := fs.Int("reps", 3, "repetitions of the reindex measurements")
	out := fs.String("out", "report/bench", "write OUT.md and OUT.json")
	var recall listFlag
	fs.Var(&recall, "recall", "a BEIR folder for the binary-search recall check, indexed with the default embedder; repeatable (e.g. ../shared/datasets/cacm)")
	var first listFlag
	fs.Var(&first, "first-answer", "a vault whose first build is timed to its first answer and to its end; repeatable (the largest --sizes vault is timed too, its end projected)")
	throughputVault := fs.String("throughput-vault", defaultThroughputVault, "a vault of 3,000 chunks or more the throughput section embeds, raw and through the indexer, beside the demo vault (empty: the demo vault alone)")
	prepare := fs.Bool("prepare", false, "only generate and index the scale vaults, for a later run")
	only := fs.String("only", "", "run one section alone: "+bench.SectionHelp())
	embedder := fs.String("embedder", embedderName(), "the embedder of the first-answer, throughput, latency and recall sections [VAULT_RAG_EMBEDDER]")
	rerankQueries := fs.Int("rerank-queries", 10, "demo queries the rerank section times per passage and scorer")
	recallNotes := fs.Int("recall-notes", 0, "generate a vault of this many notes, embed it for real once (kept for later runs; 7000 notes are about 32,000 chunks) and measure the binary vector search's recall on it per oversampling factor (0: skip)")
	setUsage(fs, "[flags]", "Measures reindex time, query latency, rerank cost and embedding throughput, and writes a table\nand JSON (OUT.md, OUT.json); takes a while.")
	if err := parseFlags(fs, args, operands{}); err != nil {
		return err
	}
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("--sizes: %q is not a note count", s)
		}
		ns = append(ns, n)
	}
	if *only == "recall" && *recallNotes <= 0 {
		return errors.New("--only recall measures a generated vault embedded for real: give its size with --recall-notes (e.g. 7000)")
	}
	if *throughputVault != "" && (*only == "" || *only == "throughput") {
		if _, err := os.Stat(*throughputVault); err != nil {
			return fmt.Errorf("--throughput-vault: %w (give a vault of 3,000 chunks or more, or --throughput-vault= for the demo vault alone)", err)
		}
	}
	settings := modelSettings()
	res, err := bench.Run(ctx, bench.Options{Root: *root, DataDir: settings.DataDir, Runtime: settings.Runtime,
		Cranfield: *cranfield, Recall: []string(recall), Sizes: ns, Queries: *queries, Reps: *reps, Prepare: *prepare,
		Only: *only, Embedder: *embedder, RerankQueries: *rerankQueries, Throughput: *throughputVault, FirstAnswer: []string(first), RecallNotes: *recallNotes,
		Log: func(s string) { fmt.Fprintln(os.Stderr, "bench: "+s) }})
	if err != nil {
		return err
	}
	if *prepare {
		return nil
	}
	if *only != "" && !strings.HasSuffix(*out, "-"+*only) {
		*out += "-" + *only // a section alone does not overwrite the full report
	}
	if err := measure.WriteJSON(*out+".json", res); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(*out + ".md")
	if err != nil {
		return err
	}
	defer f.Close()
	if err := res.Markdown(f); err != nil {
		return fmt.Errorf("write %s.md: %w", *out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s.md: %w", *out, err)
	}
	return res.Markdown(os.Stdout)
}
