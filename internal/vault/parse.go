package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// ParseNote parses one note's raw bytes. It never fails: what is wrong with the
// file (malformed frontmatter, invalid UTF-8) is recorded in Note.Warnings and the
// rest is indexed. Deciding whether a file is a note at all (binary, too large) is
// the scanner's job.
func ParseNote(relPath string, raw []byte, modTime time.Time) Note {
	sum := sha256.Sum256(raw)
	n := Note{Path: relPath, ModTime: modTime, Size: int64(len(raw)), Hash: hex.EncodeToString(sum[:])}
	text := normalizeText(raw, &n.Warnings)

	fm, body, fmErr := splitFrontmatter(text)
	if fmErr != "" {
		n.Warnings = append(n.Warnings, NewProblem(fmErr))
	}
	if fm != "" {
		meta, warns := parseFrontmatter(fm)
		n.Frontmatter = meta
		n.Warnings = append(n.Warnings, warns...)
	}
	n.Body = body
	n.Title, n.Heading1 = titleOf(n.Frontmatter.Title, body, relPath)
	var cutT, cutH bool
	n.Title, cutT = cutTitle(n.Title)
	n.Heading1, cutH = cutTitle(n.Heading1)
	if cutT || cutH {
		n.Warnings = append(n.Warnings, NewProblem(fmt.Sprintf("title longer than %d characters; only its start is used", MaxTitleChars)))
	}
	var dateErr error
	n.Date, n.DateSource, dateErr = effectiveDate(n.Frontmatter.Date, relPath, modTime)
	if dateErr != nil {
		instead := "the file time"
		if n.DateSource == "filename" {
			instead = "the date in the file name"
		}
		n.Warnings = append(n.Warnings, Problem{
			Reason: fmt.Sprintf("frontmatter date %q %v; using %s", n.Frontmatter.Date, dateErr, instead),
			Kind:   fmt.Sprintf("frontmatter date %v; using %s", dateErr, instead),
			Detail: strconv.Quote(n.Frontmatter.Date),
		})
	}
	n.Links = ExtractLinks(body)
	if len(n.Links) > MaxLinks {
		n.Warnings = append(n.Warnings, Problem{
			Reason: fmt.Sprintf("%d links; only the first %d are kept for related notes", len(n.Links), MaxLinks),
			Kind:   fmt.Sprintf("more than %d links; only the first %d are kept for related notes", MaxLinks, MaxLinks),
			Detail: fmt.Sprintf("%d links", len(n.Links)),
		})
		n.Links = n.Links[:MaxLinks:MaxLinks]
	}
	n.Tags = noteTags(n.Frontmatter, body)
	return n
}

// MaxLinks bounds the wikilinks kept of one note, for related notes: a map
// of content links to hundreds of notes, a note of a hundred thousand links
// is generated, and every build resolves every link again. The text of the
// links past it is still searched.
const MaxLinks = 10000

// MaxTags bounds the tags kept of one note: a note of a hundred thousand
// "#words" is not a hundred thousand topics.
const MaxTags = 64

var inlineTag = regexp.MustCompile(`(?:^|\s)#([\p{L}\p{N}_/-]*[\p{L}_/-][\p{L}\p{N}_/-]*)`)

