package pipeline

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/stages"
)

// Detail is how much of each found note an answer shows.
type Detail string

// The details a caller may ask for. DetailPassage is the default, the one
// answer@1 and the answer's bytes measure (docs/evaluation.md says how its
// budgets were chosen).
const (
	// DetailBrief: one passage per note of at most BriefBytes, the best
	// sentence and what fits around it.
	DetailBrief Detail = "brief"
	// DetailPassage: the first note's best passage of at most PassageBytes,
	// and a second from another section when it matches as well; the best
	// passage of each note up to PassageNotes, at most NextBytes; the notes
	// after them brief.
	DetailPassage Detail = "passage"
	// DetailSection: the whole section the best passage sits in, at most
	// SectionBytes, for every note.
	DetailSection Detail = "section"
)

// DefaultK is how many notes an answer holds unless the caller says: the
// first PassageNotes with their passages, the rest brief.
const DefaultK = 8

// Passage budgets, in bytes of text.
const (
	BriefBytes   = 120
	PassageBytes = 700
	NextBytes    = 400
	SectionBytes = 4000
	// PassageNotes is how many notes DetailPassage shows in full.
	PassageNotes = 3
)

// passageBudget is how many passages note i (from 0) of an answer shows
// at detail, and the bytes each may take.
func passageBudget(detail Detail, i int) (budget, count int) {
	switch {
	case detail == DetailSection:
		return SectionBytes, 1
	case detail == DetailPassage && i == 0:
		return PassageBytes, 2
	case detail == DetailPassage && i < PassageNotes:
		return NextBytes, 1
	}
	return BriefBytes, 1
}

// ParseDetail reads a caller's detail; "" is DetailPassage.
func ParseDetail(s string) (Detail, error) {
	switch Detail(s) {
	case "":
		return DetailPassage, nil
	case DetailBrief, DetailPassage, DetailSection:
		return Detail(s), nil
	}
	return "", fmt.Errorf("%w: detail %s is not %s, %s or %s", ErrBadQuery, vault.QuoteInput(s), DetailBrief, DetailPassage, DetailSection)
}

// Passage is a part of a found note: whole sentences or lines around the
// ones that best match the query, under the heading path where they sit.
type Passage struct {
	HeadingPath []string // plain headings, outermost first; empty before the first heading
	Text        string
	Cut         bool // the section goes on past Text
}

// unit is one sentence, list item, table row or code line of a note.
type unit struct {
	chunk   int64 // the chunk it is part of
	text    string
	line    int // index of the source line in the note's units: units of one line join with a space
	section int // index into sections
	score   float64
	terms   []string
}

// noteUnits is a note cut into units, with its sections' heading paths.
type noteUnits struct {
	units    []unit
	sections [][]string
	chunkSec map[int64]int // the section a chunk starts in
}

// splitNote cuts a note's chunks (in order) into units. A section is the
// text under one heading of any level; the heading path carries every
// enclosing heading, across chunks ("## " headings start chunks; "#" and
// "###".. lines sit inside their bodies).
func splitNote(chunks []index.ChunkRow) noteUnits {
	var nu noteUnits
	nu.chunkSec = map[int64]int{}
	var stack []vault.Heading // enclosing headings, levels increasing
	push := func(level int, text string) {
		for len(stack) > 0 && stack[len(stack)-1].Level >= level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, vault.Heading{Level: level, Plain: vault.PlainHeading(text)})
		path := make([]string, len(stack))
		for i, h := range stack {
			path[i] = h.Plain
		}
		nu.sections = append(nu.sections, path)
	}
	nu.sections = append(nu.sections, nil)
	line := 0
	for _, c := range chunks {
		if c.Heading != "" && c.Part <= 1 {
			push(2, c.Heading)
		}
		nu.chunkSec[c.ID] = len(nu.sections) - 1
		var fence vault.Fence
		for _, l := range strings.Split(c.Body, "\n") {
			inCode := fence.Update(l)
			t := strings.TrimSpace(l)
			if t == "" {
				continue
			}
			if !inCode {
				if level, text, ok := vault.ATXHeading(t); ok {
					push(level, text)
					continue
				}
			}
			line++
			sec := len(nu.sections) - 1
			if inCode {
				nu.units = append(nu.units, unit{chunk: c.ID, text: l, line: line, section: sec})
				continue
			}
			for _, s := range sentences(t) {
				nu.units = append(nu.units, unit{chunk: c.ID, text: s, line: line, section: sec})
			}
		}
	}
	return nu
}

