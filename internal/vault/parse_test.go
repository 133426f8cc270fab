package vault

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseNote(t *testing.T) {
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("CEST", 2*3600))
	mtimeUTC := mtime.UTC()
	tests := []struct {
		name       string
		path       string
		raw        string
		title      string
		meta       Frontmatter
		date       time.Time
		dateSource string
		body       string   // checked when not ""
		warnings   []string // one substring per expected warning, in order; nil means none
	}{
		{
			name: "frontmatter with every key",
			path: "meetings/kickoff.md",
			raw: "---\ntype: Meeting\ndate: 2026-02-03\nproject: Apollo\nstatus: done\nsource: email\ntopics: [Go, '#Rust', sqlite]\nunknown: ignored\n---\n" +
				"# Kickoff\nWe met.\n",
			title:      "Kickoff",
			meta:       Frontmatter{Type: "Meeting", Date: "2026-02-03", Project: "Apollo", Status: "done", Source: "email", Topics: []string{"go", "rust", "sqlite"}},
			date:       day("2026-02-03"),
			dateSource: "frontmatter",
			body:       "# Kickoff\nWe met.\n",
		},
		{
			name:       "no frontmatter",
			path:       "plain.md",
			raw:        "# Plain\ntext\n",
			title:      "Plain",
			date:       mtimeUTC,
			dateSource: "mtime",
			body:       "# Plain\ntext\n",
		},
		{
			name:       "empty frontmatter",
			path:       "empty-fm.md",
			raw:        "---\n---\n# T\n",
			title:      "T",
			date:       mtimeUTC,
			dateSource: "mtime",
			body:       "# T\n",
		},
		{
			name:       "malformed YAML is a warning, the note is kept",
			path:       "bad.md",
			raw:        "---\ntopics: [a, b\ntype: x\n---\n# Still Indexed\nbody\n",
			title:      "Still Indexed",
			date:       mtimeUTC,
			dateSource: "mtime",
			body:       "# Still Indexed\nbody\n",
			warnings:   []string{"not valid YAML"},
		},
		{
			name:       "frontmatter that is not a mapping",
			path:       "list.md",
			raw:        "---\n- a\n- b\n---\n# L\n",
			title:      "L",
			date:       mtimeUTC,
			dateSource: "mtime",
			body:       "# L\n",
			warnings:   []string{"not a mapping"},
		},
		{
			name:       "unclosed frontmatter stays in the body",
			path:       "unclosed.md",
			raw:        "---\ntype: x\n# Open\nbody\n",
			title:      "Open",
			date:       mtimeUTC,
			dateSource: "mtime",
			body:       "---\ntype: x\n# Open\nbody\n",
			warnings:   []string{"no closing ---"},
		},
		{
			name:       "duplicate keys: warning, the last wins",
			path:       "dup.md",
			raw:        "---\ntype: first\nstatus: a\ntype: second\nStatus: b\n---\n",
			title:      "dup",
			meta:       Frontmatter{Type: "second", Status: "b"},
			date:       mtimeUTC,
			dateSource: "mtime",
			warnings:   []string{`duplicate key "type"`, `duplicate key "status"`},
		},
		{
			name:       "topics as a block list",
			path:       "block.md",
			raw:        "---\ntopics:\n  - One\n  - \"#two\"\n  - ''\n  - Three Words\n---\n",
			title:      "block",
			meta:       Frontmatter{Topics: []string{"one", "two", "three words"}},
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "topics as a comma string",
			path:       "comma.md",
			raw:        "---\ntopics: \"a, B ,, #c\"\n---\n",
			title:      "comma",
			meta:       Frontmatter{Topics: []string{"a", "b", "c"}},
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "tags when there are no topics",
			path:       "tags.md",
			raw:        "---\ntags: [x, Y]\n---\n",
			title:      "tags",
			meta:       Frontmatter{Topics: []string{"x", "y"}, Tags: []string{"x", "y"}},
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "topics win over tags written after them",
			path:       "both1.md",
			raw:        "---\ntopics: [t]\ntags: [g]\n---\n",
			title:      "both1",
			meta:       Frontmatter{Topics: []string{"t"}, Tags: []string{"g"}},
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "topics win over tags written before them",
			path:       "both2.md",
			raw:        "---\ntags: [g]\ntopics: [t]\n---\n",
			title:      "both2",
			meta:       Frontmatter{Topics: []string{"t"}, Tags: []string{"g"}},
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "date from the file name",
			path:       "journal/2026-02-03-foo.md",
			raw:        "# Foo\n",
			title:      "Foo",
			date:       day("2026-02-03"),
			dateSource: "filename",
		},
		{
			name:       "date only as the whole file name",
			path:       "journal/2025-12-31.md",
			raw:        "text\n",
			title:      "2025-12-31",
			date:       day("2025-12-31"),
			dateSource: "filename",
		},
		{
			name:       "a date inside the file name is not a file-name date",
			path:       "foo-2026-02-03.md",
			raw:        "x\n",
			title:      "foo-2026-02-03",
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "a date in a folder name is not a file-name date",
			path:       "2026-02-03/notes.md",
			raw:        "x\n",
			title:      "notes",
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "frontmatter date beats the file name",
			path:       "2026-02-03-foo.md",
			raw:        "---\ndate: 2021-07-08\n---\n",
			title:      "2026-02-03-foo",
			meta:       Frontmatter{Date: "2021-07-08"},
			date:       day("2021-07-08"),
			dateSource: "frontmatter",
		},
		{
			name:       "frontmatter timestamp",
			path:       "ts.md",
			raw:        "---\ndate: 2026-02-03T22:30:00Z\n---\n",
			title:      "ts",
			meta:       Frontmatter{Date: "2026-02-03T22:30:00Z"},
			date:       time.Date(2026, 2, 3, 22, 30, 0, 0, time.UTC),
			dateSource: "frontmatter",
		},
		{
			name:       "a date string that is not a date falls back, with a warning",
			path:       "2026-02-03-soon.md",
			raw:        "---\ndate: next tuesday\n---\n",
			title:      "2026-02-03-soon",
			meta:       Frontmatter{Date: "next tuesday"},
			date:       day("2026-02-03"),
			dateSource: "filename",
			warnings:   []string{`"next tuesday" is not a date`},
		},
		{
			name:       "an impossible date falls back to the file time",
			path:       "x.md",
			raw:        "---\ndate: 2026-13-45\n---\n",
			title:      "x",
			meta:       Frontmatter{Date: "2026-13-45"},
			date:       mtimeUTC,
			dateSource: "mtime",
			warnings:   []string{"not a day of the calendar"},
		},
		{
			name:       "a compact date, which YAML reads as an integer",
			path:       "writing/writing.md",
			raw:        "---\ndate: 20200205\n---\n# Writing\n",
			title:      "Writing",
			meta:       Frontmatter{Date: "20200205"},
			date:       day("2020-02-05"),
			dateSource: "frontmatter",
		},
		{
			name:       "a date with slashes and a time",
			path:       "slashes.md",
			raw:        "---\ndate: 2020/02/05 10:30\n---\n",
			title:      "slashes",
			meta:       Frontmatter{Date: "2020/02/05 10:30"},
			date:       time.Date(2020, 2, 5, 10, 30, 0, 0, time.UTC),
			dateSource: "frontmatter",
		},
		{
			name:       "a compact date the calendar lacks falls back to the file time",
			path:       "x.md",
			raw:        "---\ndate: 20201305\n---\n",
			title:      "x",
			meta:       Frontmatter{Date: "20201305"},
			date:       mtimeUTC,
			dateSource: "mtime",
			warnings:   []string{`frontmatter date "20201305" is not a day of the calendar; using the file time`},
		},
		{
			name:       "day and month first is refused, and the file name's date used",
			path:       "2020-05-02-meeting.md",
			raw:        "---\ndate: 05/02/2020\n---\n",
			title:      "2020-05-02-meeting",
			meta:       Frontmatter{Date: "05/02/2020"},
			date:       day("2020-05-02"),
			dateSource: "filename",
			warnings:   []string{`frontmatter date "05/02/2020" puts the year last, where day and month cannot be told apart (write it year first: YYYY-MM-DD); using the date in the file name`},
		},
		{
			name:       "UTF-8 byte-order mark before the frontmatter",
			path:       "bom.md",
			raw:        "\xef\xbb\xbf---\ntype: memo\n---\n# BOM\n",
			title:      "BOM",
			meta:       Frontmatter{Type: "memo"},
			date:       mtimeUTC,
			dateSource: "mtime",
			body:       "# BOM\n",
		},
		{
			name:       "CRLF line ends",
			path:       "crlf.md",
			raw:        "---\r\ntype: memo\r\n---\r\n# Windows\r\nline one\r\nline two\r\n",
			title:      "Windows",
			meta:       Frontmatter{Type: "memo"},
			date:       mtimeUTC,
			dateSource: "mtime",
			body:       "# Windows\nline one\nline two\n",
		},
		{
			name:       "invalid UTF-8 is replaced and warned about",
			path:       "latin1.md",
			raw:        "# Caf\xe9\nna\xefve \xff\xfe text\n",
			title:      "Caf\uFFFD",
			date:       mtimeUTC,
			dateSource: "mtime",
			body:       "# Caf\uFFFD\nna\uFFFDve \uFFFD text\n",
			warnings:   []string{"invalid UTF-8"},
		},
		{
			name:       "title outside code fences only",
			path:       "fenced.md",
			raw:        "```sh\n# a shell comment\n```\n~~~\n# another\n~~~\n## Section\n# Real Title\n",
			title:      "Real Title",
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "no level-one heading: the file name",
			path:       "folder/My Note.md",
			raw:        "## Only a section\n#hashtag is not a heading\n",
			title:      "My Note",
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "empty level-one heading is skipped",
			path:       "e.md",
			raw:        "# \n# Second\n",
			title:      "Second",
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "aliases: a list, case and commas kept, blanks dropped",
			path:       "al.md",
			raw:        "---\naliases:\n  - Publish your theme\n  - 'Smith, John'\n  - ''\n  - 2024\n---\n# Submit\n",
			title:      "Submit",
			meta:       Frontmatter{Aliases: []string{"Publish your theme", "Smith, John", "2024"}},
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "aliases: one string, and the older alias key too",
			path:       "al1.md",
			raw:        "---\nalias: [Old Name]\naliases: 快速入门/更新 Obsidian\n---\n# T\n",
			title:      "T",
			meta:       Frontmatter{Aliases: []string{"快速入门/更新 Obsidian", "Old Name"}},
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "aliases: empty or null is none",
			path:       "al2.md",
			raw:        "---\naliases:\nalias: ~\n---\n# T\n",
			title:      "T",
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "aliases of the wrong type: a warning, the names kept",
			path:       "al3.md",
			raw:        "---\naliases:\n  - Good\n  - {a: 1}\n  - [x]\nalias: {b: 2}\n---\n# T\n",
			title:      "T",
			meta:       Frontmatter{Aliases: []string{"Good"}},
			date:       mtimeUTC,
			dateSource: "mtime",
			warnings:   []string{"aliases: the value on line 4 is not a name", "aliases: the value on line 5 is not a name", "alias: the value on line 6 is not a name"},
		},
		{
			name:       "a title in the frontmatter is the title",
			path:       "fmtitle.md",
			raw:        "---\ntitle: From YAML\n---\ntext\n",
			title:      "From YAML",
			meta:       Frontmatter{Title: "From YAML"},
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "the frontmatter title wins over a level-one heading, which is a section",
			path:       "linux_snippets.md",
			raw:        "---\ntitle: Linux snippets\n---\n# [Configure nginx](https://tecadmin.net/x/)\ntext\n",
			title:      "Linux snippets",
			meta:       Frontmatter{Title: "Linux snippets"},
			date:       mtimeUTC,
			dateSource: "mtime",
		},
		{
			name:       "a level-one heading's link markup is not part of the title",
			path:       "rules.md",
			raw:        "# [Inhibit rules](https://prometheus.io/docs/)\ntext\n",
			title:      "Inhibit rules",
			date:       mtimeUTC,
			dateSource: "mtime",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := ParseNote(tc.path, []byte(tc.raw), mtime)
			if n.Path != tc.path {
				t.Errorf("Path = %q, want %q", n.Path, tc.path)
			}
			if n.Title != tc.title {
				t.Errorf("Title = %q, want %q", n.Title, tc.title)
			}
			if !reflect.DeepEqual(n.Frontmatter, tc.meta) {
				t.Errorf("Frontmatter = %#v, want %#v", n.Frontmatter, tc.meta)
			}
			if !n.Date.Equal(tc.date) || n.DateSource != tc.dateSource {
				t.Errorf("Date = %v (%s), want %v (%s)", n.Date, n.DateSource, tc.date, tc.dateSource)
			}
			if n.Date.Location() != time.UTC {
				t.Errorf("Date %v is not UTC", n.Date)
			}
			if tc.body != "" && n.Body != tc.body {
				t.Errorf("Body = %q, want %q", n.Body, tc.body)
			}
			if strings.Contains(n.Body, "\r") || !utf8.ValidString(n.Body) || strings.HasPrefix(n.Body, "\ufeff") {
				t.Errorf("Body %q is not normalised (CR, BOM or invalid UTF-8)", n.Body)
			}
			if len(n.Warnings) != len(tc.warnings) {
				t.Fatalf("Warnings = %q, want %d matching %q", n.Warnings, len(tc.warnings), tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.Contains(n.Warnings[i].Reason, w) {
					t.Errorf("Warnings[%d] = %q, want it to contain %q", i, n.Warnings[i], w)
				}
			}
			if n.Size != int64(len(tc.raw)) || n.Hash != sha256Hex([]byte(tc.raw)) {
				t.Errorf("Size, Hash = %d, %s; want %d, sha256 of the raw bytes", n.Size, n.Hash, len(tc.raw))
			}
			if !n.ModTime.Equal(mtime) {
				t.Errorf("ModTime = %v, want %v", n.ModTime, mtime)
			}
		})
	}
}