// noteTags are the frontmatter's topics and tags and the body's inline
// #tags (outside code), lower-cased, each once, in that order, at most
// MaxTags. An inline tag is Obsidian's: "#" after a space or the line's
// start, then letters, digits, "_", "-" and "/", not digits alone.
func noteTags(fm Frontmatter, body string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if t = strings.ToLower(strings.Trim(t, "/")); t != "" && !seen[t] && len(out) < MaxTags {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, t := range fm.Topics {
		add(t)
	}
	for _, t := range fm.Tags {
		add(t)
	}
	var fence fenceState
	for _, line := range strings.Split(body, "\n") {
		if len(out) >= MaxTags {
			break
		}
		if fence.update(line) || !strings.Contains(line, "#") {
			continue
		}
		for _, m := range inlineTag.FindAllStringSubmatch(stripInlineCode(line), -1) {
			add(m[1])
		}
	}
	return out
}

// NormalizeText is a note file's text as ParseNote reads it: UTF-8 (invalid
// bytes replaced), LF line ends, no byte-order mark. A note's Body is a suffix
// of it, so the file line of a body offset can be counted in it.
func NormalizeText(raw []byte) string {
	var ignored []Problem
	return normalizeText(raw, &ignored)
}

// normalizeText makes the text UTF-8 with LF line ends and no byte-order mark.
func normalizeText(raw []byte, warnings *[]Problem) string {
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	s := string(raw)
	if !utf8.ValidString(s) {
		*warnings = append(*warnings, NewProblem("invalid UTF-8 replaced with U+FFFD"))
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s
}

// splitFrontmatter separates a leading "---" YAML block from the body. A block
// that is opened but never closed is reported and left in the body, since it may
// be a horizontal rule the user meant.
func splitFrontmatter(s string) (fm, body, problem string) {
	if !strings.HasPrefix(s, "---\n") && s != "---" {
		return "", s, ""
	}
	rest := strings.TrimPrefix(s, "---\n")
	lines := strings.SplitAfter(rest, "\n")
	off := 0
	for _, line := range lines {
		t := strings.TrimRight(line, " \t\n")
		if t == "---" || t == "..." {
			return rest[:off], rest[off+len(line):], ""
		}
		off += len(line)
	}
	return "", s, "frontmatter: opening --- has no closing --- (read as body text)"
}

// knownKeys are the frontmatter keys parseFrontmatter reads.
var knownKeys = map[string]bool{"type": true, "title": true, "date": true, "project": true, "status": true, "source": true, "topics": true, "tags": true, "aliases": true, "alias": true}

// parseFrontmatter reads the keys vault-rag knows. Errors name the problem and
// keep whatever could be read.
func parseFrontmatter(fm string) (Frontmatter, []Problem) {
	var m Frontmatter
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(fm), &root); err != nil {
		return m, []Problem{detailed("frontmatter is not valid YAML (ignored)", oneLine(err.Error()))}
	}
	if len(root.Content) == 0 {
		return m, nil // empty block
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return m, []Problem{NewProblem("frontmatter is not a mapping of keys to values (ignored)")}
	}
	var warns []Problem
	var aliases, alias []string // "aliases" and "alias" both count
	seen := map[string]bool{}
	var aliased []string // known keys whose value is a YAML alias
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		key := strings.ToLower(strings.TrimSpace(k.Value))
		if seen[key] {
			warns = append(warns, Problem{
				Reason: fmt.Sprintf("frontmatter: duplicate key %q (the last one wins)", key),
				Kind:   "frontmatter: duplicate key (the last one wins)",
				Detail: strconv.Quote(key),
			})
		}
		seen[key] = true
		if v.Kind == yaml.AliasNode && key != "aliases" && key != "alias" && knownKeys[key] {
			// An alias is never expanded (a chain of them, "billion laughs",
			// would be 10^9 values): the value is left out, and said so.
			aliased = append(aliased, key)
			continue
		}
		switch key {
		case "type":
			m.Type = scalar(v)
		case "title":
			m.Title = oneLine(scalar(v))
		case "date":
			m.Date = scalar(v)
		case "project":
			m.Project = scalar(v)
		case "status":
			m.Status = scalar(v)
		case "source":
			m.Source = scalar(v)
		case "topics", "tags":
			if key == "tags" {
				m.Tags = stringList(v)
			}
			if key == "tags" && m.Topics != nil {
				continue // topics wins over tags
			}
			m.Topics = stringList(v)
		case "aliases":
			aliases = aliasList(key, v, &warns)
		case "alias":
			alias = aliasList(key, v, &warns)
		}
	}
	if len(aliased) > 0 {
		keys := strings.Join(aliased, ", ")
		warns = append(warns, Problem{
			Reason: fmt.Sprintf("frontmatter %s: a YAML alias (*name), not followed (ignored)", keys),
			Kind:   "frontmatter: a value is a YAML alias, not followed (ignored)",
			Detail: keys,
		})
	}
	m.Aliases = append(aliases, alias...)
	if kept := keptAliases(m.Aliases); kept < len(m.Aliases) {
		warns = append(warns, Problem{
			Reason: fmt.Sprintf("frontmatter aliases: only the first %d of %d are searched (%d characters in all at most)", kept, len(m.Aliases), MaxAliasChars),
			Kind:   fmt.Sprintf("frontmatter aliases: only the first ones are searched (%d characters in all at most)", MaxAliasChars),
			Detail: fmt.Sprintf("%d of %d", kept, len(m.Aliases)),
		})
		m.Aliases = m.Aliases[:kept]
	}
	return m, warns
}

