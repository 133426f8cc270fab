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
	"github.com/vault-rag/vault-rag/internal/vault"
)

func cmdReindex(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("reindex", flag.ContinueOnError)
	incremental := fs.Bool("incremental", false, "re-embed only notes whose content changed")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	vault := fs.String("vault", vaultPath(), "the vault folder")
	db := fs.String("db", "", dbFlagUsage)
	force := fs.Bool("force", false, "replace an index built from another vault (without it, such an index is refused)")
	embedder := fs.String("embedder", os.Getenv("VAULT_RAG_EMBEDDER"), "the embedding `model` (vault-rag models lists them) [VAULT_RAG_EMBEDDER]; unset: the index's, and for a first index the one for the vault's script")
	every := fs.Duration("progress-every", 10*time.Second, "when stderr is not a terminal, print a progress line this often (0: after every batch)")
	setUsage(fs, "[flags]", "Builds the index of the vault: notes, chunks, keyword postings and vectors (--incremental re-embeds\nonly the notes that changed). The first index of a vault fetches its embedder if it is not installed.")
	if err := parseFlags(fs, args, operands{}); err != nil {
		return err
	}
	if err := checkVault(*vault); err != nil {
		return err
	}
	reg, err := newRegistry()
	if err != nil {
		return err
	}
	defer reg.Close()
	if *db, err = indexPath(*db, *vault); err != nil {
		return err
	}
	name, why, record, err := chooseEmbedder(ctx, reg.Manifest(), *embedder, *vault, *db)
	if err != nil {
		return err
	}
	emb, err := reg.Lazy(name) // an unchanged vault never loads the model
	if err != nil {
		return err
	}
	if !*asJSON {
		fmt.Fprintf(os.Stderr, "reindex: embedder %s (%s)\n", name, why)
	}
	if err := ensureEmbedder(ctx, "reindex", name); err != nil {
		return err
	}
	opts := index.BuildOptions{VaultPath: *vault, DBPath: *db, Incremental: *incremental, Scan: scanOptions(), Force: *force}
	opts.EmbedderWhy = record
	opts.Progress = newProgressLine(os.Stderr, isTerminal(os.Stderr), *every, time.Now).update
	// One build of an index at a time, across processes (a server's
	// included): this one waits for a running one, then runs, which after
	// it re-reads only what changed.
	opts.WaitForBuild = true
	if h, running, err := index.RunningBuild(*db); err == nil && running {
		fmt.Fprintf(os.Stderr, "reindex: %s; waiting for it to end (Ctrl-C stops waiting)\n", (&index.BuildRunningError{DBPath: *db, Holder: h}).Error())
	}
	rep, err := index.Build(ctx, emb, opts)
	if err != nil {
		return vaultMismatchHint(err)
	}
	if spec, err := reg.Manifest().Lookup(name); err == nil {
		if w := spec.ScriptWarning(rep.Script, rep.ScriptShare); w != "" {
			fmt.Fprintf(os.Stderr, "reindex: warning: %s\n", termSafe(w))
		}
	}
	if *asJSON {
		return printJSON(rep)
	}
	printReport(os.Stdout, rep, *db)
	return nil
}

func printReport(w io.Writer, rep index.Report, db string) {
	fmt.Fprintf(w, "indexed %d notes, %d chunks into %s (%s, %s)\n", rep.Notes, rep.Chunks, termSafe(db), rep.Mode, rep.Duration.Round(time.Millisecond))
	if rep.Fallback != "" {
		fmt.Fprintf(w, "  incremental build ran as a full one: %s\n", termSafe(rep.Fallback))
	}
	fmt.Fprintf(w, "  notes: %d added, %d changed, %d removed, %d unchanged\n", rep.Added, rep.Changed, rep.Removed, rep.Unchanged)
	fmt.Fprintf(w, "  chunks: %d embedded, %d embeddings reused", rep.Embedded, rep.Reused)
	if rep.KeywordOnly > 0 {
		fmt.Fprintf(w, ", %d for keyword search only (of notes too long to embed)", rep.KeywordOnly)
	}
	if rep.Truncated > 0 {
		fmt.Fprintf(w, ", %d embedded as a prefix only (one word longer than the window)", rep.Truncated)
	}
	fmt.Fprintln(w)
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(w, "  skipped %d:\n", len(rep.Skipped))
		printProblems(w, "files", rep.Skipped)
	}
	if len(rep.Warnings) > 0 {
		fmt.Fprintf(w, "  indexed with warnings %d:\n", len(rep.Warnings))
		printProblems(w, "notes", rep.Warnings)
	}
}

// problemExamples is how many files a summary line names.
const problemExamples = 3