// sentences splits one line of prose after sentence-ending punctuation
// followed by a space (". ", "? ", "! ") or after a full-width stop
// ("。", "？", "！"). A list item or table row is one line, so one unit
// unless it holds several sentences.
func sentences(line string) []string {
	var out []string
	start := 0
	for i, r := range line {
		end := -1
		switch r {
		case '。', '？', '！':
			end = i + utf8.RuneLen(r)
		case '.', '?', '!':
			if j := i + 1; j < len(line) && line[j] == ' ' && j+1 < len(line) && !abbreviation(line[start:i]) {
				next, _ := utf8.DecodeRuneInString(line[j+1:])
				if unicode.IsUpper(next) || unicode.IsDigit(next) || strings.ContainsRune("\"'([`*", next) {
					end = j
				}
			}
		}
		if end > start {
			if s := strings.TrimSpace(line[start:end]); s != "" {
				out = append(out, s)
			}
			start = end
		}
	}
	if s := strings.TrimSpace(line[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// abbreviation reports whether text ends in a word that a period does not
// end a sentence after ("e.g", "Dr", a single letter).
func abbreviation(text string) bool {
	i := strings.LastIndexAny(text, " (")
	w := strings.ToLower(text[i+1:])
	switch w {
	case "e.g", "i.e", "etc", "vs", "dr", "mr", "mrs", "ms", "no", "fig", "cf":
		return true
	}
	return utf8.RuneCountInString(w) == 1
}

// queryTerms are the words a passage is chosen by, each with its weight:
// the question's words count most, the caller's keywords less, its
// hypothetical answer least; stopwords count for nothing. A term's weight
// is then divided by how common it is in the note (idf within the note).
type queryTerms struct {
	weight   map[string]float64
	question []questionTerm // the question's own terms, stopwords out, in order, each once
}

type questionTerm struct{ word, stem string }

func newQueryTerms(req Request) queryTerms {
	q := queryTerms{weight: map[string]float64{}}
	add := func(text string, w float64, question bool) {
		for _, t := range stages.Terms(text) {
			if stages.IsStopword(stages.StopwordsNLTK, t) {
				continue
			}
			word := t
			t = stem(t)
			if _, ok := q.weight[t]; !ok && question {
				q.question = append(q.question, questionTerm{word, t})
			}
			q.weight[t] = max(q.weight[t], w)
		}
	}
	add(req.Text, 1, true)
	add(req.Keywords, 0.7, false)
	add(req.Answer, 0.4, false)
	return q
}

// stem folds the commonest English inflections, so "limits" meets "limit",
// "notes" meets "note" and "configured" meets "configure": a plural "s"
// (not of "ss"; "ies" and "ied" are "y"), then, on words of five letters or more,
// "ing" and "ed", then a final "e".
func stem(t string) string {
	switch {
	case (strings.HasSuffix(t, "ies") || strings.HasSuffix(t, "ied")) && len(t) > 4:
		t = t[:len(t)-3] + "y"
	case strings.HasSuffix(t, "ss"):
	case strings.HasSuffix(t, "s") && len(t) > 3:
		t = t[:len(t)-1]
	}
	if len(t) >= 5 {
		for _, suf := range []string{"ing", "ed"} {
			if strings.HasSuffix(t, suf) && len(t)-len(suf) >= 3 {
				t = strings.TrimSuffix(t, suf)
				break
			}
		}
	}
	if len(t) > 3 {
		t = strings.TrimSuffix(t, "e")
	}
	return t
}

// scoreUnits gives each unit the weights of the query terms it holds,
// divided by the log of how many of the note's units hold each, plus a
// third of that for the terms of its heading path, plus preferBonus when it
// is part of the chunk the search ranked the note by (prefer) and holds a
// term: the retrievers' choice of chunk breaks ties between sections.
func (nu *noteUnits) scoreUnits(q queryTerms, prefer int64) {
	df := map[string]int{}
	for i := range nu.units {
		u := &nu.units[i]
		seen := map[string]bool{}
		for _, t := range textTerms(u.text) {
			t = stem(t)
			if _, ok := q.weight[t]; ok && !seen[t] {
				seen[t] = true
				u.terms = append(u.terms, t)
				df[t]++
			}
		}
	}
	secScore := make([]float64, len(nu.sections))
	for i, path := range nu.sections {
		seen := map[string]bool{}
		for _, t := range stages.Terms(strings.Join(path, " ")) {
			t = stem(t)
			if w, ok := q.weight[t]; ok && !seen[t] {
				seen[t] = true
				secScore[i] += w / 3
			}
		}
	}
	for i := range nu.units {
		u := &nu.units[i]
		for _, t := range u.terms {
			u.score += q.weight[t] / (1 + math.Log(float64(df[t])))
		}
		u.score += secScore[u.section]
		if u.chunk == prefer && u.score > 0 {
			u.score += preferBonus
		}
	}
}

// preferBonus is what being in the ranked chunk adds to a unit's score: a
// question word's weight (measured against 0, 0.25, 0.6, 2 and 5 by
// answer@1, docs/evaluation.md).
const preferBonus = 1

// textTerms are stages.Terms of a note's text, without its look for Han,
// Kana and Hangul runs when the text is ASCII: most units are, and that
// look is most of the cost (BenchmarkNotePassages).
func textTerms(text string) []string {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return stages.Terms(text)
		}
	}
	out := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	})
	return out[:min(len(out), stages.MaxQueryTerms)]
}

