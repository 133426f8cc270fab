package server

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// memVault is an embedSource over notes in memory, resolving link targets
// as the index does: the path without ".md", else the file name, both
// case-insensitively, the first in path order.
type memVault map[string]string

func (m memVault) doc(rel string) *noteDoc {
	raw := []byte(m[rel])
	n := vault.ParseNote(rel, raw, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	return newNoteDoc(rel, n, vault.NormalizeText(raw))
}

func (m memVault) resolve(target string) (string, bool) {
	key := strings.ToLower(strings.TrimSuffix(target, ".md"))
	var paths []string
	for p := range m {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if strings.ToLower(strings.TrimSuffix(p, ".md")) == key {
			return p, true
		}
	}
	for _, p := range paths {
		if strings.ToLower(strings.TrimSuffix(path.Base(p), ".md")) == key {
			return p, true
		}
	}
	return "", false
}

func (m memVault) load(rel string) (*noteDoc, error) {
	if _, ok := m[rel]; !ok {
		return nil, fmt.Errorf("no note %q", rel)
	}
	return m.doc(rel), nil
}

const guide = `---
type: knowledge
topics: [alerts]
---
# Alerting guide

Intro text.

## [Configuration](https://example.com/config)

Config intro.

### Inhibit rules

Inhibit one alert while another fires.

#### Between times

Only at night.

### Routes

Routes send alerts.

## Setup

### Linux

#### Install

apt install it.

### macOS

#### Install

brew install it.

## **Usage** with [[Other note|others]]

Use it daily.
`

func TestReadSection(t *testing.T) {
	v := memVault{"guide.md": guide}
	d := v.doc("guide.md")
	for _, tc := range []struct {
		name, section string
		wantPath      string // the heading path read
		wantFirst     string // the content's first line
		wantHas       string
		wantNot       string
		wantOthers    int
	}{
		{"level 2, plain, any case", "configuration", "Alerting guide › Configuration", "## [Configuration](https://example.com/config)", "Only at night.", "## Setup", 0},
		{"as written, link markup", "[Configuration](https://example.com/config)", "Alerting guide › Configuration", "## [Configuration](https://example.com/config)", "Routes send", "", 0},
		{"leading #s ignored", "### inhibit RULES", "Alerting guide › Configuration › Inhibit rules", "### Inhibit rules", "Only at night.", "### Routes", 0},
		{"level 4", "Between times", "Alerting guide › Configuration › Inhibit rules › Between times", "#### Between times", "Only at night.", "Routes", 0},
		{"level 1 is the whole note", "# Alerting guide", "Alerting guide", "# Alerting guide", "brew install", "type: knowledge", 0},
		{"emphasis and wikilink dropped", "Usage with others", "Alerting guide › Usage with others", "## **Usage** with [[Other note|others]]", "Use it daily.", "", 0},
		{"path with title", "Alerting guide › Setup › macOS › Install", "Alerting guide › Setup › macOS › Install", "#### Install", "brew install", "apt install", 0},
		{"path without title", "Setup › macOS › Install", "Alerting guide › Setup › macOS › Install", "#### Install", "brew install", "apt install", 0},
		{"trailing part of a path", "macos › install", "Alerting guide › Setup › macOS › Install", "#### Install", "brew install", "apt install", 0},
		{"path with >", "Setup > Linux > Install", "Alerting guide › Setup › Linux › Install", "#### Install", "apt install", "brew", 0},
		{"path with /", "Linux/Install", "Alerting guide › Setup › Linux › Install", "#### Install", "apt install", "brew", 0},
		{"path with #s first", "## Setup › Linux", "Alerting guide › Setup › Linux", "### Linux", "apt install", "macOS", 0},
		{"path through link markup", "Configuration › Inhibit rules", "Alerting guide › Configuration › Inhibit rules", "### Inhibit rules", "Only at night", "Routes", 0},
		{"same text twice: the first, and the other named", "Install", "Alerting guide › Setup › Linux › Install", "#### Install", "apt install", "brew", 1},
		{"an outline entry as given", "#### macOS › Install", "Alerting guide › Setup › macOS › Install", "#### Install", "brew install", "apt", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := d.read(readRequest{section: tc.section, maxBytes: DefaultReadBytes}, v)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(out.Content, "\n")
			switch {
			case out.Section != tc.wantPath:
				t.Errorf("section %q, want %q", out.Section, tc.wantPath)
			case first != tc.wantFirst:
				t.Errorf("first line %q, want %q", first, tc.wantFirst)
			case !strings.Contains(out.Content, tc.wantHas):
				t.Errorf("content lacks %q: %q", tc.wantHas, out.Content)
			case tc.wantNot != "" && strings.Contains(out.Content, tc.wantNot):
				t.Errorf("content has %q: %q", tc.wantNot, out.Content)
			case len(out.OtherMatches) != tc.wantOthers:
				t.Errorf("other matches %q, want %d", out.OtherMatches, tc.wantOthers)
			case out.NextOffset != nil || out.TotalBytes != len(out.Content):
				t.Errorf("a small section is one page: next %v, total %d, content %d", out.NextOffset, out.TotalBytes, len(out.Content))
			}
		})
	}
	out, _ := d.read(readRequest{section: "install", maxBytes: DefaultReadBytes}, v)
	if !slices.Equal(out.OtherMatches, []string{"Alerting guide › Setup › macOS › Install"}) {
		t.Errorf("other matches %q", out.OtherMatches)
	}
	// The outline names every heading; each entry, passed back, reads its own.
	wantOutline := []string{"# Alerting guide", "## Configuration", "### Inhibit rules", "#### Between times", "### Routes", "## Setup",
		"### Linux", "#### Linux › Install", "### macOS", "#### macOS › Install", "## Usage with others"}
	if !slices.Equal(out.Headings, wantOutline) {
		t.Fatalf("headings %q\nwant %q", out.Headings, wantOutline)
	}
	for i, entry := range out.Headings {
		got, err := d.read(readRequest{section: entry, maxBytes: DefaultReadBytes}, v)
		if err != nil {
			t.Fatalf("%q: %v", entry, err)
		}
		if want := d.pathOf(i); got.Section != want || len(got.OtherMatches) != 0 {
			t.Errorf("%q read %q (others %q), want %q", entry, got.Section, got.OtherMatches, want)
		}
	}
	// Section lines are the file's (frontmatter counted).
	if out.Lines != "29-31" {
		t.Errorf("lines %q, want 29-31", out.Lines)
	}
}

