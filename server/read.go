package server

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
)

// vault_read's limits (docs/mcp.md, "vault_read").
const (
	// DefaultReadBytes is how much text one vault_read returns when the
	// caller does not say: about 1,500 tokens. A typical section fits whole
	// (on the demo vault 140 of its 141 "## " sections, median 441 bytes,
	// and 34 of its 35 notes), while a long note comes a page at a time
	// instead of filling the caller's context at once.
	DefaultReadBytes = 6000
	MinReadBytes     = 500
	MaxReadBytes     = 100_000
	MaxReadPathBytes = 1024 // path
	MaxSectionBytes  = 1024 // section: a heading or a heading path
	MaxAnchorBytes   = 4096 // anchor: a passage or a line of the note
	// MaxOutline is how many headings an answer lists; headings_more counts
	// the rest.
	MaxOutline = 50
	// maxMissPaths is how many headings an unknown section's error lists.
	maxMissPaths = 40
	// maxOtherMatches is how many other matches of a section or an anchor
	// an answer lists.
	maxOtherMatches = 10
	// maxEmbeds is how many embeds one read expands; the rest stay as
	// written. maxEmbedBytes bounds one embed's text.
	maxEmbeds     = 20
	maxEmbedBytes = 32 << 10
)

func readDef() mcp.Tool {
	return mcp.NewTool(ToolRead,
		mcp.WithDescription(`Read a note, or the part named by section, anchor or lines (one of them), max_bytes at a time; `+
			"next_offset says where more continues. The first page lists the note's headings."),
		mcp.WithString("path", mcp.Required(), mcp.MaxLength(MaxReadPathBytes), mcp.Description(`E.g. "projects/plan.md".`)),
		mcp.WithString("section", mcp.MaxLength(MaxSectionBytes), mcp.Description(`A heading, or a heading path as search gives it ("Setup › Linux"); with its subsections.`)),
		mcp.WithString("anchor", mcp.MaxLength(MaxAnchorBytes), mcp.Description(`A passage or line of the note; returns the paragraphs around it.`)),
		mcp.WithString("lines", mcp.Pattern(linesPattern), mcp.MaxLength(32), mcp.Description(`File lines as grep numbers them: "120-160", "120-".`)),
		mcp.WithInteger("offset", mcp.Min(0), mcp.Description("A next_offset.")),
		mcp.WithInteger("max_bytes", mcp.Min(MinReadBytes), mcp.Max(MaxReadBytes), mcp.Description(fmt.Sprintf("Default %d.", DefaultReadBytes))),
		mcp.WithSchemaAdditionalProperties(false),
		readOnly("Read a note"),
	)
}

const linesPattern = `^\s*[0-9]+\s*(-\s*[0-9]*\s*)?$`

var linesRE = regexp.MustCompile(`^\s*([0-9]+)\s*(?:(-)\s*([0-9]*)\s*)?$`)

// ReadResult is vault_read's answer.
type ReadResult struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	NoteMeta
	// Headings is the note's outline, one entry a heading: its "#"s and its
	// text without link markup ("## Configuration"), or, for a heading whose
	// text another heading shares, its heading path without the title
	// ("### Linux › Setup"). Each entry names its part as section. At most
	// MaxOutline; HeadingsMore counts the rest. Absent on a continuation
	// page (offset above 0).
	Headings     []string `json:"headings,omitempty"`
	HeadingsMore int      `json:"headings_more,omitempty"`
	// Section is the heading path of the text read (section), or where the
	// anchor or the first line sits.
	Section string `json:"section,omitempty"`
	// OtherMatches are the other headings a section names (their paths), or
	// the other places an anchor is found.
	OtherMatches []string `json:"other_matches,omitempty"`
	// Lines are the note file's lines the content comes from, "12-40".
	Lines   string `json:"lines,omitempty"`
	Content string `json:"content"`
	// Offset is where the content starts in the text selected (after
	// embeds are expanded), TotalBytes that text's length, and NextOffset
	// where the next page starts, when there is more.
	Offset     int  `json:"offset"`
	NextOffset *int `json:"next_offset,omitempty"`
	TotalBytes int  `json:"total_bytes"`
}

