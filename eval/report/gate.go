package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/vault-rag/vault-rag/eval"
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
		for _, d := range FindingLines(r.Flips) {
			fmt.Fprintln(w, "  "+d)
		}
	}
	if r.TooManyFlipped() {
		fmt.Fprintf(w, "eval --check: %s: %d near-tie flips are more than 1 %% of %d results: that is a change, not noise\n", dataset, r.Flipped, r.Compared)
	}
	if len(r.Changes) > 0 {
		fmt.Fprintf(w, "eval --check: %s differs from %s in %d places:\n", dataset, path, len(r.Changes))
		for _, d := range FindingLines(r.Changes) {
			fmt.Fprintln(w, "  "+d)
		}
	} else if !r.TooManyFlipped() {
		fmt.Fprintf(w, "eval --check: %s matches %s\n", dataset, path)
	}
}

// PrintQualityFailure writes eval --check's line for a configuration whose
// quality check failed: the model's mean nDCG@10 is outside its bound.
func PrintQualityFailure(w io.Writer, q gate.Quality) {
	fmt.Fprintf(w, "eval --check: %s / %s: %s's mean nDCG@10 is %+.4f from %s's, outside ±%.3f\n", q.Dataset, q.Config, q.Model, q.Delta(), q.Reference, q.Bound)
}

// FindingLines words findings, one line each (FindingLine).
func FindingLines(fs []gate.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = FindingLine(f)
	}
	return out
}

// FindingLine words one of the gate's findings (gate.DiffBaseline's,
// gate.CompareRanked's) as one line, which names the configuration, query or
// note it is about and the figures before and after.
func FindingLine(f gate.Finding) string {
	switch f := f.(type) {
	case gate.Unencodable:
		if f.Run {
			return fmt.Sprintf("this run's baseline cannot be written: %v", f.Err)
		}
		return fmt.Sprintf("the baseline cannot be written: %v", f.Err)
	case gate.DatasetChanged:
		return fmt.Sprintf("dataset: queries %d → %d, notes %d → %d, chunks %d → %d", f.Old.Queries, f.Cur.Queries, f.Old.Notes, f.Cur.Notes, f.Old.Chunks, f.Cur.Chunks)
	case gate.EmbedderChanged:
		return fmt.Sprintf("embedder: %s → %s (the gate records with %s)", f.Old, f.Cur, f.Old)
	case gate.StampChanged:
		return fmt.Sprintf("index stamp: %s → %s (the vault, the embedder or the schema changed)", eval.ShortStamp(f.Old), eval.ShortStamp(f.Cur))
	case gate.ConfigAdded:
		return fmt.Sprintf("%s: new configuration (%s), not in the baseline", f.Config, f.Status)
	case gate.ConfigNotRun:
		return fmt.Sprintf("%s: in the baseline but not run", f.Config)
	case gate.StatusChanged:
		return fmt.Sprintf("%s: status %q → %q", f.Config, f.Old, f.Cur)
	case gate.QueryMoved:
		return queryMovedLine(f)
	case gate.MeasureMoved:
		return fmt.Sprintf("%s%s: %s %s → %s", f.Config, kindSuffix(f.Kind), f.Measure, f.Old, f.Cur) + byFlipsSuffix(f.ByFlips)
	case gate.MeasuresUnreadable:
		return fmt.Sprintf("%s%s: measures %+v → %+v (%v)", f.Config, kindSuffix(f.Kind), f.Old, f.Cur, f.Err) + byFlipsSuffix(f.ByFlips)
	case gate.FormatOnly:
		return "the baseline file differs from what this run would write (formatting or order)"
	case gate.OrderChanged:
		return fmt.Sprintf("order: %s where %s was (no near-tie explains it)", f.Got, f.Want)
	case gate.ScoreMoved:
		return fmt.Sprintf("score: %s %.6f → %.6f (moved %.2g, tolerance %.2g)", f.Path, f.Want, f.Got, math.Abs(f.Want-f.Got), f.Tolerance)
	case gate.LengthChanged:
		return fmt.Sprintf("length: %d notes → %d", f.Want, f.Got)
	case gate.CutFlip:
		which := "dropped"
		if f.Added {
			which = "added"
		}
		return fmt.Sprintf("%s %s at the cut (pushed by a near-tied note)", f.Path, which)
	case gate.TiedMoved:
		switch {
		case f.To == 0:
			return fmt.Sprintf("%s left the list (near-tie)", f.Path)
		case f.From == 0:
			return fmt.Sprintf("%s entered the list at rank %d (near-tie)", f.Path, f.To)
		}
		return fmt.Sprintf("%s rank %d → %d (near-tie)", f.Path, f.From, f.To)
	}
	return fmt.Sprintf("%T %+v", f, f)
}

// queryMovedLine words a query that moved: its ranks, nDCG@10 and answer
// before and after, and what near-ties explain of it.
func queryMovedLine(q gate.QueryMoved) string {
	line := fmt.Sprintf("%s: query %s: relevant ranks %v → %v, nDCG@10 %s → %s", q.Config, q.Query, q.OldRanks, q.CurRanks, q.OldNDCG.Fixed(), q.CurNDCG.Fixed())
	if q.AnswerMoved {
		line += fmt.Sprintf(", answer@1 %d → %d, bytes %d → %d", q.OldAnswer, q.CurAnswer, q.OldBytes, q.CurBytes)
	}
	switch u := q.Unexplained; {
	case len(q.NearTied) == 0:
		return line + " (no near-tie in both runs explains it)"
	case u != nil:
		return fmt.Sprintf("%s (%s moved from rank %d to %d, further than %d near-tied notes can push it; 0 is outside the top 10)", line, u.Path, u.From, u.To, u.NearTied)
	}
	return fmt.Sprintf("%s (near-tie among %s in both runs)", line, strings.Join(q.NearTied, ", "))
}

// kindSuffix names the query kind means are of, after the configuration:
// " [paraphrase]"; nothing for the means over all queries.
func kindSuffix(kind string) string {
	if kind == "" {
		return ""
	}
	return " [" + kind + "]"
}

func byFlipsSuffix(byFlips bool) string {
	if byFlips {
		return " (moved only by the near-tie flips above)"
	}
	return ""
}
