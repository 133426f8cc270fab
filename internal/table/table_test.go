package table

import (
	"fmt"
	"strings"
	"testing"
)

func TestMarkdown(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, []string{"configuration", "nDCG@10"}, [][]string{{"shipping", "0.8604"}, {"keyword", "—"}}); err != nil {
		t.Fatal(err)
	}
	want := "| configuration | nDCG@10 |\n" +
		"|:--------------|:--------|\n" +
		"| shipping      | 0.8604  |\n" +
		"| keyword       | —       |\n" +
		"\n"
	if b.String() != want {
		t.Errorf("markdown table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTerminal(t *testing.T) {
	var b strings.Builder
	if err := Terminal(&b, []string{"configuration", "p50 ms"}, [][]string{{"shipping", "1.5"}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"configuration", "p50 ms", "shipping", "1.5"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("terminal table lacks %q:\n%s", s, b.String())
		}
	}
	if strings.Contains(b.String(), "CONFIGURATION") {
		t.Errorf("the header was upper-cased:\n%s", b.String())
	}
}

func TestNoHeadWritesNothing(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, nil, [][]string{{"x"}}); err != nil || b.Len() != 0 {
		t.Errorf("markdown without a head: %q, %v", b.String(), err)
	}
	if err := Terminal(&b, nil, [][]string{{"x"}}); err != nil || b.Len() != 0 {
		t.Errorf("terminal without a head: %q, %v", b.String(), err)
	}
}

func TestFixed(t *testing.T) {
	for x, want := range map[float64]string{0: "0.0000", 1: "1.0000", 0.86044: "0.8604", 0.86045001: "0.8605", -0.25: "-0.2500", 12.5: "12.5000"} {
		if got := Fixed(x); got != want {
			t.Errorf("Fixed(%v) = %q, want %q", x, got, want)
		}
	}
}

// Plain columns: the first left-aligned, numbers right-aligned, each column
// at least its given width and widened, not cut, for a longer cell.
func TestColumns(t *testing.T) {
	var b strings.Builder
	rows := [][]string{{"search", "120", "12.3"}, {"a_very_long_tool_name", "7", "1.0"}}
	if err := Columns(&b, []string{"tool", "calls", "p50 ms"}, rows, []int{14, 6, 9}); err != nil {
		t.Fatal(err)
	}
	want := "tool                   calls    p50 ms\n" +
		"search                   120      12.3\n" +
		"a_very_long_tool_name      7       1.0\n"
	if b.String() != want {
		t.Errorf("columns:\n%q\nwant:\n%q", b.String(), want)
	}
	b.Reset()
	if err := Columns(&b, []string{"tool", "calls"}, [][]string{{"search", "120"}}, []int{14, 6}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%-14s %6s\n%-14s %6s\n", "tool", "calls", "search", "120"); b.String() != want {
		t.Errorf("columns at their given widths:\n%q\nwant:\n%q", b.String(), want)
	}
}