func TestReadSectionMiss(t *testing.T) {
	v := memVault{"guide.md": guide, "flat.md": "no headings here\n"}
	_, err := v.doc("guide.md").read(readRequest{section: "Nope " + strings.Repeat("x", 500), maxBytes: DefaultReadBytes}, v)
	msg := fmt.Sprint(err)
	for _, want := range []string{`"Nope xxx`, `…`, `"Alerting guide › Setup › macOS › Install"`, `"Alerting guide › Configuration › Inhibit rules"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("miss %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, strings.Repeat("x", 100)) || strings.Contains(msg, "Only at night") {
		t.Errorf("miss quotes too much: %q", msg)
	}
	_, err = v.doc("flat.md").read(readRequest{section: "x", maxBytes: DefaultReadBytes}, v)
	if !strings.Contains(fmt.Sprint(err), "no headings at all") {
		t.Errorf("miss in a note without headings: %v", err)
	}
	// A note of thousands of headings: the outline and the miss are capped.
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "## H%d\n\ntext %d\n\n", i, i)
	}
	v["many.md"] = b.String()
	d := v.doc("many.md")
	out, err := d.read(readRequest{maxBytes: DefaultReadBytes}, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Headings) != MaxOutline || out.HeadingsMore != 3000-MaxOutline {
		t.Errorf("outline of %d headings, %d more", len(out.Headings), out.HeadingsMore)
	}
	_, err = d.read(readRequest{section: "nope", maxBytes: DefaultReadBytes}, v)
	if msg := fmt.Sprint(err); strings.Count(msg, `"H`) != maxMissPaths || !strings.Contains(msg, "and 2960 more") {
		t.Errorf("miss in a note of 3000 headings is %d bytes: %.300s", len(msg), msg)
	}
	if out, _ := d.read(readRequest{section: "H2999", maxBytes: DefaultReadBytes}, v); out.Content != "## H2999\n\ntext 2999" {
		t.Errorf("last section %q", out.Content)
	}
}

