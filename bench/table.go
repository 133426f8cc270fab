package bench

import (
	"fmt"
	"io"
	"slices"

	"github.com/vault-rag/vault-rag/internal/table"
)

// datasets orders the table's columns from small to large.
var datasets = []string{"demo", "cranfield", "cacm", "blue-book", "gen-3000", "gen-30000"}

// Markdown writes the figures as one table per section, a row per figure and
// a column per dataset, so growth from the demo vault to 30,000 notes reads
// across a row.
func (r *Results) Markdown(w io.Writer) error {
	fmt.Fprintf(w, "Machine: %s. Run started %s.\n\n", r.Machine, r.Started.Format("2006-01-02 15:04 UTC"))
	var sections []string
	seen := map[string]bool{}
	for _, f := range r.Figures {
		if !seen[f.Section] {
			seen[f.Section] = true
			sections = append(sections, f.Section)
		}
	}
	for _, sec := range sections {
		var cols []string
		for _, d := range datasets {
			for _, f := range r.Figures {
				if f.Section == sec && f.Dataset == d {
					cols = append(cols, d)
					break
				}
			}
		}
		for _, f := range r.Figures { // datasets the order does not know, last
			if f.Section == sec && !slices.Contains(datasets, f.Dataset) && !slices.Contains(cols, f.Dataset) {
				cols = append(cols, f.Dataset)
			}
		}
		fmt.Fprintf(w, "**%s**\n\n", sec)
		var names []string
		var rows [][]string
		cells := map[string]map[string]string{}
		for _, f := range r.Figures {
			if f.Section != sec {
				continue
			}
			if cells[f.Name] == nil {
				cells[f.Name] = map[string]string{}
				names = append(names, f.Name)
			}
			cells[f.Name][f.Dataset] = cell(f)
		}
		for _, n := range names {
			row := []string{n}
			for _, c := range cols {
				v := cells[n][c]
				if v == "" {
					v = "—"
				}
				row = append(row, v)
			}
			rows = append(rows, row)
		}
		if err := table.Markdown(w, append([]string{"figure"}, cols...), rows); err != nil {
			return err
		}
	}
	return nil
}

func cell(f Figure) string {
	if f.Value == 0 && f.Note != "" {
		return f.Note
	}
	var v string
	switch {
	case f.Unit == "" && f.Value != float64(int64(f.Value)): // a share: recall
		v = fmt.Sprintf("%.4f", f.Value)
	case f.Value >= 100 || f.Unit == "":
		v = fmt.Sprintf("%.0f", f.Value)
	case f.Value >= 10:
		v = fmt.Sprintf("%.1f", f.Value)
	default:
		v = fmt.Sprintf("%.2f", f.Value)
	}
	if f.Unit != "" {
		v += " " + f.Unit
	}
	return v
}
