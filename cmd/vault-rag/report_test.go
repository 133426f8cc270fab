package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
)

// TestPrintReportGroupsProblems: the reindex output prints a kind of problem
// that several files share as one line (count, kind, the first three with
// their own part), a kind one file has as that file's own line; the report
// keeps every file.
func TestPrintReportGroupsProblems(t *testing.T) {
	badDate := func(path, value string) vault.Skipped {
		note := vault.ParseNote(path, []byte("---\ndate: "+value+"\n---\n# T\n"), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
		if len(note.Warnings) != 1 {
			t.Fatalf("%s: warnings %+v, want one", path, note.Warnings)
		}
		return vault.Skipped{Path: path, Problem: note.Warnings[0]}
	}
	tests := []struct {
		name    string
		skipped []vault.Skipped
		warns   []vault.Skipped
		want    []string // the lines after the counts, in order
	}{
		{
			name:  "one note, its own line",
			warns: []vault.Skipped{badDate("a.md", "20201305")},
			want: []string{
				"  indexed with warnings 1:",
				`    a.md: frontmatter date "20201305" is not a day of the calendar; using the file time`,
			},
		},
		{
			name:  "three notes: one line naming them all",
			warns: []vault.Skipped{badDate("a.md", "20201305"), badDate("b.md", "2021-02-30"), badDate("c.md", "2020-04-31")},
			want: []string{
				"  indexed with warnings 3:",
				`    3 notes: frontmatter date is not a day of the calendar; using the file time (a.md "20201305", b.md "2021-02-30", c.md "2020-04-31")`,
			},
		},
		{
			name: "many notes: one line with examples, then the other kinds",
			warns: func() []vault.Skipped {
				var ws []vault.Skipped
				for i := range 37 {
					ws = append(ws, badDate(fmt.Sprintf("n%02d.md", i), fmt.Sprintf("05/02/20%02d", i)))
				}
				return append(ws, vault.Skipped{Path: "z.md", Problem: vault.NewProblem("invalid UTF-8 replaced with U+FFFD")})
			}(),
			skipped: []vault.Skipped{
				{Path: "big.md", Problem: vault.Problem{Reason: "too large (9 bytes; the limit is 8)", Kind: "too large (the limit is 8 bytes)", Detail: "9 bytes"}},
				{Path: "e1.md", Problem: vault.NewProblem("empty file")},
				{Path: "e2.md", Problem: vault.NewProblem("empty file")},
			},
			want: []string{
				"  skipped 3:",
				"    2 files: empty file (e1.md, e2.md)",
				"    big.md: too large (9 bytes; the limit is 8)",
				"  indexed with warnings 38:",
				`    37 notes: frontmatter date puts the year last, where day and month cannot be told apart (write it year first: YYYY-MM-DD); using the file time (e.g. n00.md "05/02/2000", n01.md "05/02/2001", n02.md "05/02/2002", ...)`,
				"    z.md: invalid UTF-8 replaced with U+FFFD",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := index.Report{Counts: index.Counts{Mode: "full"}, Skipped: tc.skipped, Warnings: tc.warns}
			var b strings.Builder
			printReport(&b, rep, "vault.db")
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) < 3 {
				t.Fatalf("report %q", b.String())
			}
			got := lines[3:] // after the header, the notes and the chunks
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("report lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