// readRequest is what vault_read was asked for.
type readRequest struct {
	section, anchor, lines string
	offset, maxBytes       int
	offsetGiven            bool
}

func (s *Server) read(ctx context.Context, a args) (ReadResult, error) {
	raw, err := a.requiredStr("path")
	if err != nil {
		return ReadResult{}, err
	}
	if len(raw) > MaxReadPathBytes {
		return ReadResult{}, fmt.Errorf("parameter %q is %d bytes, over the %d a path may have", "path", len(raw), MaxReadPathBytes)
	}
	var req readRequest
	var given []string
	for _, p := range []struct {
		name  string
		dst   *string
		limit int
	}{{"section", &req.section, MaxSectionBytes}, {"anchor", &req.anchor, MaxAnchorBytes}, {"lines", &req.lines, 32}} {
		v, err := a.str(p.name)
		if err != nil {
			return ReadResult{}, err
		}
		if len(v) > p.limit {
			return ReadResult{}, fmt.Errorf("parameter %q is %d bytes, over the %d it may have", p.name, len(v), p.limit)
		}
		if strings.TrimSpace(v) != "" {
			given = append(given, p.name)
		}
		*p.dst = v
	}
	if len(given) > 1 {
		return ReadResult{}, fmt.Errorf("give one of section, anchor and lines, not %s", strings.Join(given, " and "))
	}
	if req.offset, err = a.integer("offset", 0, vault.DefaultMaxNoteBytes*4, 0); err != nil {
		return ReadResult{}, err
	}
	req.offsetGiven = a.present("offset")
	if req.maxBytes, err = a.integer("max_bytes", MinReadBytes, MaxReadBytes, DefaultReadBytes); err != nil {
		return ReadResult{}, err
	}
	d, err := s.loadNote(raw)
	if err != nil {
		return ReadResult{}, err
	}
	var src embedSource
	if strings.Contains(d.n.Body, "![[") { // the index only to resolve embeds
		if h, release, err := s.acquire(ctx); err == nil {
			defer release()
			src = &serverEmbeds{s: s, ctx: ctx, db: h.db}
		} // without an index, embeds stay as written
	}
	return d.read(req, src)
}

// readNote is resources/read: the whole body, the title, metadata and
// outline, for a path as the client gave it (checked here). It is neither
// paged nor are its embeds expanded: a resource is the note as written.
func (s *Server) readNote(_ context.Context, raw string) (ReadResult, error) {
	d, err := s.loadNote(raw)
	if err != nil {
		return ReadResult{}, err
	}
	out := d.answer()
	out.Content, out.TotalBytes = d.n.Body, len(d.n.Body)
	return out, nil
}

// loadNote checks a client's path and reads and parses its note.
func (s *Server) loadNote(raw string) (*noteDoc, error) {
	rel, err := vault.CleanNotePath(raw)
	if err != nil {
		return nil, err
	}
	data, fi, err := vault.ReadNote(s.realVault, rel)
	if err != nil {
		return nil, err
	}
	n := vault.ParseNote(rel, data, fi.ModTime().UTC())
	return newNoteDoc(rel, n, vault.NormalizeText(data)), nil
}

// noteDoc is a note as vault_read reads it: its file text, where the body
// starts in it, and its outline.
type noteDoc struct {
	rel        string
	n          vault.Note
	text       string // the file's text, normalized (vault.NormalizeText)
	bodyStart  int    // byte offset of n.Body in text
	hs         []vault.Heading
	parent     []int // the enclosing heading of each heading, -1 for none
	lineStarts []int // byte offset of each line of text
}

