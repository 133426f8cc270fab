package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models/bow"
)

// grepVault is vault_grep's own small vault: dated and undated notes,
// nested headings, a heading inside a code fence, CRLF line ends, invalid
// UTF-8, a line of 5 MB and a note of many matches.
var grepVault = map[string]string{
	"alpha.md":                "---\ntype: note\ndate: 2024-03-01\nwidget: frontmatter\n---\n# Alpha\n\nIntro mentions a Widget.\n\n## Setup\n\n### Install\n\nInstall the widget first.\n\n```\n# not a heading widget\n```\n\n## Usage\n\nnothing here\n",
	"beta/2023-01-15 beta.md": "# Beta\n\nThe WIDGET came early.\n",
	"beta/gamma.md":           "# Gamma\r\n\r\n## Crlf\r\n\r\na widget in a CRLF note\r\n",
	"delta.md":                "---\ndate: 2025-06-01\n---\n# Delta\n\nNo match in this one, only the Kelvin sign: \u212a.\n",
	"bad.md":                  "# Bad\n\n\xff\xfe widget \xc3 after\n",
	"long.md":                 "# Long\n\n" + strings.Repeat("é", 1_250_000) + " needle " + strings.Repeat("y", 2_500_000) + "\n",
	"many.md":                 "---\ndate: 2022-01-01\n---\n# Many\n\n" + strings.Repeat("repeat line\n", 50),
}

var grepFx struct {
	once      sync.Once
	vault, db string
	err       error
}

// grepFixture writes grepVault and indexes it with bag-of-words vectors
// (vault_grep needs no model), once.
func grepFixture(t *testing.T) (vaultDir, db string) {
	t.Helper()
	grepFx.once.Do(func() {
		dir := filepath.Join(fx.dir, "grep")
		grepFx.vault, grepFx.db = filepath.Join(dir, "vault"), filepath.Join(dir, "db", "grep.db")
		for rel, text := range grepVault {
			if grepFx.err = writeFile(filepath.Join(grepFx.vault, filepath.FromSlash(rel)), []byte(text)); grepFx.err != nil {
				return
			}
		}
		// Dated by their file times alone: bad and long in 2020, gamma later.
		for rel, day := range map[string]time.Time{
			"beta/gamma.md": time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
			"bad.md":        time.Date(2020, 1, 1, 12, 0, 0, 0, time.UTC),
			"long.md":       time.Date(2020, 1, 1, 12, 0, 0, 0, time.UTC),
		} {
			if grepFx.err = os.Chtimes(filepath.Join(grepFx.vault, filepath.FromSlash(rel)), day, day); grepFx.err != nil {
				return
			}
		}
		_, grepFx.err = index.Build(context.Background(), bow.Embedder{ModelName: "test-bow"}, index.BuildOptions{VaultPath: grepFx.vault, DBPath: grepFx.db})
	})
	if grepFx.err != nil {
		t.Fatalf("grep fixture: %v", grepFx.err)
	}
	return grepFx.vault, grepFx.db
}

func newGrepServer(t *testing.T, mod func(*Options)) *Server {
	v, db := grepFixture(t)
	return newModelFreeServer(t, func(o *Options) {
		o.VaultPath, o.DBPath = v, db
		if mod != nil {
			mod(o)
		}
	})
}

// paths are the answer's notes' paths, in order.
func (r GrepResult) paths() []string {
	var out []string
	for _, n := range r.Results {
		out = append(out, n.Path)
	}
	return out
}

func (r GrepResult) note(p string) *GrepNote {
	for i := range r.Results {
		if r.Results[i].Path == p {
			return &r.Results[i]
		}
	}
	return nil
}