func TestParseNoteLinks(t *testing.T) {
	n := ParseNote("a.md", []byte("---\ntopics: [x]\n---\n# A\nSee [[b]] and [[c#H|see c]].\n"), testTime)
	want := []Link{{Target: "b"}, {Target: "c", Heading: "H", Alias: "see c"}}
	if !reflect.DeepEqual(n.Links, want) {
		t.Errorf("Links = %#v, want %#v", n.Links, want)
	}
}

func TestTitleNames(t *testing.T) {
	for _, c := range []struct {
		path, raw string
		want      []string
	}{
		{"linux_snippets.md", "---\ntitle: Linux snippets\naliases: [snippets]\n---\n# [Configure nginx](https://x)\n", []string{"Linux snippets", "Configure nginx", "linux_snippets", "snippets"}},
		{"Plain.md", "# plain\n", []string{"plain"}},
		{"dir/note.md", "text\n", []string{"note"}},
	} {
		n := ParseNote(c.path, []byte(c.raw), testTime)
		if got := n.TitleNames(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: TitleNames = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestNoteTags(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []string
	}{
		{"---\ntopics: [t]\ntags: [g, T]\n---\n", []string{"t", "g"}},
		{"# Title\nSee #Go and #release/early-access, #2024 not, a#b not, `#code` not, [a link](#anchor) not.\n", []string{"go", "release/early-access"}},
		{"```\n#include <x>\n```\n## Heading #tag\n", []string{"tag"}},
		{"---\ntags: go\n---\n#GO again #v1\n", []string{"go", "v1"}},
	} {
		n := ParseNote("a.md", []byte(c.raw), testTime)
		if !reflect.DeepEqual(n.Tags, c.want) {
			t.Errorf("%q: Tags = %q, want %q", c.raw, n.Tags, c.want)
		}
	}
	many := strings.Repeat("#t", 1) + strings.Repeat(" #x", 3) // the same tag repeated counts once
	if got := ParseNote("b.md", []byte(many), testTime).Tags; !reflect.DeepEqual(got, []string{"t", "x"}) {
		t.Errorf("repeated tags = %q", got)
	}
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "#tag%d ", i)
	}
	if got := len(ParseNote("c.md", []byte(b.String()), testTime).Tags); got != MaxTags {
		t.Errorf("a note of 1000 tags keeps %d, want %d", got, MaxTags)
	}
}

