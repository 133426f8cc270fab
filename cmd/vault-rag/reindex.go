package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/index"
)

func cmdReindex(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("reindex", flag.ContinueOnError)
	incremental := fs.Bool("incremental", false, "re-embed only notes whose content changed")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	vault := fs.String("vault", vaultPath(), "the vault folder")
	db := fs.String("db", dbPath(), "the index file")
	embedder := fs.String("embedder", embedderName(), "the embedding model (see `vault-rag models`)")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	reg, err := newRegistry()
	if err != nil {
		return err
	}
	defer reg.Close()
	emb, err := reg.Lazy(*embedder) // an unchanged vault never loads the model
	if err != nil {
		return err
	}
	opts := index.BuildOptions{VaultPath: *vault, DBPath: *db, Incremental: *incremental}
	if isTerminal(os.Stderr) && !*asJSON {
		opts.Progress = progressBar(os.Stderr, "embedding")
	}
	rep, err := index.Build(ctx, emb, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	printReport(os.Stdout, rep, *db)
	return nil
}

func printReport(w io.Writer, rep index.Report, db string) {
	fmt.Fprintf(w, "indexed %d notes, %d chunks into %s (%s, %s)\n", rep.Notes, rep.Chunks, db, rep.Mode, rep.Duration.Round(time.Millisecond))
	if rep.Fallback != "" {
		fmt.Fprintf(w, "  incremental build ran as a full one: %s\n", rep.Fallback)
	}
	fmt.Fprintf(w, "  notes: %d added, %d changed, %d removed, %d unchanged\n", rep.Added, rep.Changed, rep.Removed, rep.Unchanged)
	fmt.Fprintf(w, "  chunks: %d embedded, %d embeddings reused", rep.Embedded, rep.Reused)
	if rep.Truncated > 0 {
		fmt.Fprintf(w, ", %d embedded as a prefix only (one word longer than the window)", rep.Truncated)
	}
	fmt.Fprintln(w)
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(w, "  skipped %d:\n", len(rep.Skipped))
		for _, s := range rep.Skipped {
			fmt.Fprintf(w, "    %s: %s\n", s.Path, s.Reason)
		}
	}
	if len(rep.Warnings) > 0 {
		fmt.Fprintf(w, "  indexed with warnings %d:\n", len(rep.Warnings))
		for _, s := range rep.Warnings {
			fmt.Fprintf(w, "    %s: %s\n", s.Path, s.Reason)
		}
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressBar draws a one-line bar, redrawn in place.
func progressBar(w io.Writer, label string) func(done, total int) {
	return func(done, total int) {
		if total == 0 {
			return
		}
		const width = 30
		n := done * width / total
		fmt.Fprintf(w, "\r%s [%s%s] %d/%d", label, strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
		if done == total {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}