func newNoteDoc(rel string, n vault.Note, text string) *noteDoc {
	d := &noteDoc{rel: rel, n: n, text: text, bodyStart: len(text) - len(n.Body), hs: vault.Outline(n.Body)}
	if d.bodyStart < 0 || text[d.bodyStart:] != n.Body {
		d.text, d.bodyStart = n.Body, 0 // cannot happen; keep offsets sound if it did
	}
	d.parent = make([]int, len(d.hs))
	var stack []int // the open headings, outermost first
	for i, h := range d.hs {
		for len(stack) > 0 && d.hs[stack[len(stack)-1]].Level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		d.parent[i] = -1
		if len(stack) > 0 {
			d.parent[i] = stack[len(stack)-1]
		}
		stack = append(stack, i)
	}
	d.lineStarts = []int{0}
	for i := 0; i < len(d.text); i++ {
		if d.text[i] == '\n' && i+1 < len(d.text) {
			d.lineStarts = append(d.lineStarts, i+1)
		}
	}
	return d
}

// fileLine is the 1-based line of the file a byte offset of text is on.
func (d *noteDoc) fileLine(off int) int {
	return sort.Search(len(d.lineStarts), func(i int) bool { return d.lineStarts[i] > off })
}

// headingAt is the index of the heading whose section holds text offset
// off, -1 before the first heading.
func (d *noteDoc) headingAt(off int) int {
	i := sort.Search(len(d.hs), func(i int) bool { return d.bodyStart+d.hs[i].Start > off }) - 1
	return i
}

// chain is heading i and its enclosing headings, innermost first: its
// heading path (vault.HeadingPath) reversed, as indices.
func (d *noteDoc) chain(i int) []int {
	var out []int
	for ; i >= 0; i = d.parent[i] {
		out = append(out, i)
	}
	return out
}

// path is heading i's heading path, outermost first, less its first skip
// parts.
func (d *noteDoc) path(i, skip int) []string {
	c := d.chain(i)
	var out []string
	for k := len(c) - 1 - skip; k >= 0; k-- {
		out = append(out, d.hs[c[k]].Plain)
	}
	return out
}

// pathOf is heading i's heading path, joined.
func (d *noteDoc) pathOf(i int) string {
	if i < 0 {
		return ""
	}
	return strings.Join(d.path(i, 0), vault.PathSeparator)
}

// sectionEnd is where heading i's section ends in the body: the next heading
// of its level or a higher one, else the body's end, less trailing blank
// lines.
func (d *noteDoc) sectionEnd(i int) int {
	end := len(d.n.Body)
	for j := i + 1; j < len(d.hs); j++ {
		if d.hs[j].Level <= d.hs[i].Level {
			end = d.hs[j].Start
			break
		}
	}
	return d.hs[i].Start + len(strings.TrimRight(d.n.Body[d.hs[i].Start:end], " \t\n"))
}

// answer is the part of vault_read's answer every read shares.
func (d *noteDoc) answer() ReadResult {
	out := ReadResult{Path: d.rel, Title: d.n.Title, NoteMeta: noteMeta(index.NoteMetaOf(&d.n), d.n.DateSource, d.n.ModTime)}
	out.Headings, out.HeadingsMore = d.outline(MaxOutline)
	return out
}

// outline is the note's headings as the answer lists them (ReadResult.Headings),
// at most limit of them, and how many more there are. A heading whose plain
// text another shares is given by the shortest trailing part of its path
// that no other heading's path ends with, so that each entry names one part.
func (d *noteDoc) outline(limit int) ([]string, int) {
	seen := map[string]int{}
	for _, h := range d.hs {
		seen[fold(h.Plain)]++
	}
	var out []string
	for i, h := range d.hs {
		if len(out) == limit {
			return out, len(d.hs) - limit
		}
		name := h.Plain
		if seen[fold(name)] > 1 {
			name = strings.Join(d.uniqueSuffix(i), vault.PathSeparator)
		}
		out = append(out, strings.Repeat("#", h.Level)+" "+name)
	}
	return out, 0
}

// uniqueSuffix is the shortest trailing part of heading i's path that ends
// no other heading's path, else its whole path.
func (d *noteDoc) uniqueSuffix(i int) []string {
	mine := d.chain(i)
	for n := 2; n <= len(mine); n++ {
		unique := true
		for j := range d.hs {
			if j == i || fold(d.hs[j].Plain) != fold(d.hs[i].Plain) {
				continue
			}
			other := d.chain(j)
			same := len(other) >= n
			for k := 0; same && k < n; k++ {
				same = fold(d.hs[other[k]].Plain) == fold(d.hs[mine[k]].Plain)
			}
			if same {
				unique = false
				break
			}
		}
		if unique {
			return d.path(i, len(mine)-n)
		}
	}
	return d.path(i, 0)
}

