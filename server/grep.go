package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// ToolGrep is the exact search: every line of the notes that holds a string
// or matches a regular expression, as ripgrep finds them.
const ToolGrep = "vault_grep"

// vault_grep's bounds.
const (
	MaxGrepPattern        = 1024 // bytes of a pattern
	DefaultGrepLimit      = 30   // lines listed
	DefaultGrepFilesLimit = 100  // notes listed with files_only
	MaxGrepLimit          = 500
	// DefaultGrepBudget is how long a vault_grep call searches: past it, it
	// answers with what it found (complete: false).
	DefaultGrepBudget = 10 * time.Second
	// grepExcerpt is the most of a line an answer holds: a longer line is
	// cut around its first match.
	grepExcerpt = 200
)

// Sort orders of vault_grep.
const (
	grepSortPath     = "path"
	grepSortDate     = "date"
	grepSortDateDesc = "date_desc"
)

func grepDef() mcp.Tool {
	return mcp.NewTool(ToolGrep,
		mcp.WithDescription("Exact search, like rg: the lines holding a string or matching a regex, by note, with line numbers and heading paths. "+
			"For which notes mention X, when X first appeared (sort date), exact names and codes."),
		mcp.WithString("pattern", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(MaxGrepPattern), mcp.Description("Literal text, or with regex an RE2 expression; within one line.")),
		mcp.WithBoolean("regex", mcp.Description("Pattern is a regex (RE2: no lookaround).")),
		mcp.WithBoolean("case_sensitive", mcp.Description("Default false.")),
		mcp.WithString("path", mcp.Description(`Path prefix, e.g. "projects/".`)),
		mcp.WithString("glob", mcp.Description(`Path glob: * ? [ab] {a,b} **; without "/" matches the file name.`)),
		mcp.WithString("sort", mcp.Enum(grepSortPath, grepSortDate, grepSortDateDesc), mcp.Description("Default path; date: oldest first.")),
		mcp.WithInteger("limit", mcp.Min(1), mcp.Max(MaxGrepLimit),
			mcp.Description(fmt.Sprintf("Lines listed (default %d; files_only: notes, %d).", DefaultGrepLimit, DefaultGrepFilesLimit))),
		mcp.WithInteger("max_per_note", mcp.Min(1), mcp.Max(MaxGrepLimit), mcp.Description("Lines listed per note.")),
		mcp.WithBoolean("files_only", mcp.Description("Notes and counts only, like rg -c.")),
		mcp.WithSchemaAdditionalProperties(false),
		readOnly("Find exact text in the notes"),
	)
}

// GrepResult is vault_grep's answer.
type GrepResult struct {
	// Matches and Notes count the matching lines and the notes holding
	// them, over every note searched, listed or not.
	Matches int `json:"matches"`
	Notes   int `json:"notes"`
	// Searched is how many notes were searched: those in scope (path,
	// glob), or fewer when the search stopped (Complete false).
	Searched int `json:"searched"`
	// Complete is false when the search stopped before every note in scope
	// was searched (its time budget ran out): the counts and the list are
	// then of the notes searched.
	Complete bool `json:"complete"`
	// Truncated is true when not every match found is listed (limit,
	// max_per_note).
	Truncated bool `json:"truncated"`
	// Unreadable counts notes of the index that could not be read (removed
	// or changed into something that is not a note since the last build).
	Unreadable int `json:"unreadable,omitempty"`
	// Note says in words what was cut or left unsearched, and how to see more.
	Note    string     `json:"note,omitempty"`
	Results []GrepNote `json:"results"`
	// WaitedMS is how long the call waited for the vault's first index to
	// be built (Options.FirstIndexWait); absent when the index was there.
	WaitedMS int64 `json:"waited_for_first_index_ms,omitempty"`
}

