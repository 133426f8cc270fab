package main

import (
	"fmt"
	"strings"
	"testing"
)

// The table of calls in the printed report: a column per figure, the tool
// names left-aligned and the numbers right-aligned under their headings, at
// the widths the report has always had.
func TestWriteTableCalls(t *testing.T) {
	r := &Report{
		Tools: []ToolStats{
			{Tool: "search", Calls: 412, Errors: 0, P50MS: 12.34, P95MS: 80.5, P99MS: 140, MaxMS: 1234.56, MeanMS: 20.05},
			{Tool: "vault_read", Calls: 88, Errors: 2, P50MS: 0.9, P95MS: 2.1, P99MS: 3, MaxMS: 4.44, MeanMS: 1.2},
		},
		Overall: ToolStats{Tool: "all", Calls: 500, Errors: 2, P50MS: 10, P95MS: 70, P99MS: 130, MaxMS: 1234.56, MeanMS: 16.7},
	}
	var b strings.Builder
	r.WriteTable(&b)
	line := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }
	want := line("%-14s %6s %6s %9s %9s %9s %9s %9s\n", "tool", "calls", "errors", "p50 ms", "p95 ms", "p99 ms", "max ms", "mean ms")
	for _, s := range append(r.Tools, r.Overall) {
		want += line("%-14s %6d %6d %9.1f %9.1f %9.1f %9.1f %9.1f\n", s.Tool, s.Calls, s.Errors, s.P50MS, s.P95MS, s.P99MS, s.MaxMS, s.MeanMS)
	}
	if !strings.Contains(b.String(), "\n\n"+want+"\n") {
		t.Errorf("the report's table of calls:\n%s\nwant, between blank lines:\n%s", b.String(), want)
	}
}