// MaxTitleChars bounds a note's title and first heading, and MaxAliasChars
// its aliases together: every chunk of a note is embedded with its title and
// searched with its title and aliases, so a megabyte "# " line or alias list
// would be tokenized and indexed once per chunk. Real titles and aliases are
// far shorter.
const (
	MaxTitleChars = 500
	MaxAliasChars = 2000
)

// cutTitle cuts s to its first MaxTitleChars characters; cut says it did.
// A "# " line cut so is no longer the title ChunkNote drops from the first
// chunk: the whole line stays there, and searchable.
func cutTitle(s string) (_ string, cut bool) {
	n := 0
	for i := range s {
		if n == MaxTitleChars {
			return strings.TrimSpace(s[:i]), true
		}
		n++
	}
	return s, false
}

// keptAliases is how many of the aliases, in order, fit within
// MaxAliasChars together.
func keptAliases(aliases []string) int {
	total := 0
	for i, a := range aliases {
		if total += utf8.RuneCountInString(a); total > MaxAliasChars {
			return i
		}
	}
	return len(aliases)
}

// aliasList reads a list of names or a single one. Case is kept and commas
// are not split on: an alias is a name ("Smith, John"), not a list of tags.
func aliasList(key string, v *yaml.Node, warns *[]Problem) []string {
	var out []string
	add := func(n *yaml.Node) {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		if n.Kind != yaml.ScalarNode {
			line := n.Line + 1 // in the file: the frontmatter starts after its "---"
			*warns = append(*warns, Problem{
				Reason: fmt.Sprintf("frontmatter %s: the value on line %d is not a name (ignored)", key, line),
				Kind:   "frontmatter aliases: a value is not a name (ignored)",
				Detail: fmt.Sprintf("%s, line %d", key, line),
			})
			return
		}
		if s := strings.TrimSpace(n.Value); s != "" && n.Tag != "!!null" {
			out = append(out, s)
		}
	}
	if v.Kind == yaml.SequenceNode {
		for _, c := range v.Content {
			add(c)
		}
	} else {
		add(v)
	}
	return out
}

func scalar(v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode {
		return ""
	}
	return strings.TrimSpace(v.Value)
}

// stringList accepts a YAML list or a comma-separated string.
func stringList(v *yaml.Node) []string {
	var raw []string
	switch v.Kind {
	case yaml.SequenceNode:
		for _, c := range v.Content {
			if c.Kind == yaml.ScalarNode {
				raw = append(raw, c.Value)
			}
		}
	case yaml.ScalarNode:
		raw = strings.Split(v.Value, ",")
	}
	out := []string{}
	for _, s := range raw {
		s = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "#")))
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// titleOf returns a note's title: the frontmatter title, else the first
// level-one heading outside code fences, else the file name without its
// extension, each as a reader sees it rendered (PlainHeading: "[Linux
// snippets](https://…)" is "Linux snippets"). heading1 is that first
// level-one heading, plain, "" without one: a search of titles finds the
// note by it too (Note.TitleNames).
func titleOf(fmTitle, body, relPath string) (title, heading1 string) {
	var fence fenceState
	for _, line := range strings.Split(body, "\n") {
		if fence.update(line) {
			continue
		}
		if strings.HasPrefix(line, "# ") {
			if t := PlainHeading(line[2:]); t != "" {
				heading1 = t
				break
			}
		}
	}
	switch {
	case PlainHeading(fmTitle) != "":
		return PlainHeading(fmTitle), heading1
	case heading1 != "":
		return heading1, heading1
	}
	return fileStem(relPath), heading1
}

