// Package table renders tables of text cells, a header and rows, with
// tablewriter: as markdown (reports, the results page, bench's figures), as
// a boxed table for a terminal, or as plain columns (the load test's
// report). Every table of eval, bench and the load test goes through it, so
// they all look alike.
package table

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
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

// Columns writes a plain table for a terminal: no borders or rules, columns
// a space apart, the first left-aligned and the others right-aligned (they
// hold numbers). A column is as wide as its widest cell, and at least its
// entry in widths, so a report's columns stay put from run to run. Nothing
// when head is nil.
func Columns(w io.Writer, head []string, rows [][]string, widths []int) error {
	if head == nil {
		return nil
	}
	align := make([]tw.Align, len(head))
	pads := make([]tw.Padding, len(head))
	cols := tw.Mapper[int, int]{}
	for i := range head {
		align[i], pads[i] = tw.AlignRight, tw.Padding{Left: " ", Overwrite: true}
		if i == 0 {
			align[i], pads[i] = tw.AlignLeft, tw.Padding{Overwrite: true}
		}
		width := 0
		if i < len(widths) {
			width = widths[i]
		}
		for _, row := range append([][]string{head}, rows...) {
			if i < len(row) {
				width = max(width, twwidth.Width(row[i]))
			}
		}
		// A width below a cell's would cut the cell short.
		cols[i] = width + twwidth.Width(pads[i].Left)
	}
	none := tw.Rendition{Borders: tw.BorderNone, Symbols: tw.NewSymbols(tw.StyleNone),
		Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone}}
	return fill(tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(none)),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithHeaderPaddingPerColumn(pads),
		tablewriter.WithRowPaddingPerColumn(pads),
		tablewriter.WithColumnWidths(cols),
	), head, rows)
}
