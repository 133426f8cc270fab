package vault

import (
	"regexp"
	"strings"
)

// Heading is one ATX heading ("#" to "######") of a note body, outside code
// fences.
type Heading struct {
	Level int    // 1 to 6
	Text  string // as written, without the "#"s and a closing run of "#"s
	Plain string // Text without link markup, emphasis or inline-code ticks (PlainHeading)
	Line  int    // 1-based line of the body
	Start int    // byte offset of the heading line in the body
}

// Outline returns the body's headings in order. A line is a heading when it
// starts with one to six "#" followed by a space (or ends there), as
// CommonMark has it, less the indented form.
func Outline(body string) []Heading {
	var out []Heading
	var fence fenceState
	off := 0
	for i, line := range strings.Split(body, "\n") {
		start := off
		off += len(line) + 1
		if fence.update(line) {
			continue
		}
		level, text, ok := ATXHeading(line)
		if !ok {
			continue
		}
		out = append(out, Heading{Level: level, Text: text, Plain: PlainHeading(text), Line: i + 1, Start: start})
	}
	return out
}

// ATXHeading reads one line as an ATX heading: its level and its text
// without the "#"s; ok is false for a line that is not one.
func ATXHeading(line string) (level int, text string, ok bool) {
	for level < len(line) && level < 7 && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	rest := line[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false // "#tag", "#!shebang"
	}
	rest = strings.TrimSpace(rest)
	// A closing run of "#"s preceded by a space is not part of the text.
	if t := strings.TrimRight(rest, "#"); t != rest && (t == "" || strings.HasSuffix(t, " ")) {
		rest = strings.TrimSpace(t)
	}
	return level, rest, true
}

var (
	mdImage    = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdRefLink  = regexp.MustCompile(`\[([^\]]+)\]\[[^\]]*\]`)
	wikiInline = regexp.MustCompile(`!?\[\[([^\[\]\n]+?)\]\]`)
	emphasis   = regexp.MustCompile(`(\*\*|__|~~|==)(.+?)(\*\*|__|~~|==)`)
)

// PlainHeading is a heading, a title or a line as a reader sees it rendered:
// markdown links and images become their text ("[Inhibit rules](https://…)"
// is "Inhibit rules"), wikilinks their alias or target ("[[a#b|c]]" is "c",
// "[[a]]" is "a"), strong, strike-through and highlight markers and
// inline-code ticks are dropped, and runs of white space are one space.
func PlainHeading(s string) string {
	if !strings.ContainsAny(s, "[*_~=`") {
		return oneLine(s)
	}
	s = wikiInline.ReplaceAllStringFunc(s, func(m string) string {
		inner := wikiInline.FindStringSubmatch(m)[1]
		if i := strings.Index(inner, "|"); i >= 0 {
			return strings.TrimSpace(inner[i+1:])
		}
		return strings.TrimSpace(strings.ReplaceAll(strings.TrimSuffix(inner, ".md"), "#", " › "))
	})
	s = mdImage.ReplaceAllString(s, "$1")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdRefLink.ReplaceAllString(s, "$1")
	s = emphasis.ReplaceAllStringFunc(s, func(m string) string {
		sub := emphasis.FindStringSubmatch(m)
		if sub[1] != sub[3] {
			return m
		}
		return sub[2]
	})
	s = strings.ReplaceAll(s, "`", "")
	return oneLine(s)
}

// PathSeparator joins the headings of a heading path: "Configuration ›
// Inhibit rules › Inhibit rules between times".
const PathSeparator = " › "

// HeadingPath is the path of plain headings down to hs[i]: each enclosing
// heading of a lower level, outermost first, then hs[i] itself.
func HeadingPath(hs []Heading, i int) []string {
	path := []string{hs[i].Plain}
	level := hs[i].Level
	for j := i - 1; j >= 0 && level > 1; j-- {
		if hs[j].Level < level {
			path = append(path, hs[j].Plain)
			level = hs[j].Level
		}
	}
	for l, r := 0, len(path)-1; l < r; l, r = l+1, r-1 {
		path[l], path[r] = path[r], path[l]
	}
	return path
}