func TestReadAnchor(t *testing.T) {
	v := memVault{"guide.md": guide}
	d := v.doc("guide.md")
	for _, tc := range []struct {
		name, anchor, wantSection, wantContent, wantLines string
	}{
		{"a line", "Inhibit one alert while another fires.", "Alerting guide › Configuration › Inhibit rules", "Inhibit one alert while another fires.", "15-15"},
		{"case and white space", "INHIBIT one\n  alert   while", "Alerting guide › Configuration › Inhibit rules", "Inhibit one alert while another fires.", "15-15"},
		{"a snippet with ellipses", "…alert while another…", "Alerting guide › Configuration › Inhibit rules", "Inhibit one alert while another fires.", "15-15"},
		{"across lines", "apt install it.  ### macos", "Alerting guide › Setup › Linux › Install", "apt install it.\n\n### macOS", "31-33"},
		{"in the frontmatter", "topics: [alerts]", "", "---\ntype: knowledge\ntopics: [alerts]\n---", "1-4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := d.read(readRequest{anchor: tc.anchor, maxBytes: DefaultReadBytes}, v)
			if err != nil {
				t.Fatal(err)
			}
			if out.Section != tc.wantSection || out.Content != tc.wantContent || out.Lines != tc.wantLines {
				t.Errorf("got section %q, lines %s, content %q\nwant %q, %s, %q", out.Section, out.Lines, out.Content, tc.wantSection, tc.wantLines, tc.wantContent)
			}
		})
	}
	out, err := d.read(readRequest{anchor: "install it", maxBytes: DefaultReadBytes}, v)
	if err != nil || out.Content != "apt install it." || !slices.Equal(out.OtherMatches, []string{"line 37 (Alerting guide › Setup › macOS › Install)"}) {
		t.Errorf("anchor found twice: %q, %q, %v", out.Content, out.OtherMatches, err)
	}
	_, err = d.read(readRequest{anchor: "not in the note at all " + strings.Repeat("y", 300), maxBytes: DefaultReadBytes}, v)
	if msg := fmt.Sprint(err); !strings.Contains(msg, `anchor "not in the note`) || !strings.Contains(msg, "guide.md") || strings.Contains(msg, strings.Repeat("y", 100)) {
		t.Errorf("anchor miss: %q", msg)
	}
	if _, err := d.read(readRequest{anchor: " … ", maxBytes: DefaultReadBytes}, v); err == nil {
		t.Error("an anchor of ellipses alone was read")
	}
	// In a long paragraph the page starts near the anchor, not at the paragraph.
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "line %04d of one long paragraph\n", i)
	}
	v["long.md"] = b.String()
	out, err = v.doc("long.md").read(readRequest{anchor: "line 1500 of", maxBytes: 1000}, v)
	if err != nil || !strings.Contains(out.Content, "line 1500 of") || len(out.Content) > 1000 || out.Offset == 0 || out.TotalBytes != len(b.String())-1 {
		t.Errorf("anchor in a long paragraph: offset %d of %d, %v: %.80q", out.Offset, out.TotalBytes, err, out.Content)
	}
}

func TestReadLines(t *testing.T) {
	v := memVault{"guide.md": guide}
	d := v.doc("guide.md")
	for _, tc := range []struct{ lines, want, section, err string }{
		{"1-2", "---\ntype: knowledge", "", ""},
		{"15", "Inhibit one alert while another fires.", "Alerting guide › Configuration › Inhibit rules", ""},
		{" 39 - 45 ", "## **Usage** with [[Other note|others]]\n\nUse it daily.", "Alerting guide › Usage with others", ""},
		{"41-", "Use it daily.", "Alerting guide › Usage with others", ""},
		{"42", "", "", "has 41 lines"},
		{"0-3", "", "", "count from 1"},
		{"9-3", "", "", "ends before it starts"},
		{"a-b", "", "", "not a line range"},
	} {
		out, err := d.read(readRequest{lines: tc.lines, maxBytes: DefaultReadBytes}, v)
		if tc.err != "" {
			if !strings.Contains(fmt.Sprint(err), tc.err) {
				t.Errorf("lines %q: error %v, want %q", tc.lines, err, tc.err)
			}
			continue
		}
		if err != nil || out.Content != tc.want || out.Section != tc.section {
			t.Errorf("lines %q: %q in %q (%v), want %q in %q", tc.lines, out.Content, out.Section, err, tc.want, tc.section)
		}
	}
}