// read answers a vault_read of the note: it selects the text asked for,
// expands its embeds and returns one page of it.
func (d *noteDoc) read(req readRequest, src embedSource) (ReadResult, error) {
	out := d.answer()
	start, end := d.bodyStart, len(d.text) // the whole body
	var focus = -1                         // anchor: where the match starts in text
	switch {
	case strings.TrimSpace(req.section) != "":
		ms := d.matchSection(req.section)
		if len(ms) == 0 {
			return ReadResult{}, d.sectionMiss(req.section)
		}
		i := ms[0]
		start, end = d.bodyStart+d.hs[i].Start, d.bodyStart+d.sectionEnd(i)
		out.Section = d.pathOf(i)
		for k, j := range ms[1:] {
			if k == maxOtherMatches {
				out.OtherMatches = append(out.OtherMatches, fmt.Sprintf("and %d more", len(ms)-1-k))
				break
			}
			out.OtherMatches = append(out.OtherMatches, d.pathOf(j))
		}
	case strings.TrimSpace(req.anchor) != "":
		ms, n, err := d.findAnchor(req.anchor)
		if err != nil {
			return ReadResult{}, err
		}
		focus = ms[0][0]
		start, end = d.paragraphs(ms[0][0], ms[0][1])
		out.Section = d.pathOf(d.headingAt(focus))
		for _, m := range ms[1:] {
			where := fmt.Sprintf("line %d", d.fileLine(m[0]))
			if p := d.pathOf(d.headingAt(m[0])); p != "" {
				where += " (" + p + ")"
			}
			out.OtherMatches = append(out.OtherMatches, where)
		}
		if n > len(ms) {
			out.OtherMatches = append(out.OtherMatches, fmt.Sprintf("and %d more", n-len(ms)))
		}
	case strings.TrimSpace(req.lines) != "":
		var err error
		if start, end, err = d.lineSpan(req.lines); err != nil {
			return ReadResult{}, err
		}
		out.Section = d.pathOf(d.headingAt(start))
	}
	x := d.expand(start, end, src)
	offset := req.offset
	if !req.offsetGiven && focus >= 0 && len(x.text) > req.maxBytes {
		offset = x.around(focus, req.maxBytes)
	}
	if offset > len(x.text) || (offset == len(x.text) && offset > 0) {
		return ReadResult{}, fmt.Errorf("offset %d is past the end of the text (total_bytes %d)", offset, len(x.text))
	}
	for offset < len(x.text) && !utf8.RuneStart(x.text[offset]) {
		offset++ // an offset inside a character starts at the next one
	}
	stop := pageEnd(x.text, offset, req.maxBytes)
	out.Content, out.Offset, out.TotalBytes = x.text[offset:stop], offset, len(x.text)
	if stop < len(x.text) {
		out.NextOffset = &stop
	}
	if stop > offset {
		first, last := d.fileLine(x.source(offset)), d.fileLine(x.source(stop-1))
		out.Lines = strconv.Itoa(first) + "-" + strconv.Itoa(last)
	}
	if offset > 0 {
		out.Headings, out.HeadingsMore = nil, 0
	}
	return out, nil
}

// pageEnd is where a page of at most max bytes starting at off ends: after
// the last line end within it, else after the last space, else at the last
// character boundary. It never splits a UTF-8 sequence.
func pageEnd(text string, off, max int) int {
	if len(text)-off <= max {
		return len(text)
	}
	window := text[off : off+max]
	if i := strings.LastIndexByte(window, '\n'); i >= 0 {
		return off + i + 1
	}
	if i := strings.LastIndexAny(window, " \t"); i > max/2 {
		return off + i + 1
	}
	end := off + max
	for end > off && !utf8.RuneStart(text[end]) {
		end--
	}
	if end == off { // cannot happen with max >= MinReadBytes
		_, size := utf8.DecodeRuneInString(text[off:])
		end = off + size
	}
	return end
}