// GrepNote is one note of vault_grep's answer, with its listed lines.
type GrepNote struct {
	Path string `json:"path"`
	// Date and DateSource are given when the notes are sorted by date.
	Date       string `json:"date,omitempty"`
	DateSource string `json:"date_source,omitempty"`
	// Matches is the note's number of matching lines, listed or not.
	Matches int        `json:"matches"`
	Lines   []GrepLine `json:"lines,omitempty"`
}

// GrepLine is one matching line.
type GrepLine struct {
	Line    int    `json:"line"`              // 1-based, in the file
	Heading string `json:"heading,omitempty"` // the headings the line is under, outermost first, joined by " › "
	Text    string `json:"text"`
}

// grepRequest is a vault_grep call's parameters, checked.
type grepRequest struct {
	m          *grepMatcher
	pattern    string
	regex      bool
	prefix     string
	glob       string
	globs      []string // glob with its braces expanded (checkGlob); nil without a glob
	sort       string
	limit      int
	maxPerNote int // 0: no bound
	filesOnly  bool
}

func (s *Server) grep(ctx context.Context, a args) (GrepResult, error) {
	r, err := grepArgs(a)
	if err != nil {
		return GrepResult{}, err
	}
	h, release, waited, err := s.acquireFirst(ctx)
	if err != nil {
		return GrepResult{}, err
	}
	defer release()
	rows, err := h.db.NoteDates(ctx, r.prefix)
	if err != nil {
		return GrepResult{}, err
	}
	notes := make([]grepNote, 0, len(rows))
	for _, n := range rows {
		if r.globs == nil || globsMatch(r.globs, n.Path) {
			notes = append(notes, grepNote{path: n.Path, date: n.Date, source: n.DateSource})
		}
	}
	sortGrepNotes(notes, r.sort)
	budget := s.opts.grepBudget
	if budget == 0 {
		budget = DefaultGrepBudget
	}
	out, err := runGrep(ctx, s.realVault, notes, r, time.Now().Add(budget))
	if err != nil {
		return GrepResult{}, err
	}
	out.WaitedMS = waited.Milliseconds()
	if !out.Complete {
		out.Note = strings.TrimSpace(fmt.Sprintf("The search stopped after %g s, having searched %d of %d notes: the counts and lines are of those; narrow it with path or glob. %s",
			budget.Seconds(), out.Searched, len(notes), out.Note))
	}
	if why := grepEmptyWhy(r, len(rows), len(notes), out.Matches); why != "" {
		out.Note = strings.TrimSpace(why + " " + out.Note)
	}
	return out, nil
}

