package vault

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestWarningKinds: notes with the same kind of problem get the same Kind and
// their own Detail, and the Reason still says it all in one line.
func TestWarningKinds(t *testing.T) {
	tests := []struct {
		name, path, raw string
		want            Problem
	}{
		{"unreadable date", "a.md", "---\ndate: 20201305\n---\n", Problem{
			Reason: `frontmatter date "20201305" is not a day of the calendar; using the file time`,
			Kind:   "frontmatter date is not a day of the calendar; using the file time",
			Detail: `"20201305"`,
		}},
		{"another unreadable date", "b.md", "---\ndate: 2021-02-30\n---\n", Problem{
			Reason: `frontmatter date "2021-02-30" is not a day of the calendar; using the file time`,
			Kind:   "frontmatter date is not a day of the calendar; using the file time",
			Detail: `"2021-02-30"`,
		}},
		{"a date that is not one, with a file-name date", "2024-01-02-c.md", "---\ndate: soon\n---\n", Problem{
			Reason: `frontmatter date "soon" is not a date (write it year first: YYYY-MM-DD); using the date in the file name`,
			Kind:   "frontmatter date is not a date (write it year first: YYYY-MM-DD); using the date in the file name",
			Detail: `"soon"`,
		}},
		{"duplicate key", "d.md", "---\ntype: a\ntype: b\n---\n", Problem{
			Reason: `frontmatter: duplicate key "type" (the last one wins)`,
			Kind:   "frontmatter: duplicate key (the last one wins)",
			Detail: `"type"`,
		}},
		{"no closing fence", "e.md", "---\ntype: a\n", NewProblem("frontmatter: opening --- has no closing --- (read as body text)")},
		{"invalid UTF-8", "f.md", "caf\xe9\n", NewProblem("invalid UTF-8 replaced with U+FFFD")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := ParseNote(tc.path, []byte(tc.raw), testTime)
			if len(n.Warnings) != 1 || !reflect.DeepEqual(n.Warnings[0], tc.want) {
				t.Errorf("warnings %#v, want [%#v]", n.Warnings, tc.want)
			}
		})
	}
	n := ParseNote("y.md", []byte("---\na: [\n---\n"), testTime)
	if len(n.Warnings) != 1 || n.Warnings[0].Kind != "frontmatter is not valid YAML (ignored)" ||
		n.Warnings[0].Reason != n.Warnings[0].Kind+": "+n.Warnings[0].Detail || n.Warnings[0].Detail == "" {
		t.Errorf("YAML error warning %#v: want the kind, and the parser's error as the detail", n.Warnings)
	}
}

func TestGroupProblems(t *testing.T) {
	date := func(path, value string) Skipped {
		return Skipped{Path: path, Problem: Problem{
			Reason: "frontmatter date " + value + " is not a date; using the file time",
			Kind:   "frontmatter date is not a date; using the file time",
			Detail: value,
		}}
	}
	empty := func(path string) Skipped { return Skipped{Path: path, Problem: NewProblem("empty file")} }
	noKind := func(path, reason string) Skipped { return Skipped{Path: path, Problem: Problem{Reason: reason}} }
	tests := []struct {
		name string
		in   []Skipped
		want []ProblemGroup
	}{
		{"none", nil, nil},
		{"one", []Skipped{empty("a.md")}, []ProblemGroup{{Kind: "empty file", Files: []Skipped{empty("a.md")}}}},
		{
			"the largest group first, files in their order, ties in the order of their first file",
			[]Skipped{empty("a.md"), date("b.md", `"x"`), noKind("c.md", "odd"), date("d.md", `"y"`), empty("e.md"), date("f.md", `"z"`), noKind("g.md", "odd")},
			[]ProblemGroup{
				{Kind: "frontmatter date is not a date; using the file time", Files: []Skipped{date("b.md", `"x"`), date("d.md", `"y"`), date("f.md", `"z"`)}},
				{Kind: "empty file", Files: []Skipped{empty("a.md"), empty("e.md")}},
				{Kind: "odd", Files: []Skipped{noKind("c.md", "odd"), noKind("g.md", "odd")}}, // no kind: grouped by the reason
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := GroupProblems(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("GroupProblems = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestSkippedJSON: a report's file keeps its reason under the old name, and
// carries its kind and detail beside it.
func TestSkippedJSON(t *testing.T) {
	s := Skipped{Path: "a.md", Problem: detailed("unreadable", "permission denied")}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"path":"a.md","reason":"unreadable: permission denied","kind":"unreadable","detail":"permission denied"}`; string(raw) != want {
		t.Errorf("JSON %s, want %s", raw, want)
	}
}
