// Package table renders tables of text cells, a header and rows, with
// tablewriter: as markdown (reports, the results page, bench's figures) or
// as a boxed table for a terminal. Every table of eval and bench goes
// through it, so they all look alike.
package table

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Fixed writes x with four decimals: every score, p and mean in eval's
// tables, so a change shows at the fourth decimal and nothing below it.
func Fixed(x float64) string { return fmt.Sprintf("%.4f", x) }

// Markdown writes a markdown table, then a blank line; nothing when head is
// nil. Headers are kept as written (no upper-casing) and cells never wrap: a
// wrapped cell would split a row over two table lines.
func Markdown(w io.Writer, head []string, rows [][]string) error {
	if head == nil {
		return nil
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	if err := fill(t, head, rows); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Terminal writes a boxed table for a terminal; nothing when head is nil.
// Headers are kept as written.
func Terminal(w io.Writer, head []string, rows [][]string) error {
	if head == nil {
		return nil
	}
	return fill(tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off)), head, rows)
}

func fill(t *tablewriter.Table, head []string, rows [][]string) error {
	t.Header(cells(head)...)
	for _, row := range rows {
		if err := t.Append(cells(row)...); err != nil {
			return err
		}
	}
	return t.Render()
}

func cells(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
