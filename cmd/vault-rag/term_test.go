package main

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/pipeline"
)

func TestTermSafe(t *testing.T) {
	tests := []struct {
		name, in, want, wantLines string
	}{
		{"plain", "notes/a b.md", "notes/a b.md", "notes/a b.md"},
		{"non-ASCII kept", "café/日本語 ノート.md", "café/日本語 ノート.md", "café/日本語 ノート.md"},
		{"ESC colour", "red-\x1b[31m.md", `red-\x1b[31m.md`, `red-\x1b[31m.md`},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"OSC title", "\x1b]0;pwned\x07", `\x1b]0;pwned\a`, `\x1b]0;pwned\a`},
		{"newline", "a\nb.md", `a\nb.md`, "a\nb.md"},
		{"tab", "a\tb", `a\tb`, "a\tb"},
		{"carriage return", "ok\rEVIL", `ok\rEVIL`, `ok\rEVIL`},
		{"SOH", "a\x01b", `a\x01b`, `a\x01b`},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"C1 CSI", "a\u009b31mb", `a\u009b31mb`, `a\u009b31mb`},
		{"bidi override", "evil\u202egpj.md", `evil\u202egpj.md`, `evil\u202egpj.md`},
		{"invalid UTF-8", "bad-\xff\x9b.md", `bad-\xff\x9b.md`, `bad-\xff\x9b.md`},
		{"U+FFFD itself kept", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := termSafe(tc.in); got != tc.want {
				t.Errorf("termSafe(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := termSafeLines(tc.in); got != tc.wantLines {
				t.Errorf("termSafeLines(%q) = %q, want %q", tc.in, got, tc.wantLines)
			}
			if strings.IndexFunc(termSafe(tc.in), unicode.IsControl) >= 0 {
				t.Errorf("termSafe(%q) still holds a control character", tc.in)
			}
		})
	}
}

// noControls fails on any control character other than the newline that
// ends each line: what the commands print for a person must not carry one
// from the vault.
func noControls(t *testing.T, what, out string) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if j := strings.IndexFunc(line, func(r rune) bool { return unicode.IsControl(r) && r != '\t' || isBidiControl(r) }); j >= 0 {
			t.Errorf("%s line %d holds a control character at %d: %q", what, i+1, j, line)
		}
	}
}

// The commands print a vault's strings (paths, titles, headings, passages,
// the reasons of a build's report, a status's problem) escaped.
func TestPrintedVaultStringsAreEscaped(t *testing.T) {
	const evil = "x\x1b[2J\x1b]0;pwned\x07\r\u202e\x7f"
	const shown = `x\x1b[2J\x1b]0;pwned\a\r\u202e\x7f`
	res := &pipeline.Result{Config: "shipping", Query: "q" + evil, Took: "1ms",
		Stages: []pipeline.StageInfo{{Stage: "keyword", Info: "info " + evil}},
		Notes: []pipeline.ResultNote{{Rank: 1, Path: "a" + evil + ".md", Title: "T" + evil,
			Passages: []pipeline.Passage{{HeadingPath: []string{"H" + evil, "I"}, Text: "line one " + evil + "\n\tline two"}},
			Related:  []pipeline.Link{{Path: "r" + evil + ".md", Direction: "links to"}}}}}
	var search strings.Builder
	printResult(&search, res, false)
	noControls(t, "search", search.String())
	for _, want := range []string{"a" + shown + ".md", "T" + shown, "§ H" + shown + " › I", "line one " + shown, "\tline two", "links to r" + shown + ".md"} {
		if !strings.Contains(search.String(), want) {
			t.Errorf("search output lacks %q:\n%s", want, search.String())
		}
	}

	var reindex strings.Builder
	name := "dir\x1b[31m/n\nb.md"
	printReport(&reindex, index.Report{Counts: index.Counts{Mode: "full"}, Skipped: []vault.Skipped{
		{Path: name, Problem: vault.Problem{Reason: "file name has a control character (" + fmt.Sprintf("%+q", name) + "); rename the file", Kind: "k"}},
		{Path: "e1" + evil + ".md", Problem: vault.NewProblem("empty file")},
		{Path: "e2.md", Problem: vault.NewProblem("empty file")},
	}}, "vault.db")
	noControls(t, "reindex", reindex.String())
	for _, want := range []string{`dir\x1b[31m/n\nb.md: file name has a control character ("dir\x1b[31m/n\nb.md"); rename the file`, "2 files: empty file (e1" + shown + ".md, e2.md)"} {
		if !strings.Contains(reindex.String(), want) {
			t.Errorf("reindex output lacks %q:\n%s", want, reindex.String())
		}
	}

	var status strings.Builder
	printStatus(&status, statusReport{Vault: "/v" + evil, Index: "/i.db", IndexExists: true, IndexProblem: "first " + evil + "\nsecond",
		Warnings: []string{"w" + evil}, Server: serverStatus{URL: "http://127.0.0.1:1/health"}})
	noControls(t, "status", status.String())
	for _, want := range []string{"vault      /v" + shown, "problem    first " + shown + "\n           second", "warning    w" + shown} {
		if !strings.Contains(status.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, status.String())
		}
	}
}