// choosePassages picks up to max passages of at most budget bytes each: the
// best unit and its neighbours within its section, then the best unit of
// another section that scores at least 0.8 of the first. With no unit
// matching, the passage is the start of the section of the chunk the
// search ranked (prefer). Under DetailSection a passage is the whole
// section, cut at budget.
func (nu *noteUnits) choosePassages(prefer int64, detail Detail, budget, n int) []Passage {
	if len(nu.units) == 0 {
		return nil
	}
	order := make([]int, len(nu.units))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return nu.units[order[a]].score > nu.units[order[b]].score })
	best := order[0]
	// A brief passage is shown only when it holds a word of the query: one
	// that only stands in for the note (its first lines, a heading's words)
	// costs the reader its bytes and tells nothing the path and title do not.
	if budget <= BriefBytes && detail == DetailPassage && len(nu.units[best].terms) == 0 {
		return nil
	}
	if nu.units[best].score == 0 {
		best = -1
		sec, ok := nu.chunkSec[prefer]
		for i, u := range nu.units {
			if !ok || u.section >= sec {
				best = i
				break
			}
		}
		if best < 0 {
			best = 0
		}
		return []Passage{nu.window(best, detail, budget)}
	}
	out := []Passage{nu.window(best, detail, budget)}
	used := map[int]bool{nu.units[best].section: true}
	for _, i := range order[1:] {
		if len(out) >= n || nu.units[i].score < 0.8*nu.units[best].score {
			break
		}
		if used[nu.units[i].section] {
			continue
		}
		used[nu.units[i].section] = true
		out = append(out, nu.window(i, detail, budget))
	}
	return out
}

// window grows a passage around unit i within its section: the following
// unit, then the preceding one, in turn, while they fit in budget. Under
// DetailSection it starts at the section's first unit.
func (nu *noteUnits) window(i int, detail Detail, budget int) Passage {
	sec := nu.units[i].section
	lo, hi := i, i
	if detail == DetailSection {
		for lo > 0 && nu.units[lo-1].section == sec {
			lo--
		}
		hi = lo
	}
	size := len(nu.units[lo].text)
	fits := func(j int) bool {
		return j >= 0 && j < len(nu.units) && nu.units[j].section == sec && size+1+len(nu.units[j].text) <= budget
	}
	// A unit that ends in ":" introduces what follows it (a list, a
	// command, the steps): the passage takes that before anything earlier.
	if strings.HasSuffix(nu.units[i].text, ":") {
		for fits(hi + 1) {
			hi++
			size += 1 + len(nu.units[hi].text)
		}
	}
	for {
		grew := false
		if fits(hi + 1) {
			hi++
			size += 1 + len(nu.units[hi].text)
			grew = true
		}
		if detail != DetailSection && fits(lo-1) {
			lo--
			size += 1 + len(nu.units[lo].text)
			grew = true
		}
		if !grew {
			break
		}
	}
	var b strings.Builder
	for j := lo; j <= hi; j++ {
		if j > lo {
			if nu.units[j].line == nu.units[j-1].line {
				b.WriteByte(' ')
			} else {
				b.WriteByte('\n')
			}
		}
		b.WriteString(nu.units[j].text)
	}
	text := b.String()
	cut := hi+1 < len(nu.units) && nu.units[hi+1].section == sec
	if len(text) > budget {
		text, cut = cutUTF8(text, budget), true
	}
	return Passage{HeadingPath: nu.sections[sec], Text: text, Cut: cut}
}

// cutUTF8 cuts s to at most n bytes on a rune boundary, then back to the
// end of the last sentence or clause (". ", "; ", ", ", ": ", a line's end,
// "。", "，") past a third of it, else the last space past the half-way
// mark, with an ellipsis.
func cutUTF8(s string, n int) string {
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	cut := s[:n]
	end := -1
	for _, p := range []string{". ", "; ", ": ", ", ", "\n", "。", "；", "，"} {
		if i := strings.LastIndex(cut+" ", p); i >= 0 {
			if e := i + len(strings.TrimRight(p, " \n")); e > end {
				end = e
			}
		}
	}
	if end > n/3 {
		return strings.TrimRight(cut[:end], " \n") + "…"
	}
	if i := strings.LastIndexAny(cut, " \n"); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// missingWord reports whether a question term the note lacks is worth
// saying so: a word of three letters or more, not a piece of Han, Kana or
// Hangul text, which the tokenizer cuts into overlapping pairs that are no
// words of the question.
func missingWord(w string) bool {
	if utf8.RuneCountInString(w) < 3 {
		return false
	}
	for _, r := range w {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return false
		}
	}
	return true
}

// matchedTerms are the question's terms the note holds (title included)
// and those it lacks (missingWord).
func matchedTerms(q queryTerms, title string, nu *noteUnits) (found, missing []string) {
	has := map[string]bool{}
	for _, t := range stages.Terms(title) {
		has[stem(t)] = true
	}
	for _, p := range nu.sections {
		for _, t := range stages.Terms(strings.Join(p, " ")) {
			has[stem(t)] = true
		}
	}
	for _, u := range nu.units {
		for _, t := range u.terms {
			has[t] = true
		}
	}
	for _, t := range q.question {
		switch {
		case has[t.stem]:
			found = append(found, t.word)
		case missingWord(t.word):
			missing = append(missing, t.word)
		}
	}
	return found, missing
}
