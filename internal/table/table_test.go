package table

import (
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