// grepEmptyWhy says why a search that found nothing may have been asked
// wrongly, so that the model does not read "no match" as "the vault never
// says it": a path or glob that leaves no note in scope (inScope of the
// prefix's notes), or a literal pattern written as a regular expression.
func grepEmptyWhy(r grepRequest, underPrefix, inScope, matches int) string {
	switch {
	case underPrefix == 0 && r.prefix != "":
		return fmt.Sprintf("No note's path starts with %s: path is a folder prefix such as %q, case-sensitive.", vault.QuoteInput(r.prefix), "projects/")
	case inScope == 0 && r.glob != "":
		return fmt.Sprintf("The glob %s matches none of the %d notes in scope: it is matched against the whole vault-relative path (a glob without \"/\" against the file name); try \"**/\" before it.", vault.QuoteInput(r.glob), underPrefix)
	case matches == 0 && !r.regex && strings.ContainsAny(r.pattern, `|*+?()[]{}^$\`):
		return fmt.Sprintf("No line holds the literal text %s: the pattern is matched literally unless regex is true (then \"a|b\" matches either).", vault.QuoteInput(r.pattern))
	}
	return ""
}

func grepArgs(a args) (grepRequest, error) {
	var r grepRequest
	pattern, err := a.str("pattern")
	if err != nil {
		return r, err
	}
	if !a.present("pattern") || pattern == "" {
		return r, errors.New(`parameter "pattern" is required and may not be empty`)
	}
	if len(pattern) > MaxGrepPattern {
		return r, fmt.Errorf("parameter %q is %d bytes, over the %d a pattern may have (it starts %s)", "pattern", len(pattern), MaxGrepPattern, vault.QuoteInput(pattern))
	}
	if !utf8.ValidString(pattern) {
		return r, fmt.Errorf("parameter %q is not valid UTF-8", "pattern")
	}
	isRegex, err := a.boolean("regex")
	if err != nil {
		return r, err
	}
	caseSensitive, err := a.boolean("case_sensitive")
	if err != nil {
		return r, err
	}
	if r.m, err = newGrepMatcher(pattern, isRegex, caseSensitive); err != nil {
		return r, err
	}
	r.pattern, r.regex = pattern, isRegex
	if r.prefix, err = a.str("path"); err != nil {
		return r, err
	}
	if strings.Contains(r.prefix, "\x00") {
		return r, fmt.Errorf("parameter %q contains a NUL byte", "path")
	}
	if r.glob, err = a.str("glob"); err != nil {
		return r, err
	}
	if r.glob = strings.TrimPrefix(r.glob, "/"); r.glob != "" {
		if r.globs, err = checkGlob(r.glob); err != nil {
			return r, err
		}
	}
	if r.sort, err = a.str("sort"); err != nil {
		return r, err
	}
	switch r.sort {
	case "":
		r.sort = grepSortPath
	case grepSortPath, grepSortDate, grepSortDateDesc:
	default:
		return r, fmt.Errorf("parameter %q is %s: it takes %q, %q or %q", "sort", vault.QuoteInput(r.sort), grepSortPath, grepSortDate, grepSortDateDesc)
	}
	if r.filesOnly, err = a.boolean("files_only"); err != nil {
		return r, err
	}
	def := DefaultGrepLimit
	if r.filesOnly {
		def = DefaultGrepFilesLimit
	}
	if r.limit, err = a.integer("limit", 1, MaxGrepLimit, def); err != nil {
		return r, err
	}
	if r.maxPerNote, err = a.integer("max_per_note", 1, MaxGrepLimit, 0); err != nil {
		return r, err
	}
	return r, nil
}

// grepMatcher finds the matching lines of a note.
type grepMatcher struct {
	re *regexp.Regexp // matched against one line, without its line end
	// lit is a string every match contains (the pattern itself for a
	// literal one): a note without it is passed over, and only the lines
	// holding it are matched. Empty: every line is matched.
	lit []byte
	// fold: lit is lower-case ASCII, found whatever its case; foldKS: lit
	// holds a "k" or an "s", which case-insensitive matching also finds as
	// the Kelvin sign and the long s, so a note holding either is matched
	// line by line.
	fold, foldKS bool
	// exact: a line holds a match where and only where it holds lit.
	exact bool
}

func newGrepMatcher(pattern string, isRegex, caseSensitive bool) (*grepMatcher, error) {
	expr := pattern
	if !isRegex {
		if strings.ContainsAny(pattern, "\n\r") {
			return nil, errors.New(`parameter "pattern" holds a line end: vault_grep matches within one line`)
		}
		expr = regexp.QuoteMeta(pattern)
	}
	flags := syntax.Perl
	if !caseSensitive {
		flags |= syntax.FoldCase
	}
	parsed, err := syntax.Parse(expr, flags)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("parameter %q is not a regular expression (RE2 syntax): %s: %s", "pattern", se.Code, vault.QuoteInput(se.Expr))
		}
		return nil, fmt.Errorf("parameter %q is not a regular expression (RE2 syntax): %s", "pattern", vault.QuoteInput(err.Error()))
	}
	prefix := ""
	if !caseSensitive {
		prefix = "(?i)"
	}
	re, err := regexp.Compile(prefix + expr)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("parameter %q is not a usable regular expression: %s", "pattern", se.Code)
		}
		return nil, fmt.Errorf("parameter %q is not a usable regular expression", "pattern")
	}
	if re.MatchString("") {
		return nil, fmt.Errorf("parameter %q (%s) matches the empty string, so every line: give text it must contain", "pattern", vault.QuoteInput(pattern))
	}
	m := &grepMatcher{re: re}
	lit, fold := requiredLiteral(parsed.Simplify())
	switch {
	case lit == "" || strings.ContainsRune(lit, utf8.RuneError):
		// Nothing to look for first (or U+FFFD, which the regexp also
		// finds as an invalid byte).
	case !fold:
		m.lit = []byte(lit)
		m.exact = parsed.Op == syntax.OpLiteral && parsed.Flags&syntax.FoldCase == 0
	default:
		// Case-insensitive: look first for the longest run of ASCII, whose
		// letters fold only to ASCII letters and the two signs below.
		whole := isASCII(lit)
		if !whole {
			lit = longestASCIIRun(lit)
		}
		if len(lit) >= 2 || (whole && lit != "") {
			low := strings.ToLower(lit)
			m.lit, m.fold, m.foldKS = []byte(low), true, strings.ContainsAny(low, "ks")
			m.exact = whole && parsed.Op == syntax.OpLiteral && !m.foldKS
		}
	}
	return m, nil
}

// requiredLiteral is the longest literal string every match of re contains,
// and whether it is matched case-insensitively; "" when none is found.
func requiredLiteral(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, bestFold := "", false
		for _, sub := range re.Sub {
			if l, f := requiredLiteral(sub); len(l) > len(best) {
				best, bestFold = l, f
			}
		}
		return best, bestFold
	}
	return "", false
}

// longestASCIIRun is the longest run of ASCII characters in s.
func longestASCIIRun(s string) string {
	best, start := "", -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] < utf8.RuneSelf {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start > len(best) {
			best = s[start:i]
		}
		start = -1
	}
	return best
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// indexLit finds the matcher's literal in b.
func (m *grepMatcher) indexLit(b []byte) int {
	if m.fold {
		return indexFoldASCII(b, m.lit)
	}
	return bytes.Index(b, m.lit)
}

// indexFoldASCII finds lit, lower-case ASCII, in b, in any case of its
// ASCII letters.
func indexFoldASCII(b, lit []byte) int {
	n := len(lit)
	lo, up := lit[0], lit[0]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	nextLo, nextUp := -1, -1 // next position of each form of lit[0] at or after i; -1: not looked yet
	for i := 0; i+n <= len(b); {
		if nextLo < i {
			if j := bytes.IndexByte(b[i:len(b)-n+1], lo); j < 0 {
				nextLo = len(b)
			} else {
				nextLo = i + j
			}
		}
		if up == lo {
			nextUp = nextLo
		} else if nextUp < i {
			if j := bytes.IndexByte(b[i:len(b)-n+1], up); j < 0 {
				nextUp = len(b)
			} else {
				nextUp = i + j
			}
		}
		i = min(nextLo, nextUp)
		if i+n > len(b) {
			return -1
		}
		if equalFoldASCII(b[i+1:i+n], lit[1:]) {
			return i
		}
		i++
	}
	return -1
}

func equalFoldASCII(b, low []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != low[i] {
			return false
		}
	}
	return true
}

// The Kelvin sign and the long s, which Unicode folds to "k" and "s".
var kelvin, longS = []byte("\u212a"), []byte("\u017f")

// matchLine returns the first match in one line.
func (m *grepMatcher) matchLine(line []byte) (start, end int, ok bool) {
	if m.exact {
		if i := m.indexLit(line); i >= 0 {
			return i, i + len(m.lit), true
		}
		return 0, 0, false
	}
	loc := m.re.FindIndex(line)
	if loc == nil {
		return 0, 0, false
	}
	return loc[0], loc[1], true
}

// eachMatch calls f for each matching line of data in order, with its
// 1-based line number, its text (without "\r\n") and its first match, until
// f returns false. Lines end at "\n", as ripgrep's do.
func (m *grepMatcher) eachMatch(data []byte, f func(n int, line []byte, start, end int) bool) {
	lineNo, counted := 1, 0 // lineNo is the number of the line starting at counted
	visit := func(ls int) (next int, goOn bool) {
		le := bytes.IndexByte(data[ls:], '\n')
		next = len(data)
		if le >= 0 {
			le += ls
			next = le + 1
		} else {
			le = len(data)
		}
		line := bytes.TrimSuffix(data[ls:le], []byte("\r"))
		lineNo += bytes.Count(data[counted:ls], []byte("\n"))
		counted = ls
		if s, e, ok := m.matchLine(line); ok {
			return next, f(lineNo, line, s, e)
		}
		return next, true
	}
	if len(m.lit) == 0 || (m.foldKS && (bytes.Contains(data, kelvin) || bytes.Contains(data, longS))) {
		for ls := 0; ls < len(data); {
			var ok bool
			if ls, ok = visit(ls); !ok {
				return
			}
		}
		return
	}
	for pos := 0; pos < len(data); {
		i := m.indexLit(data[pos:])
		if i < 0 {
			return
		}
		ls := bytes.LastIndexByte(data[:pos+i], '\n') + 1
		var ok bool
		if pos, ok = visit(ls); !ok {
			return
		}
	}
}

// excerpt is a line as an answer gives it: valid UTF-8, and a line longer
// than grepExcerpt cut to about that around its match [s, e), an ellipsis
// marking each cut end.
func excerpt(line []byte, s, e int) string {
	if len(line) <= grepExcerpt {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	from, to := s, s+grepExcerpt
	if e-s < grepExcerpt {
		pad := (grepExcerpt - (e - s)) / 2
		from, to = s-pad, e+pad
		if from < 0 {
			to -= from
			from = 0
		}
		if to > len(line) {
			from -= to - len(line)
			to = len(line)
		}
	}
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	for to < len(line) && !utf8.RuneStart(line[to]) {
		to--
	}
	var b strings.Builder
	if from > 0 {
		b.WriteString("…")
	}
	b.WriteString(strings.ToValidUTF8(string(line[from:to]), "\uFFFD"))
	if to < len(line) {
		b.WriteString("…")
	}
	return b.String()
}

// maxGlobAlternatives bounds what a glob's braces expand to.
const maxGlobAlternatives = 256

// checkGlob refuses a malformed glob, quoting its start, and returns its
// alternatives (expandBraces), which globsMatch matches paths against.
func checkGlob(glob string) ([]string, error) {
	alts, err := expandBraces(glob)
	if err != nil {
		return nil, fmt.Errorf("parameter %q is %s, not a glob (%v)", "glob", vault.QuoteInput(glob), err)
	}
	for _, g := range alts {
		for _, seg := range strings.Split(g, "/") {
			if _, err := path.Match(seg, ""); err != nil {
				return nil, fmt.Errorf("parameter %q is %s, not a glob (%v)", "glob", vault.QuoteInput(glob), err)
			}
		}
	}
	return alts, nil
}

// expandBraces expands a glob's {a,b} alternatives, nested or in sequence,
// as a shell and ripgrep do: "*.{md,txt}" is "*.md" and "*.txt". A glob
// without braces is itself.
func expandBraces(glob string) ([]string, error) {
	open := strings.IndexByte(glob, '{')
	if open < 0 {
		if strings.IndexByte(glob, '}') >= 0 {
			return nil, errors.New(`a "}" without its "{"`)
		}
		return []string{glob}, nil
	}
	depth, close := 0, -1
	var commas []int
	for i := open; i < len(glob) && close < 0; i++ {
		switch glob[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				close = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if close < 0 {
		return nil, errors.New(`a "{" without its "}"`)
	}
	var out []string
	start := open + 1
	for _, end := range append(commas, close) {
		rest, err := expandBraces(glob[:open] + glob[start:end] + glob[close+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxGlobAlternatives {
			return nil, fmt.Errorf("its braces expand to more than %d globs", maxGlobAlternatives)
		}
		start = end + 1
	}
	return out, nil
}

// globMatch matches a vault-relative path against a glob: path.Match's
// syntax within a folder name, {a,b} alternatives, "**" for any number of
// folders; a glob without "/" is matched against the file name alone.
func globMatch(glob, p string) bool {
	alts, err := expandBraces(glob)
	return err == nil && globsMatch(alts, p)
}

// globsMatch matches a path against a glob's alternatives, expanded once
// per search rather than once per note.
func globsMatch(alts []string, p string) bool {
	for _, g := range alts {
		if !strings.Contains(g, "/") {
			if ok, _ := path.Match(g, path.Base(p)); ok {
				return true
			}
			continue
		}
		if matchSegs(strings.Split(g, "/"), strings.Split(p, "/")) {
			return true
		}
	}
	return false
}

func matchSegs(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for len(g) > 1 && g[1] == "**" {
				g = g[1:]
			}
			if len(g) == 1 {
				return true
			}
			for i := 0; i <= len(p); i++ {
				if matchSegs(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, _ := path.Match(g[0], p[0]); !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}

// grepNote is a note to search.
type grepNote struct {
	path, date, source string
}

// sortGrepNotes orders the notes for an answer: by path (as the index gives
// them), or by date, notes dated only by their file time after the others,
// ties by path.
func sortGrepNotes(notes []grepNote, order string) {
	if order == grepSortPath {
		return
	}
	desc := order == grepSortDateDesc
	slices.SortStableFunc(notes, func(a, b grepNote) int {
		if c := compareDates(vault.DateWritten(a.source), a.date, vault.DateWritten(b.source), b.date, desc); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
}

// noteHits is what the search found in one note.
type noteHits struct {
	searched, unreadable bool
	count                int
	lines                []GrepLine // the first of its matching lines, up to what was kept
}

// runGrep searches the notes (vault-relative paths under root, read as
// vault_read reads them: within the vault, regular files within the size
// bound, not binary) with a pool of workers, in the answer's order, until the deadline, and assembles the
// answer. Memory is bounded: a note's matching lines are counted, and only a
// bounded number of excerpts (grepExcerpt bytes each) is kept while
// searching; a listed note whose lines were not kept is read again.
func runGrep(ctx context.Context, root string, notes []grepNote, r grepRequest, deadline time.Time) (GrepResult, error) {
	rd, err := vault.OpenNoteReader(root)
	if err != nil {
		return GrepResult{}, err
	}
	defer rd.Close()
	perNote := r.limit
	if r.maxPerNote > 0 {
		perNote = min(perNote, r.maxPerNote)
	}
	if r.filesOnly {
		perNote = 0
	}
	hits := make([]noteHits, len(notes))
	var budget atomic.Int64 // excerpts that may still be kept
	budget.Store(int64(2 * r.limit))
	var next atomic.Int64
	var stopped atomic.Bool
	workers := min(max(2*runtime.GOMAXPROCS(0), 4), 16, max(len(notes), 1))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(notes) {
					return
				}
				if ctx.Err() != nil || time.Now().After(deadline) {
					stopped.Store(true)
					return
				}
				data, _, err := rd.Read(notes[i].path)
				if err != nil {
					hits[i] = noteHits{searched: true, unreadable: true}
					continue
				}
				keep := 0
				if perNote > 0 {
					if left := budget.Load(); left > 0 {
						keep = perNote
						budget.Add(-int64(keep))
					}
				}
				hits[i] = grepCollect(r.m, data, keep)
				if keep > 0 && len(hits[i].lines) < keep {
					budget.Add(int64(keep - len(hits[i].lines)))
				}
			}
		})
	}
	wg.Wait()

	out := GrepResult{Complete: !stopped.Load(), Results: []GrepNote{}}
	for _, h := range hits {
		if h.searched {
			out.Searched++
		}
		if h.unreadable {
			out.Unreadable++
		}
		if h.count > 0 {
			out.Matches += h.count
			out.Notes++
		}
	}
	listed := 0 // lines, or notes with files_only
	for i, h := range hits {
		if h.count == 0 {
			continue
		}
		if listed >= r.limit {
			out.Truncated = true
			break
		}
		n := GrepNote{Path: notes[i].path, Matches: h.count}
		if r.sort != grepSortPath {
			n.Date, n.DateSource = notes[i].date, notes[i].source
		}
		if r.filesOnly {
			listed++
			out.Results = append(out.Results, n)
			continue
		}
		want := min(h.count, perNote, r.limit-listed)
		if len(h.lines) < want && ctx.Err() == nil {
			// Its lines were not kept (the budget went to notes searched
			// meanwhile): read it again. Its count stays the first reading's.
			if data, _, err := rd.Read(notes[i].path); err == nil {
				if again := grepCollect(r.m, data, want); len(again.lines) > len(h.lines) {
					h.lines = again.lines
				}
			}
		}
		n.Lines = h.lines[:min(len(h.lines), want)]
		if len(n.Lines) < h.count {
			out.Truncated = true
		}
		if len(n.Lines) == 0 {
			continue
		}
		listed += len(n.Lines)
		out.Results = append(out.Results, n)
	}
	if out.Truncated {
		if r.filesOnly {
			out.Note = fmt.Sprintf("Listed %d of %d notes: raise limit (at most %d) or narrow with path or glob.", len(out.Results), out.Notes, MaxGrepLimit)
		} else {
			out.Note = fmt.Sprintf("Listed %d of %d matching lines: raise limit (at most %d), set max_per_note, narrow with path or glob, or use files_only to list every note.", listed, out.Matches, MaxGrepLimit)
		}
	}
	return out, nil
}

// grepCollect counts a note's matching lines and keeps the first keep of them,
// with their heading paths.
func grepCollect(m *grepMatcher, data []byte, keep int) noteHits {
	h := noteHits{searched: true}
	m.eachMatch(data, func(n int, line []byte, s, e int) bool {
		h.count++
		if len(h.lines) < keep {
			h.lines = append(h.lines, GrepLine{Line: n, Text: excerpt(line, s, e)})
		}
		return true
	})
	if len(h.lines) > 0 {
		headingPaths(data, h.lines)
	}
	return h
}

// headingPaths fills in the headings each line is under. The headings are
// the body's (vault.Outline: outside code fences, after the frontmatter);
// a frontmatter line is under none, and a heading's own line under those
// enclosing it.
func headingPaths(data []byte, lines []GrepLine) {
	body := vault.ParseNote("", data, time.Time{}).Body
	hs := vault.Outline(body)
	if len(hs) == 0 {
		return
	}
	// The body is the end of the file: the lines before it are the
	// frontmatter's (a lone "\r" line end, which the parse reads as a
	// line end and ripgrep does not, shifts this).
	before := bytes.Count(data, []byte("\n")) - strings.Count(body, "\n")
	for i := range lines {
		bl := lines[i].Line - before
		j := sort.Search(len(hs), func(k int) bool { return hs[k].Line > bl }) - 1
		if bl < 1 || j < 0 {
			continue
		}
		path := vault.HeadingPath(hs, j)
		if hs[j].Line == bl {
			path = path[:len(path)-1] // a heading's own line: the text says it
		}
		lines[i].Heading = strings.Join(path, vault.PathSeparator)
	}
}