func fileStem(relPath string) string {
	return strings.TrimSuffix(path.Base(relPath), path.Ext(relPath))
}

// TitleNames are the names a search of titles finds the note by, each once:
// its title, its first level-one heading and its file name (without the
// extension), then its frontmatter aliases.
func (n *Note) TitleNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range append([]string{n.Title, n.Heading1, fileStem(n.Path)}, n.Frontmatter.Aliases...) {
		if k := strings.ToLower(s); s != "" && !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

var fileDate = regexp.MustCompile(`(?:^|/)(\d{4}-\d{2}-\d{2})[^/]*$`)

// effectiveDate is the date recency decays from: the frontmatter's, else a
// YYYY-MM-DD at the start of the file name, else the file time. Both written
// dates are read by parseDate; fmErr says why a frontmatter date was not
// read (nil when it was, or when there is none).
func effectiveDate(fmDate, relPath string, mod time.Time) (date time.Time, source string, fmErr error) {
	if fmDate != "" {
		t, err := parseDate(fmDate)
		if err == nil {
			return t, "frontmatter", nil
		}
		fmErr = err
	}
	if m := fileDate.FindStringSubmatch(relPath); m != nil {
		if t, err := parseDate(m[1]); err == nil {
			return t, "filename", fmErr
		}
	}
	return mod.UTC(), DateFromFileTime, fmErr
}

// DateFromFileTime is Note.DateSource for a note that states no date: its
// date is the file's modification time.
const DateFromFileTime = "mtime"

// DateWritten reports whether a note's date, read from source
// (Note.DateSource), is one its author wrote: in the frontmatter or the file
// name, not the file's time.
func DateWritten(source string) bool { return source != "" && source != DateFromFileTime }

// fenceState tracks fenced code blocks (``` or ~~~) line by line.
type fenceState struct{ marker string }

// Fence tracks fenced code blocks (``` or ~~~) line by line, as the chunker,
// the outline and the links see them; its zero value is outside any fence.
type Fence struct{ s fenceState }

// Update reports whether line is inside a fence or is a fence delimiter.
func (f *Fence) Update(line string) bool { return f.s.update(line) }

// update reports whether line is inside a fence or is a fence delimiter.
func (f *fenceState) update(line string) bool {
	t := strings.TrimLeft(line, " ")
	if f.marker != "" {
		if strings.HasPrefix(t, f.marker) {
			f.marker = ""
		}
		return true
	}
	for _, m := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, m) {
			f.marker = m
			return true
		}
	}
	return false
}

var wikilink = regexp.MustCompile(`\[\[([^\[\]\n]+?)\]\]`)

// ExtractLinks returns the [[wikilinks]] of a note body outside code fences and
// inline code, in order, with the "#heading" and "|alias" forms split out.
// Embeds (![[...]]) count as links too.
func ExtractLinks(body string) []Link {
	var links []Link
	var fence fenceState
	for _, line := range strings.Split(body, "\n") {
		if fence.update(line) {
			continue
		}
		line = stripInlineCode(line)
		for _, m := range wikilink.FindAllStringSubmatch(line, -1) {
			inner := m[1]
			var l Link
			if i := strings.Index(inner, "|"); i >= 0 {
				l.Alias = strings.TrimSpace(inner[i+1:])
				inner = inner[:i]
			}
			if i := strings.Index(inner, "#"); i >= 0 {
				l.Heading = strings.TrimSpace(strings.TrimLeft(inner[i+1:], "#^"))
				inner = inner[:i]
			}
			l.Target = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(inner), ".md"))
			if l.Target == "" && l.Heading == "" {
				continue
			}
			links = append(links, l)
		}
	}
	return links
}

func stripInlineCode(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			if in {
				// A space stands for the span, so the text around it cannot
				// join into link syntax: "[`x`[a]]" is not [[a]].
				b.WriteByte(' ')
			}
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}
