package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vault-rag/vault-rag/gen"
)

// cmdGen writes a synthetic vault for benchmarks.
func cmdGen(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	setUsage(fs, "--notes N --out DIR [flags]", "Writes a synthetic vault of exactly N notes in clusters of about 50 on one subject, deterministic\nfrom the seed. Refuses a folder that is not empty unless --force, which overwrites only its own files.")
	notes := fs.Int("notes", 0, "how many notes to generate (required)")
	out := fs.String("out", "", "the folder to write the vault into (required)")
	seed := fs.Uint64("seed", 1, "random seed: the same notes and seed give the same files")
	force := fs.Bool("force", false, "write into a folder that is not empty (overwrites generated files only)")
	if err := parseFlags(fs, args, operands{}); err != nil {
		return err
	}
	if *notes < 1 || *out == "" {
		fs.Usage() // parseFlags left the output on stderr
		return exitError{code: 2}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sum, err := gen.Generate(ctx, *out, gen.Options{Notes: *notes, Seed: *seed, Force: *force})
	if errors.Is(err, gen.ErrNotEmpty) {
		return exitError{code: 1, msg: "vault-rag gen: " + err.Error()}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "generated %d notes in %d folders (%d clusters) under %s\n", sum.Notes, sum.Folders, sum.Clusters, sum.Dir)
	fmt.Fprintf(os.Stdout, "  %d files, %s, in %s (seed %d)\n", sum.Files, genSize(sum.Bytes), sum.Elapsed.Round(time.Millisecond), *seed)
	return nil
}

// genSize formats a size in decimal units, as du -h --si would.
func genSize(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