func TestGrep(t *testing.T) {
	s := newGrepServer(t, nil)
	cases := []struct {
		name  string
		args  map[string]any
		check func(t *testing.T, r GrepResult)
	}{
		{"literal, case-insensitive", map[string]any{"pattern": "widget"}, func(t *testing.T, r GrepResult) {
			// alpha: frontmatter line 4, lines 8, 14, 17; bad; gamma; beta.
			if r.Matches != 7 || r.Notes != 4 || r.Truncated || !r.Complete || r.Searched != 7 {
				t.Fatalf("counts %+v", r)
			}
			if want := []string{"alpha.md", "bad.md", "beta/2023-01-15 beta.md", "beta/gamma.md"}; !slices.Equal(r.paths(), want) {
				t.Fatalf("paths %v, want %v", r.paths(), want)
			}
			a := r.note("alpha.md")
			want := []GrepLine{
				{Line: 4, Text: "widget: frontmatter"},
				{Line: 8, Heading: "Alpha", Text: "Intro mentions a Widget."},
				{Line: 14, Heading: "Alpha › Setup › Install", Text: "Install the widget first."},
				{Line: 17, Heading: "Alpha › Setup › Install", Text: "# not a heading widget"},
			}
			if a.Matches != 4 || !slices.Equal(a.Lines, want) {
				t.Fatalf("alpha: %+v, want lines %+v", a, want)
			}
			g := r.note("beta/gamma.md")
			if len(g.Lines) != 1 || g.Lines[0] != (GrepLine{Line: 5, Heading: "Gamma › Crlf", Text: "a widget in a CRLF note"}) {
				t.Fatalf("gamma (CRLF): %+v", g.Lines)
			}
			if b := r.note("bad.md"); len(b.Lines) != 1 || b.Lines[0].Line != 3 || !utf8.ValidString(b.Lines[0].Text) || !strings.Contains(b.Lines[0].Text, "\uFFFD widget \uFFFD after") {
				t.Fatalf("bad.md (invalid UTF-8): %+v", b.Lines)
			}
			if r.Results[0].Date != "" {
				t.Errorf("a path order gives no dates: %+v", r.Results[0])
			}
		}},
		{"case-sensitive", map[string]any{"pattern": "WIDGET", "case_sensitive": true}, func(t *testing.T, r GrepResult) {
			if r.Matches != 1 || !slices.Equal(r.paths(), []string{"beta/2023-01-15 beta.md"}) {
				t.Fatalf("%+v", r)
			}
		}},
		{"a literal that reads as a regexp and matches nothing says so", map[string]any{"pattern": "widget|nothing"}, func(t *testing.T, r GrepResult) {
			if r.Matches != 0 || !strings.Contains(r.Note, "literally unless regex is true") {
				t.Fatalf("%+v", r)
			}
		}},
		{"a glob that leaves no note says so", map[string]any{"pattern": "widget", "glob": "nowhere/*.md"}, func(t *testing.T, r GrepResult) {
			if r.Matches != 0 || r.Searched != 0 || !strings.Contains(r.Note, "matches none of the 7 notes") {
				t.Fatalf("%+v", r)
			}
		}},
		{"a path that leaves no note says so", map[string]any{"pattern": "widget", "path": "Nowhere/"}, func(t *testing.T, r GrepResult) {
			if r.Matches != 0 || !strings.Contains(r.Note, "No note's path starts with") {
				t.Fatalf("%+v", r)
			}
		}},
		{"a brace glob", map[string]any{"pattern": "widget", "glob": "{alpha,bad}.md", "files_only": true}, func(t *testing.T, r GrepResult) {
			if want := []string{"alpha.md", "bad.md"}; !slices.Equal(r.paths(), want) || r.Note != "" {
				t.Fatalf("paths %v, want %v (%+v)", r.paths(), want, r)
			}
		}},
		{"a literal's regexp characters are literal", map[string]any{"pattern": "wid.et"}, func(t *testing.T, r GrepResult) {
			if r.Matches != 0 || r.Notes != 0 || len(r.Results) != 0 || !r.Complete {
				t.Fatalf("%+v", r)
			}
		}},
		{"regex", map[string]any{"pattern": `^(install|intro)\b.*widget`, "regex": true}, func(t *testing.T, r GrepResult) {
			if r.Matches != 2 || !slices.Equal(r.paths(), []string{"alpha.md"}) {
				t.Fatalf("%+v", r)
			}
		}},
		{"regex, case-sensitive, no literal to look for first", map[string]any{"pattern": `[A-Z]{6}`, "regex": true, "case_sensitive": true}, func(t *testing.T, r GrepResult) {
			if r.Matches != 1 || r.Results[0].Lines[0].Text != "The WIDGET came early." {
				t.Fatalf("%+v", r)
			}
		}},
		{"case-insensitive k finds the Kelvin sign", map[string]any{"pattern": "sign: k", "regex": false}, func(t *testing.T, r GrepResult) {
			if !slices.Equal(r.paths(), []string{"delta.md"}) {
				t.Fatalf("%+v", r)
			}
		}},
		{"a heading's line is under the headings enclosing it", map[string]any{"pattern": "crlf"}, func(t *testing.T, r GrepResult) {
			want := []GrepLine{{Line: 3, Heading: "Gamma", Text: "## Crlf"}, {Line: 5, Heading: "Gamma › Crlf", Text: "a widget in a CRLF note"}}
			if len(r.Results) != 1 || !slices.Equal(r.Results[0].Lines, want) {
				t.Fatalf("%+v", r.Results)
			}
		}},
		{"path", map[string]any{"pattern": "widget", "path": "beta/"}, func(t *testing.T, r GrepResult) {
			if r.Searched != 2 || r.Matches != 2 || !slices.Equal(r.paths(), []string{"beta/2023-01-15 beta.md", "beta/gamma.md"}) {
				t.Fatalf("%+v", r)
			}
		}},
		{"glob with **", map[string]any{"pattern": "widget", "glob": "**/g*.md"}, func(t *testing.T, r GrepResult) {
			if r.Searched != 1 || !slices.Equal(r.paths(), []string{"beta/gamma.md"}) {
				t.Fatalf("%+v", r)
			}
		}},
		{"glob of a file name", map[string]any{"pattern": "widget", "glob": "2023-*"}, func(t *testing.T, r GrepResult) {
			if !slices.Equal(r.paths(), []string{"beta/2023-01-15 beta.md"}) {
				t.Fatalf("%+v", r)
			}
		}},
		{"path and glob", map[string]any{"pattern": "widget", "path": "beta/", "glob": "*.md"}, func(t *testing.T, r GrepResult) {
			if r.Searched != 2 {
				t.Fatalf("%+v", r)
			}
		}},
		{"sort by date, the file time last", map[string]any{"pattern": "e", "files_only": true, "sort": "date"}, func(t *testing.T, r GrepResult) {
			// many 2022-01-01, beta 2023-01-15 (file name), alpha 2024-03-01,
			// delta 2025-06-01; then those dated by file time, by that time.
			got := r.paths()
			if want := []string{"many.md", "beta/2023-01-15 beta.md", "alpha.md", "delta.md"}; len(got) != 7 || !slices.Equal(got[:4], want) || got[len(got)-1] != "beta/gamma.md" {
				t.Fatalf("order %v", got)
			}
			if n := r.Results[1]; n.Date != "2023-01-15" || n.DateSource != "filename" || n.Lines != nil {
				t.Fatalf("second: %+v", n)
			}
			if n := r.Results[6]; n.DateSource != "mtime" || n.Date != "2026-01-01" {
				t.Fatalf("last: %+v", n)
			}
		}},
		{"sort by date, newest first, the file time still last", map[string]any{"pattern": "e", "files_only": true, "sort": "date_desc"}, func(t *testing.T, r GrepResult) {
			got := r.paths()
			if want := []string{"delta.md", "alpha.md", "beta/2023-01-15 beta.md", "many.md"}; !slices.Equal(got[:4], want) || got[4] != "beta/gamma.md" {
				t.Fatalf("order %v", got)
			}
		}},
		{"limit cuts the lines, not the counts", map[string]any{"pattern": "repeat", "limit": 5}, func(t *testing.T, r GrepResult) {
			if r.Matches != 50 || r.Notes != 1 || !r.Truncated || len(r.Results) != 1 || len(r.Results[0].Lines) != 5 || r.Results[0].Matches != 50 || !strings.Contains(r.Note, "5 of 50") {
				t.Fatalf("%+v", r)
			}
			if r.Results[0].Lines[4].Line != 10 || r.Results[0].Lines[4].Heading != "Many" {
				t.Fatalf("fifth line %+v", r.Results[0].Lines[4])
			}
		}},
		{"the default limit", map[string]any{"pattern": "repeat"}, func(t *testing.T, r GrepResult) {
			if len(r.Results[0].Lines) != DefaultGrepLimit || !r.Truncated {
				t.Fatalf("%d lines", len(r.Results[0].Lines))
			}
		}},
		{"max_per_note", map[string]any{"pattern": "e", "max_per_note": 1, "limit": 500}, func(t *testing.T, r GrepResult) {
			for _, n := range r.Results {
				if len(n.Lines) != 1 {
					t.Fatalf("%s: %d lines", n.Path, len(n.Lines))
				}
			}
			if len(r.Results) != r.Notes || !r.Truncated {
				t.Fatalf("%+v", r)
			}
		}},
		{"files_only", map[string]any{"pattern": "widget", "files_only": true, "limit": 2}, func(t *testing.T, r GrepResult) {
			if r.Notes != 4 || r.Matches != 7 || len(r.Results) != 2 || !r.Truncated || r.Results[0].Matches != 4 || r.Results[0].Lines != nil {
				t.Fatalf("%+v", r)
			}
		}},
		{"a line of 5 MB", map[string]any{"pattern": "needle"}, func(t *testing.T, r GrepResult) {
			if len(r.Results) != 1 {
				t.Fatalf("%+v", r)
			}
			l := r.Results[0].Lines[0]
			if l.Line != 3 || !utf8.ValidString(l.Text) || !strings.HasPrefix(l.Text, "…é") || !strings.HasSuffix(l.Text, "y…") ||
				!strings.Contains(l.Text, " needle ") || len(l.Text) > grepExcerpt+2*len("…") {
				t.Fatalf("line %d, %d bytes: %.80q", l.Line, len(l.Text), l.Text)
			}
		}},
		{"nothing found", map[string]any{"pattern": "zebra", "path": "nowhere/"}, func(t *testing.T, r GrepResult) {
			if r.Searched != 0 || r.Matches != 0 || r.Results == nil || !r.Complete {
				t.Fatalf("%+v", r)
			}
		}},
	}
	refusals := []struct {
		name string
		args map[string]any
		want string
	}{
		{"no pattern", map[string]any{}, `"pattern" is required`},
		{"empty pattern", map[string]any{"pattern": ""}, `"pattern" is required`},
		{"a pattern too long", map[string]any{"pattern": strings.Repeat("ab", MaxGrepPattern)}, `over the 1024`},
		{"a regex error", map[string]any{"pattern": "(widget" + strings.Repeat("x", 100), "regex": true}, "missing closing )"},
		{"a regex matching the empty string", map[string]any{"pattern": "a*", "regex": true}, "matches the empty string"},
		{"a literal with a line end", map[string]any{"pattern": "a\nb"}, "line end"},
		{"a bad glob", map[string]any{"pattern": "x", "glob": "[a"}, "not a glob"},
		{"an unknown sort", map[string]any{"pattern": "x", "sort": "-date"}, `"date_desc"`},
		{"a limit too high", map[string]any{"pattern": "x", "limit": 501}, "outside 1..500"},
		{"regex not a boolean", map[string]any{"pattern": "x", "regex": "yes"}, "true or false"},
	}
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var r GrepResult
				callOK(t, c, ToolGrep, tc.args, &r)
				tc.check(t, r)
			})
		}
		for _, tc := range refusals {
			t.Run("refused: "+tc.name, func(t *testing.T) {
				text := callErr(t, c, ToolGrep, tc.args)
				if !strings.Contains(text, tc.want) {
					t.Fatalf("error %q does not say %q", text, tc.want)
				}
				if len(text) > 400 {
					t.Errorf("error of %d bytes: quote only a prefix of the input: %.100s…", len(text), text)
				}
			})
		}
	})
}