// TestReadPages: a long note comes a page at a time, each cut at a line end
// (or, in a line longer than a page, at a space or a character boundary),
// and the pages put together are the text.
func TestReadPages(t *testing.T) {
	lines := []string{"# Long"}
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf("Zeile %d: Größe ändert sich — 日本語のテキスト %d", i, i))
	}
	long := strings.Join(lines, "\n") + "\n"
	oneLine := "# One\n\n" + strings.Repeat("日本語", 4000) + "\n" // no space, no line end for 36 KB
	v := memVault{"long.md": long, "one.md": oneLine}
	for _, tc := range []struct {
		rel     string
		section string
		max     int
	}{{"long.md", "", DefaultReadBytes}, {"long.md", "Long", 777}, {"one.md", "", 1000}, {"one.md", "", MinReadBytes + 1}} {
		d := v.doc(tc.rel)
		var got strings.Builder
		off, pages, total := 0, 0, -1
		for {
			out, err := d.read(readRequest{section: tc.section, offset: off, offsetGiven: off > 0, maxBytes: tc.max}, v)
			if err != nil {
				t.Fatalf("%s at %d: %v", tc.rel, off, err)
			}
			pages++
			if len(out.Content) > tc.max || !utf8.ValidString(out.Content) || out.Offset != off {
				t.Fatalf("%s page %d: %d bytes, valid %v, offset %d", tc.rel, pages, len(out.Content), utf8.ValidString(out.Content), out.Offset)
			}
			if tc.rel == "long.md" && out.NextOffset != nil && !strings.HasSuffix(out.Content, "\n") {
				t.Errorf("page %d is not cut at a line end: %q", pages, out.Content[len(out.Content)-20:])
			}
			if (pages == 1) != (out.Headings != nil) {
				t.Errorf("page %d: headings %q", pages, out.Headings)
			}
			total = out.TotalBytes
			got.WriteString(out.Content)
			if out.NextOffset == nil {
				break
			}
			off = *out.NextOffset
		}
		want := strings.TrimSuffix(v.doc(tc.rel).n.Body, "\n")
		if tc.section == "" {
			want = v.doc(tc.rel).n.Body
		}
		if got.String() != want || total != len(want) || pages < len(want)/tc.max {
			t.Errorf("%s in %d pages of %d: %d bytes of %d (total_bytes %d)", tc.rel, pages, tc.max, got.Len(), len(want), total)
		}
	}
	d := v.doc("long.md")
	out, _ := d.read(readRequest{maxBytes: DefaultReadBytes}, v)
	if out.NextOffset == nil || len(out.Content) > DefaultReadBytes || out.Lines != "1-"+fmt.Sprint(strings.Count(out.Content, "\n")) {
		t.Errorf("a %d-byte note read whole by default: %d bytes, lines %s", len(long), len(out.Content), out.Lines)
	}
	if _, err := d.read(readRequest{offset: len(long) + 10, offsetGiven: true, maxBytes: DefaultReadBytes}, v); !strings.Contains(fmt.Sprint(err), "past the end") {
		t.Errorf("offset past the end: %v", err)
	}
	// An offset inside a character starts at the next one.
	out, _ = v.doc("one.md").read(readRequest{offset: 8, offsetGiven: true, maxBytes: 600}, v)
	if !utf8.ValidString(out.Content) || out.Offset != 10 {
		t.Errorf("offset inside a character: %d, %.20q", out.Offset, out.Content)
	}
}

func TestReadEmbeds(t *testing.T) {
	padding := strings.Repeat("Padding words. ", 30)
	v := memVault{
		"main.md": "# Main\n\nBefore.\n\n![[Other]]\n\nInline ![[folder/Deep#Part two]] here.\n\n" +
			"![[deep#^quote]]\n\n![[missing note]]\n\n![[pic.png]]\n\n![[main]]\n\n`![[Other]]` in code\n\n![[cycle]]\n\n" + padding + "\n",
		"Other.md":       "---\ntype: x\n---\n# Other\n\nOther's text.\n",
		"folder/Deep.md": "# Deep\n\n## Part one\n\none\n\n## Part two\n\ntwo\n\n### Sub\n\nsub text\n\n## Part three\n\nthree\n\nA quoted line. ^quote\n",
		"cycle.md":       "# Cycle\n\nCycle embeds main: ![[main]] and itself ![[cycle]].\n",
	}
	d := v.doc("main.md")
	out, err := d.read(readRequest{maxBytes: DefaultReadBytes}, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Before.\n\n> embedded from Other.md:\n# Other\n\nOther's text.\n> end of embed\n",
		"Inline \n> embedded from folder/Deep.md#Part two:\n## Part two\n\ntwo\n\n### Sub\n\nsub text\n> end of embed\n here.",
		"> embedded from folder/Deep.md#^quote:\nA quoted line.\n> end of embed",
		"![[missing note]]", "![[pic.png]]", "\n![[main]]\n", "`![[Other]]` in code", "\n" + padding,
		"> embedded from cycle.md:\n# Cycle\n\nCycle embeds main: ![[main]] and itself ![[cycle]].\n> end of embed",
	} {
		if !strings.Contains(out.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, out.Content)
		}
	}
	if strings.Contains(out.Content, "type: x") || strings.Count(out.Content, "> embedded from") != 4 || out.TotalBytes != len(out.Content) {
		t.Errorf("embeds expanded wrong:\n%s", out.Content)
	}
	// The expanded text counts against the budget and pages like any other.
	first, err := d.read(readRequest{maxBytes: MinReadBytes}, v)
	if err != nil || first.NextOffset == nil || first.TotalBytes != len(out.Content) {
		t.Fatalf("a small page: %v, %+v", err, first)
	}
	rest, err := d.read(readRequest{offset: *first.NextOffset, offsetGiven: true, maxBytes: DefaultReadBytes}, v)
	if err != nil || first.Content+rest.Content != out.Content {
		t.Errorf("pages of the expanded text do not join: %v", err)
	}
	// Without a way to find notes (no index), embeds stay as written.
	plain, _ := d.read(readRequest{maxBytes: DefaultReadBytes}, nil)
	if plain.Content != d.n.Body {
		t.Errorf("without an index: %q", plain.Content)
	}
}