// wantHeadings are the forms of a section argument to look up, with the
// level its leading "#"s give (0 when none).
func wantHeadings(want string) (forms []string, level int) {
	w := strings.TrimSpace(want)
	run := len(w) - len(strings.TrimLeft(w, "#"))
	if run == 0 {
		return []string{w}, 0
	}
	rest := w[run:]
	if rest == "" || rest[0] == ' ' || rest[0] == '\t' {
		if run > 6 {
			run = 0
		}
		return []string{strings.TrimSpace(rest)}, run
	}
	// "##Setup" or a heading that starts with "#" ("#5 item"): both.
	return []string{w, rest}, 0
}

// fold is a text as headings and paths are compared: lower case, without
// white space.
func fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		if !unicode.IsSpace(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// pathSeparators join the headings of a path a caller gives, folded.
var pathSeparators = []string{fold(vault.PathSeparator), ">", "/"}

// matchSection returns the headings a section argument names, in the order
// it prefers them: a heading as written or plain, else a heading path (any
// trailing part of one, the note's title optionally first); those at the
// level its "#"s give first, then in note order.
func (d *noteDoc) matchSection(want string) []int {
	forms, level := wantHeadings(want)
	var out []int
	for _, exact := range []bool{true, false} {
		for i, h := range d.hs {
			for _, f := range forms {
				w := fold(f)
				if w == "" {
					continue
				}
				if exact && (w == fold(h.Text) || w == fold(h.Plain)) || !exact && d.pathMatches(w, i) {
					out = append(out, i)
					break
				}
			}
		}
		if len(out) > 0 {
			break
		}
	}
	if level > 0 {
		sort.SliceStable(out, func(a, b int) bool { return d.hs[out[a]].Level == level && d.hs[out[b]].Level != level })
	}
	return out
}

// pathMatches reports whether a folded path names heading i: its last part
// is the heading, each part before it the next enclosing heading, and what
// remains, if anything, is the note's title.
func (d *noteDoc) pathMatches(w string, i int) bool {
	chain := d.chain(i)
	title := fold(d.n.Title)
	var rec func(w string, k int) bool
	rec = func(w string, k int) bool {
		if k == len(chain) {
			return w == title
		}
		h := d.hs[chain[k]]
		for _, form := range []string{fold(h.Text), fold(h.Plain)} {
			if form == "" || !strings.HasSuffix(w, form) {
				continue
			}
			rest := w[:len(w)-len(form)]
			if rest == "" {
				return k > 0 // a path of one part is an exact match, tried first
			}
			for _, sep := range pathSeparators {
				if r, ok := strings.CutSuffix(rest, sep); ok && (rec(r, k+1) || r == title) {
					return true
				}
			}
		}
		return false
	}
	return rec(w, 0)
}

// sectionMiss is the error for a section the note lacks: its headings as
// paths, at most maxMissPaths of them.
func (d *noteDoc) sectionMiss(want string) error {
	if len(d.hs) == 0 {
		return fmt.Errorf("note %s has no heading %s: it has no headings at all; read it without section, or pass anchor or lines", d.rel, vault.QuoteInput(want))
	}
	var paths []string
	for i := range d.hs {
		if i == maxMissPaths {
			paths = append(paths, fmt.Sprintf("and %d more", len(d.hs)-i))
			break
		}
		paths = append(paths, strconv.Quote(d.pathOf(i)))
	}
	return fmt.Errorf("note %s has no heading %s; its headings are: %s", d.rel, vault.QuoteInput(want), strings.Join(paths, ", "))
}

// findAnchor finds an anchor in the note's text ignoring case and white
// space: the [start, end) of its first maxOtherMatches+1 occurrences, and
// how many there are.
func (d *noteDoc) findAnchor(anchor string) ([][2]int, int, error) {
	a := strings.TrimSpace(anchor)
	for {
		t := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(a, "…"), "…"), "..."), "..."))
		if t == a {
			break
		}
		a = t
	}
	fa, _ := foldText(a)
	if fa == "" {
		return nil, 0, fmt.Errorf("parameter %q has no text to look for", "anchor")
	}
	ft, orig := foldText(d.text)
	var ms [][2]int
	n := 0
	for from := 0; ; {
		i := strings.Index(ft[from:], fa)
		if i < 0 {
			break
		}
		i += from
		n++
		if len(ms) <= maxOtherMatches {
			last := orig[i+len(fa)-1]
			_, size := utf8.DecodeRuneInString(d.text[last:])
			ms = append(ms, [2]int{int(orig[i]), int(last) + size})
		}
		from = i + len(fa)
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("anchor %s is not in note %s (compared ignoring case and white space); search again, or read a section", vault.QuoteInput(anchor), d.rel)
	}
	return ms, n, nil
}