// TestGrepDeadline: a search whose time runs out answers with what it found
// and says so.
func TestGrepDeadline(t *testing.T) {
	s := newGrepServer(t, func(o *Options) { o.grepBudget = time.Nanosecond })
	c := connectStdio(t, s)
	var r GrepResult
	callOK(t, c, ToolGrep, map[string]any{"pattern": "widget"}, &r)
	if r.Complete || r.Searched != 0 || !strings.Contains(r.Note, "stopped") || !strings.Contains(r.Note, "of 7 notes") {
		t.Fatalf("%+v", r)
	}
}

// TestGrepMatcher checks the matcher directly: the literal looked for first
// never loses a match the regular expression would find.
func TestGrepMatcher(t *testing.T) {
	cases := []struct {
		pattern      string
		regex, cs    bool
		text         string
		want         []int // matching lines
		lit          string
		fold, foldKS bool
		exact        bool
	}{
		{"Widget", false, true, "a Widget\nwidget\nWidget b", []int{1, 3}, "Widget", false, false, true},
		{"widget", false, false, "a WiDgEt\nnone\nwidget", []int{1, 3}, "widget", true, false, true},
		{"disk", false, false, "DIS\u212a\ndisk", []int{1, 2}, "disk", true, true, false},
		{"café", false, false, "CAFÉ au lait\ncafe", []int{1}, "caf", true, false, false},
		{`err(or)?\s+\d+`, true, false, "Error 42\nerr 7\nerror x", []int{1, 2}, "err", true, false, false},
		{`a|b`, true, true, "x\nb\na", []int{2, 3}, "", false, false, false},
		{`^#+ `, true, true, "# A\ntext # no\n## B", []int{1, 3}, "#", false, false, false},
		{`\x{FFFD}`, true, true, "ok\n\xff bad", []int{2}, "", false, false, false},
		{`end$`, true, true, "the end\r\nend not\r\n", []int{1}, "end", false, false, false},
	}
	for _, tc := range cases {
		m, err := newGrepMatcher(tc.pattern, tc.regex, tc.cs)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		if string(m.lit) != tc.lit || m.fold != tc.fold || m.foldKS != tc.foldKS || m.exact != tc.exact {
			t.Errorf("%q: lit %q fold %v ks %v exact %v, want %q %v %v %v", tc.pattern, m.lit, m.fold, m.foldKS, m.exact, tc.lit, tc.fold, tc.foldKS, tc.exact)
		}
		var got []int
		m.eachMatch([]byte(tc.text), func(n int, _ []byte, _, _ int) bool { got = append(got, n); return true })
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q in %q: lines %v, want %v", tc.pattern, tc.text, got, tc.want)
		}
	}
}

