package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vault-rag/vault-rag/eval/gate"
	"github.com/vault-rag/vault-rag/internal/table"
)

// qualityRows are the rows of the quality table.
func qualityRows(qs []gate.Quality) ([]string, [][]string) {
	head := []string{"dataset", "configuration", "reference nDCG@10", "model nDCG@10", "Δ", "p", "bound", ""}
	var rows [][]string
	for _, q := range qs {
		verdict := "within"
		if !q.OK() {
			verdict = "OUTSIDE"
		}
		rows = append(rows, []string{q.Dataset, q.Config, table.Fixed(q.ReferenceNDCG), table.Fixed(q.ModelNDCG), fmt.Sprintf("%+.4f", q.Delta()), table.Fixed(q.P), fmt.Sprintf("±%.4f", q.Bound), verdict})
	}
	return head, rows
}

// PrintQuality prints the quality check's table (gate.CheckQuality: the
// users' model against the gate's), as markdown when md is set.
func PrintQuality(w io.Writer, qs []gate.Quality, md bool) error {
	if len(qs) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s (users' default) against %s (the gate's), same machine:\n", qs[0].Model, qs[0].Reference)
	head, rows := qualityRows(qs)
	if md {
		return table.Markdown(w, head, rows)
	}
	return table.Terminal(w, head, rows)
}

// WriteQualityReport writes dir/quality.md: the users' model against the
// gate's on every dataset.
func WriteQualityReport(dir string, qs []gate.Quality) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "quality.md"))
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "# %s against %s\n\nMean nDCG@10 of the shipped configurations with each embedder, indexed and run on the same machine; p is the paired randomization test's. The gate records with %s; %s must stay within the bound on every dataset.\n", qs[0].Model, qs[0].Reference, qs[0].Reference, qs[0].Model)
	if err := PrintQuality(f, qs, true); err != nil {
		return err
	}
	return f.Close()
}

// PrintBaselineDiff writes what the gate found comparing one dataset's run
// with its baseline at path (gate.DiffBaseline): the near-tie flips it let
// through and how many of the compared results they are, then the real
// changes, or that the dataset matches.
func PrintBaselineDiff(w io.Writer, r gate.BaselineDiff, dataset, path string) {
	fmt.Fprintf(w, "eval --check: %s: %d per-query results compared, %d waved through as near-tie flips (at most %d, 1 %%)\n", dataset, r.Compared, r.Flipped, gate.MaxFlipped(r.Compared))
	if len(r.Flips) > 0 {
		fmt.Fprintf(w, "eval --check: %s: near-tie flips (notes within the tolerance of each other in both runs):\n", dataset)
		for _, d := range r.Flips {
			fmt.Fprintln(w, "  "+d)
		}
	}
	if r.TooManyFlipped() {
		fmt.Fprintf(w, "eval --check: %s: %d near-tie flips are more than 1 %% of %d results: that is a change, not noise\n", dataset, r.Flipped, r.Compared)
	}
	if len(r.Changes) > 0 {
		fmt.Fprintf(w, "eval --check: %s differs from %s in %d places:\n", dataset, path, len(r.Changes))
		for _, d := range r.Changes {
			fmt.Fprintln(w, "  "+d)
		}
	} else if !r.TooManyFlipped() {
		fmt.Fprintf(w, "eval --check: %s matches %s\n", dataset, path)
	}
}