// printProblems prints a report's files with problems, grouped by kind
// (vault.GroupProblems): a kind that one file has is that file's own line,
// "path: reason"; a kind several share is one line, with their count and the
// first few of them, "37 notes: kind (e.g. a.md "x", b.md "y", c.md "z", ...)".
// The report itself (--json, vault_reindex) keeps every file.
func printProblems(w io.Writer, noun string, files []vault.Skipped) {
	for _, g := range vault.GroupProblems(files) {
		if len(g.Files) == 1 {
			fmt.Fprintf(w, "    %s: %s\n", termSafe(g.Files[0].Path), termSafe(g.Files[0].Reason))
			continue
		}
		var ex []string
		for _, f := range g.Files[:min(len(g.Files), problemExamples)] {
			ex = append(ex, termSafe(strings.TrimSpace(f.Path+" "+f.Detail)))
		}
		more := ""
		if len(g.Files) > problemExamples {
			ex[0] = "e.g. " + ex[0]
			more = ", ..."
		}
		fmt.Fprintf(w, "    %d %s: %s (%s%s)\n", len(g.Files), noun, termSafe(g.Kind), strings.Join(ex, ", "), more)
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressLine shows where a build is: on a terminal one line redrawn in
// place, elsewhere (a log file, CI) a plain line every so often.
type progressLine struct {
	w     io.Writer
	tty   bool
	every time.Duration
	now   func() time.Time

	phase     string
	start     time.Time // of the current phase
	lastPrint time.Time
	drawn     bool
}

func newProgressLine(w io.Writer, tty bool, every time.Duration, now func() time.Time) *progressLine {
	return &progressLine{w: w, tty: tty, every: every, now: now}
}

func (p *progressLine) update(pr index.Progress) {
	t := p.now()
	if pr.Phase != p.phase {
		p.phase, p.start = pr.Phase, t
		p.lastPrint = time.Time{}
	}
	last := pr.Done == pr.Total
	if pr.Phase == "embedding" && pr.Total == 0 {
		if pr.Reused > 0 && !p.tty {
			fmt.Fprintf(p.w, "embedding: nothing to embed, %d chunks reused\n", pr.Reused)
		}
		p.clear()
		return
	}
	if p.tty {
		// Redraw at most ten times a second, and always the last state.
		if !last && !p.lastPrint.IsZero() && t.Sub(p.lastPrint) < 100*time.Millisecond {
			return
		}
		fmt.Fprintf(p.w, "\r\033[K%s", p.text(pr, t))
		p.drawn, p.lastPrint = true, t
		if last && pr.Phase == "embedding" {
			p.clear()
		}
		return
	}
	if pr.Phase == "reading" && !last {
		// A log gets a reading line only when reading is slow.
		if t.Sub(p.start) < p.every || t.Sub(p.lastPrint) < p.every {
			return
		}
	} else if !last && pr.Done > 0 && !p.lastPrint.IsZero() && t.Sub(p.lastPrint) < p.every {
		return
	}
	if pr.Phase == "reading" && last && p.lastPrint.IsZero() {
		return // quick: no line
	}
	fmt.Fprintln(p.w, p.text(pr, t))
	p.lastPrint = t
}

func (p *progressLine) clear() {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// text is "embedding 1200/5000 chunks (24%), 8.1 chunks/s, ETA 7m49s, 300
// reused". The ETA is taken from tokens, not chunks: batches run shortest
// first, so the chunk rate falls as the build goes on.
func (p *progressLine) text(pr index.Progress, t time.Time) string {
	el := t.Sub(p.start)
	if pr.Phase == "reading" {
		return fmt.Sprintf("reading %d/%d notes (%d%%)", pr.Done, pr.Total, pct(pr.Done, pr.Total))
	}
	s := fmt.Sprintf("embedding %d/%d chunks (%d%%)", pr.Done, pr.Total, pct(pr.Done, pr.Total))
	if pr.Done > 0 && el > 0 {
		s += fmt.Sprintf(", %.1f chunks/s", float64(pr.Done)/el.Seconds())
		if pr.Done < pr.Total && pr.Tokens > 0 {
			eta := time.Duration(float64(el) * float64(pr.TotalTokens-pr.Tokens) / float64(pr.Tokens))
			s += ", ETA " + eta.Round(time.Second).String()
		} else if pr.Done == pr.Total {
			s += ", took " + el.Round(100*time.Millisecond).String()
		}
	}
	if pr.Reused > 0 {
		s += fmt.Sprintf(", %d reused", pr.Reused)
	}
	return s
}

func pct(a, b int) int {
	if b == 0 {
		return 100
	}
	return a * 100 / b
}