func TestIndexFoldASCII(t *testing.T) {
	for _, tc := range []struct {
		in, lit string
		want    int
	}{
		{"xxABCx", "abc", 2}, {"abAbC", "abc", 2}, {"ab", "abc", -1}, {"", "a", -1}, {"zzz9-Z", "9-z", 3}, {"aXaXAx", "ax", 0}, {"bbbA", "a", 3},
	} {
		if got := indexFoldASCII([]byte(tc.in), []byte(tc.lit)); got != tc.want {
			t.Errorf("indexFoldASCII(%q, %q) = %d, want %d", tc.in, tc.lit, got, tc.want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"*.md", "a/b/c.md", true},
		{"c*", "a/b/c.md", true},
		{"a/*.md", "a/c.md", true},
		{"a/*.md", "a/b/c.md", false},
		{"a/**/*.md", "a/c.md", true},
		{"a/**/*.md", "a/b/d/c.md", true},
		{"**/c.md", "c.md", true},
		{"**", "x/y.md", true},
		{"a/**", "b/y.md", false},
		{"projects/**/2024-*.md", "projects/x/2024-01-01 plan.md", true},
		{"projects/**/2024-*.md", "projects/x/2023-01-01.md", false},
		{"*.{md,txt}", "a/b.txt", true},
		{"{a,b}/*.md", "b/c.md", true},
		{"{a,b}/*.md", "d/c.md", false},
		{"{a/{x,y},b}/*.md", "a/y/c.md", true},
		{"{a/{x,y},b}/*.md", "a/z/c.md", false},
		{"{a", "{a", false},
	} {
		if got := globMatch(tc.glob, tc.path); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	short := "short line"
	if got := excerpt([]byte(short), 0, 5); got != short {
		t.Fatalf("%q", got)
	}
	line := strings.Repeat("日本", 200) + "MATCH" + strings.Repeat("語", 200)
	s := strings.Index(line, "MATCH")
	got := excerpt([]byte(line), s, s+5)
	if !utf8.ValidString(got) || !strings.Contains(got, "MATCH") || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || len(got) > grepExcerpt+6 {
		t.Fatalf("%d bytes: %q", len(got), got)
	}
	// A match at the start keeps the start, uncut.
	got = excerpt([]byte(line), 0, 3)
	if strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") {
		t.Fatalf("%q", got)
	}
	// A match longer than the excerpt starts it.
	got = excerpt([]byte(line), 3, len(line)-3)
	if !strings.HasPrefix(got, "…本") {
		t.Fatalf("%q", got)
	}
}

// TestGrepStaysInVault: a note swapped for a symlink leading outside the
// vault after the build is not read (the index still lists it).
func TestGrepStaysInVault(t *testing.T) {
	dir := t.TempDir()
	v := filepath.Join(dir, "vault")
	if err := writeFile(filepath.Join(v, "in.md"), []byte("# In\n\nTOP SECRET? no, inside\n")); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "secret.md"), []byte(secret+"\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "secret.md"), filepath.Join(v, "out.md")); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(v)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newGrepMatcher("TOP SECRET", false, true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runGrep(context.Background(), root, []grepNote{{path: "in.md"}, {path: "out.md"}}, grepRequest{m: m, sort: grepSortPath, limit: 10}, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if out.Unreadable != 1 || out.Matches != 1 || len(out.Results) != 1 || out.Results[0].Path != "in.md" {
		t.Fatalf("%+v", out)
	}
}