// TestParseNoteBounds: a title, aliases and links past their bounds are cut
// with a warning, so no note makes its chunks' text grow without bound.
func TestParseNoteBounds(t *testing.T) {
	var links strings.Builder
	for i := range MaxLinks + 5 {
		fmt.Fprintf(&links, "[[n%d]] ", i)
	}
	aliases := strings.TrimSuffix(strings.Repeat("abcdefghi, ", 250), ", ") // 250 aliases of 9 characters
	for _, tc := range []struct {
		name, raw string
		check     func(n Note) string
		warning   string
	}{
		{
			name: "title", raw: "# " + strings.Repeat("é", MaxTitleChars+100) + "\n\nbody\n",
			check: func(n Note) string {
				if n.Title != strings.Repeat("é", MaxTitleChars) || n.Heading1 != n.Title {
					return fmt.Sprintf("title of %d characters", len([]rune(n.Title)))
				}
				return ""
			},
			warning: "title longer than 500 characters; only its start is used",
		},
		{
			name: "aliases", raw: "---\naliases: [" + aliases + "]\n---\nbody\n",
			check: func(n Note) string {
				if len(n.Frontmatter.Aliases) != MaxAliasChars/9 {
					return fmt.Sprintf("%d aliases kept", len(n.Frontmatter.Aliases))
				}
				return ""
			},
			warning: "frontmatter aliases: only the first 222 of 250 are searched (2000 characters in all at most)",
		},
		{
			name: "links", raw: "# L\n\n" + links.String(),
			check: func(n Note) string {
				if len(n.Links) != MaxLinks || n.Links[MaxLinks-1].Target != fmt.Sprintf("n%d", MaxLinks-1) {
					return fmt.Sprintf("%d links kept", len(n.Links))
				}
				return ""
			},
			warning: "10005 links; only the first 10000 are kept for related notes",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := ParseNote("x.md", []byte(tc.raw), time.Time{})
			if msg := tc.check(n); msg != "" {
				t.Error(msg)
			}
			if len(n.Warnings) != 1 || n.Warnings[0].Reason != tc.warning {
				t.Errorf("warnings %q, want %q", n.Warnings, tc.warning)
			}
		})
	}
}

// TestFrontmatterAliasNotFollowed: a known key whose value is a YAML alias
// is left out with one warning naming the keys, however far the aliases
// would expand ("billion laughs"); an anchored value itself is read.
func TestFrontmatterAliasNotFollowed(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\ntype: &t idea\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("topics: *l9\nstatus: *t\n---\n# Laughs\n\nbody\n")
	n := ParseNote("laughs.md", []byte(b.String()), time.Time{})
	if n.Frontmatter.Type != "idea" || n.Frontmatter.Topics != nil || n.Frontmatter.Status != "" {
		t.Errorf("frontmatter %+v", n.Frontmatter)
	}
	want := []Problem{{Reason: "frontmatter topics, status: a YAML alias (*name), not followed (ignored)", Kind: "frontmatter: a value is a YAML alias, not followed (ignored)", Detail: "topics, status"}}
	if !reflect.DeepEqual(n.Warnings, want) {
		t.Errorf("warnings %+v, want %+v", n.Warnings, want)
	}
}