// foldText is s lower-cased without white space, and for each of its bytes
// the offset in s of the character it comes from.
func foldText(s string) (string, []int32) {
	var b strings.Builder
	b.Grow(len(s))
	orig := make([]int32, 0, len(s))
	for i, r := range s {
		if unicode.IsSpace(r) {
			continue
		}
		n := b.Len()
		b.WriteRune(unicode.ToLower(r))
		for range b.Len() - n {
			orig = append(orig, int32(i))
		}
	}
	return b.String(), orig
}

// paragraphs widens [start, end) of text to whole paragraphs: from the line
// after a blank line or a heading before it to the line before a blank line
// or a heading after it.
func (d *noteDoc) paragraphs(start, end int) (int, int) {
	first, last := d.fileLine(start)-1, d.fileLine(max(start, end-1))-1
	isBreak := func(l int) bool {
		line := d.lineText(l)
		if strings.TrimSpace(line) == "" {
			return true
		}
		_, _, ok := vault.ATXHeading(line)
		return ok
	}
	if !isBreak(first) {
		for first > 0 && !isBreak(first-1) {
			first--
		}
	}
	if !isBreak(last) {
		for last+1 < len(d.lineStarts) && !isBreak(last+1) {
			last++
		}
	}
	return d.lineStarts[first], d.lineEnd(last)
}

// lineText is line l (0-based) of text, without its line end.
func (d *noteDoc) lineText(l int) string {
	return d.text[d.lineStarts[l]:d.lineEnd(l)]
}

// lineEnd is the offset just past line l's text (before its "\n").
func (d *noteDoc) lineEnd(l int) int {
	if l+1 < len(d.lineStarts) {
		return d.lineStarts[l+1] - 1
	}
	return len(strings.TrimSuffix(d.text, "\n"))
}

// lineSpan is the [start, end) of text a lines argument names.
func (d *noteDoc) lineSpan(arg string) (int, int, error) {
	m := linesRE.FindStringSubmatch(arg)
	if m == nil {
		return 0, 0, fmt.Errorf("parameter %q is %s, not a line range (\"120-160\", \"120\" or \"120-\")", "lines", vault.QuoteInput(arg))
	}
	total := len(d.lineStarts)
	if d.text == "" {
		total = 0
	}
	from, err1 := strconv.Atoi(m[1])
	to := from
	var err2 error
	switch {
	case m[2] != "" && m[3] == "":
		to = total
	case m[3] != "":
		to, err2 = strconv.Atoi(m[3])
	}
	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("parameter %q is %s, not a line range", "lines", vault.QuoteInput(arg))
	case from < 1:
		return 0, 0, fmt.Errorf("parameter %q is %s: lines count from 1", "lines", vault.QuoteInput(arg))
	case to < from:
		return 0, 0, fmt.Errorf("parameter %q is %s: the range ends before it starts", "lines", vault.QuoteInput(arg))
	case from > total:
		return 0, 0, fmt.Errorf("parameter %q is %s, but note %s has %d lines", "lines", vault.QuoteInput(arg), d.rel, total)
	}
	to = min(to, total)
	return d.lineStarts[from-1], d.lineEnd(to - 1), nil
}
