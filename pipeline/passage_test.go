package pipeline

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/stages"
)

// chunk is a stored chunk of note 1, written by hand: ord follows the id.
func chunk(id int64, heading string, part int, body string) index.ChunkRow {
	return index.ChunkRow{ID: id, NoteID: 1, Ord: int(id - 1), Part: part, Heading: heading, Body: body}
}

// passagesFor cuts chunks into units, scores them for the question (and
// the client's keywords and answer) with prefer as the ranked chunk, and
// chooses up to n passages of budget bytes.
func passagesFor(chunks []index.ChunkRow, req Request, prefer int64, detail Detail, budget, n int) []Passage {
	nu := splitNote(chunks)
	nu.scoreUnits(newQueryTerms(req), prefer)
	return nu.choosePassages(prefer, detail, budget, n)
}

func pathOf(p []string) string { return strings.Join(p, " › ") }

func TestPassageSentences(t *testing.T) {
	cases := []struct {
		name, line string
		want       []string
	}{
		{"period and space", "The pager rotates weekly. Handover is on Monday.", []string{"The pager rotates weekly.", "Handover is on Monday."}},
		{"question and exclamation", "Is it down? Yes! Restart it.", []string{"Is it down?", "Yes!", "Restart it."}},
		{"e.g. does not end a sentence", "Use a tool, e.g. Grep or Ripgrep, to look.", []string{"Use a tool, e.g. Grep or Ripgrep, to look."}},
		{"i.e. in parentheses", "Cap the retries (i.e. Three at most) always.", []string{"Cap the retries (i.e. Three at most) always."}},
		{"Dr. before a name", "Ask Dr. Smith first. Then call.", []string{"Ask Dr. Smith first.", "Then call."}},
		{"a single letter before a period", "Plan B. Then plan C.", []string{"Plan B. Then plan C."}},
		{"lower case after the period", "it stops. then it resumes", []string{"it stops. then it resumes"}},
		{"no space after the period", "See v1.2.Then more", []string{"See v1.2.Then more"}},
		{"a decimal number", "It takes 3.5 seconds. Then 4.", []string{"It takes 3.5 seconds.", "Then 4."}},
		{"a digit starts the next sentence", "Set it. 42 is the answer.", []string{"Set it.", "42 is the answer."}},
		{"a quote starts the next sentence", `Stop it. "Why?" he asked.`, []string{"Stop it.", `"Why?" he asked.`}},
		{"full-width stops", "第一句。第二句！第三句？", []string{"第一句。", "第二句！", "第三句？"}},
		{"full-width stop without a space after", "设置同步。然后登录", []string{"设置同步。", "然后登录"}},
		{"a list item stays whole", "- install the agent, then restart the service", []string{"- install the agent, then restart the service"}},
		{"a numbered list item stays whole", "1. Install the agent with apt", []string{"1. Install the agent with apt"}},
		{"a table row stays whole", "| retries | 3 | the default. |", []string{"| retries | 3 | the default. |"}},
		{"a trailing period alone", "One sentence.", []string{"One sentence."}},
		{"white space only", "   ", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sentences(c.line); !reflect.DeepEqual(got, c.want) {
				t.Errorf("sentences(%q) = %q, want %q", c.line, got, c.want)
			}
		})
	}
}

func TestPassageAbbreviation(t *testing.T) {
	for text, want := range map[string]bool{
		"use a tool, e.g": true,
		"(i.e":            true,
		"ask Dr":          true,
		"see fig":         true,
		"plan B":          true,
		"x":               true,
		"the end":         false,
		"a sentence":      false,
		"the Ω":           true, // one letter, however many bytes
		"":                false,
	} {
		if got := abbreviation(text); got != want {
			t.Errorf("abbreviation(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestPassageStem(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"limits", "limit"},
		{"limit", "limit"},
		{"configured", "configur"},
		{"configure", "configur"},
		{"queries", "query"},
		{"copied", "copy"},
		{"running", "runn"},
		{"indexes", "index"},
		{"timeouts", "timeout"},
		{"cat", "cat"},
		{"cats", "cat"}, // a plural meets its singular at any length
		{"notes", "not"},
		{"note", "not"},
		{"class", "class"},
		{"classes", "class"},
		{"bus", "bus"},
		{"", ""},
	} {
		if got := stem(c.in); got != c.want {
			t.Errorf("stem(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Inflections that must meet their base form.
	for _, p := range [][2]string{
		{"limits", "limit"}, {"configured", "configure"}, {"configures", "configure"}, {"configuring", "configure"},
		{"queries", "query"}, {"retries", "retry"}, {"copied", "copy"}, {"caching", "cache"}, {"indexes", "index"},
		{"notes", "note"}, {"rules", "rule"}, {"files", "file"}, {"names", "name"},
	} {
		if stem(p[0]) != stem(p[1]) {
			t.Errorf("stem(%q) = %q and stem(%q) = %q do not meet", p[0], stem(p[0]), p[1], stem(p[1]))
		}
	}
}

// unitView is a unit as these tests look at it: its text and heading path.
type unitView struct{ Text, Path string }

func units(nu noteUnits) []unitView {
	var out []unitView
	for _, u := range nu.units {
		out = append(out, unitView{u.text, pathOf(nu.sections[u.section])})
	}
	return out
}

func TestPassageSplitNoteHeadingPaths(t *testing.T) {
	cases := []struct {
		name   string
		chunks []index.ChunkRow
		want   []unitView
	}{
		{"a ## chunk holding ### then text, then the next ## chunk",
			[]index.ChunkRow{
				chunk(1, "A", 0, "Intro of A.\n\n### B\n\nInside it. Still here."),
				chunk(2, "C", 0, "In C."),
			},
			[]unitView{{"Intro of A.", "A"}, {"Inside it.", "A › B"}, {"Still here.", "A › B"}, {"In C.", "C"}}},
		{"a preamble with # lines encloses the ## chunks after it",
			[]index.ChunkRow{
				chunk(1, "", 0, "Before any heading.\n# X\nUnder X.\n# Y\nUnder Y."),
				chunk(2, "A", 0, "In A.\n#### Deep\nDeep text."),
			},
			[]unitView{{"Before any heading.", ""}, {"Under X.", "X"}, {"Under Y.", "Y"}, {"In A.", "Y › A"}, {"Deep text.", "Y › A › Deep"}}},
		{"a Part 2 chunk keeps its section",
			[]index.ChunkRow{
				chunk(1, "A", 1, "Part one text."),
				chunk(2, "A", 2, "Part two text."),
				chunk(3, "B", 0, "In B."),
			},
			[]unitView{{"Part one text.", "A"}, {"Part two text.", "A"}, {"In B.", "B"}}},
		{"a Part 2 chunk goes on in the subsection part 1 ended in",
			[]index.ChunkRow{
				chunk(1, "A", 1, "One.\n### Sub\nTwo."),
				chunk(2, "A", 2, "Three."),
			},
			[]unitView{{"One.", "A"}, {"Two.", "A › Sub"}, {"Three.", "A › Sub"}}},
		{"a # line inside a code fence is code, not a heading",
			[]index.ChunkRow{
				chunk(1, "Code", 0, "Run this:\n```sh\n# comment\n  make build\n```\nAfter the fence.\n~~~\n## not a heading either\n~~~\nLast."),
			},
			[]unitView{{"Run this:", "Code"}, {"```sh", "Code"}, {"# comment", "Code"}, {"  make build", "Code"}, {"```", "Code"},
				{"After the fence.", "Code"}, {"~~~", "Code"}, {"## not a heading either", "Code"}, {"~~~", "Code"}, {"Last.", "Code"}}},
		{"a fence left open in one chunk does not swallow the next",
			[]index.ChunkRow{
				chunk(1, "A", 0, "```\n# code"),
				chunk(2, "B", 0, "### Real heading\nText."),
			},
			[]unitView{{"```", "A"}, {"# code", "A"}, {"Text.", "B › Real heading"}}},
		{"headings are plain: links, emphasis and code ticks dropped",
			[]index.ChunkRow{
				chunk(1, "**Bold** heading", 0, "### [[target|Alias]] and `code`\nText."),
			},
			[]unitView{{"Text.", "Bold heading › Alias and code"}}},
		{"#tag is not a heading",
			[]index.ChunkRow{chunk(1, "A", 0, "#tag line\nText.")},
			[]unitView{{"#tag line", "A"}, {"Text.", "A"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := units(splitNote(c.chunks)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("units\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestPassageSplitNoteChunkSections(t *testing.T) {
	nu := splitNote([]index.ChunkRow{
		chunk(1, "", 0, "Preamble."),
		chunk(2, "A", 1, "One.\n### Sub\nTwo."),
		chunk(3, "A", 2, "Three."),
		chunk(4, "B", 0, "Four."),
	})
	for id, want := range map[int64]string{1: "", 2: "A", 3: "A › Sub", 4: "B"} {
		sec, ok := nu.chunkSec[id]
		if !ok {
			t.Errorf("chunk %d has no section", id)
			continue
		}
		if got := pathOf(nu.sections[sec]); got != want {
			t.Errorf("chunk %d starts in %q, want %q", id, got, want)
		}
	}
	// Units of one source line share it; the next line has another.
	nu = splitNote([]index.ChunkRow{chunk(1, "A", 0, "One. Two.\nThree.")})
	if l := []int{nu.units[0].line, nu.units[1].line, nu.units[2].line}; l[0] != l[1] || l[1] == l[2] {
		t.Errorf("lines %v: the two sentences of a line should share it, the next line not", l)
	}
}

// rotationNote is a note of three sections; the Rotation section holds the
// answer to "when does the handover happen".
var rotationNote = []index.ChunkRow{
	chunk(1, "", 0, "Notes about the team's on-call setup."),
	chunk(2, "Rotation", 0, "The pager rotation is weekly. Handover happens on Monday at ten. Everyone gets a calendar invite."),
	chunk(3, "Escalation", 0, "Escalate to the lead after thirty minutes. Page the database owner for storage alerts."),
}

func TestPassageHoldsBestSentence(t *testing.T) {
	q := Request{Text: "when does the handover happen"}
	const best = "Handover happens on Monday at ten."

	// Only the best sentence fits: the passage is it, and the section goes on.
	got := passagesFor(rotationNote, q, 2, DetailBrief, len(best)+5, 1)
	if len(got) != 1 || got[0].Text != best || pathOf(got[0].HeadingPath) != "Rotation" || !got[0].Cut {
		t.Errorf("a tight budget: %+v, want exactly %q under Rotation, cut", got, best)
	}
	// With room, it grows within its section and no further.
	got = passagesFor(rotationNote, q, 2, DetailPassage, PassageBytes, 2)
	want := "The pager rotation is weekly. Handover happens on Monday at ten. Everyone gets a calendar invite."
	if len(got) != 1 || got[0].Text != want || got[0].Cut {
		t.Errorf("a wide budget: %+v, want the whole Rotation section %q, not cut", got, want)
	}
	// The ranked chunk does not decide when another holds the answer.
	got = passagesFor(rotationNote, q, 3, DetailBrief, BriefBytes, 1)
	if len(got) != 1 || !strings.Contains(got[0].Text, best) || pathOf(got[0].HeadingPath) != "Rotation" {
		t.Errorf("ranked by Escalation: %+v, want the passage holding %q", got, best)
	}
	// The keywords alone find it too.
	got = passagesFor(rotationNote, Request{Text: "zzz", Keywords: "monday"}, 1, DetailBrief, BriefBytes, 1)
	if len(got) != 1 || !strings.Contains(got[0].Text, best) {
		t.Errorf("keywords only: %+v, want the passage holding %q", got, best)
	}
}

func TestPassageGrowsAfterThenBefore(t *testing.T) {
	note := []index.ChunkRow{chunk(1, "A", 0, "Aaaa one. Bbbb two. Target here. Cccc three. Dddd four.")}
	q := Request{Text: "target"}
	// Room for the target and one more: the following unit comes first.
	got := passagesFor(note, q, 1, DetailBrief, len("Target here. Cccc three."), 1)
	if len(got) != 1 || got[0].Text != "Target here. Cccc three." || !got[0].Cut {
		t.Errorf("got %+v, want the target and the unit after it", got)
	}
	// Room for three: one after, one before.
	got = passagesFor(note, q, 1, DetailBrief, len("Bbbb two. Target here. Cccc three."), 1)
	if len(got) != 1 || got[0].Text != "Bbbb two. Target here. Cccc three." {
		t.Errorf("got %+v, want one unit on each side of the target", got)
	}
}

func TestPassageSectionDetail(t *testing.T) {
	note := []index.ChunkRow{
		chunk(1, "Intro", 0, "Nothing here."),
		chunk(2, "Steps", 0, "First step. Second step.\n- third item\nThe answer is here."),
		chunk(3, "After", 0, "More answer text."),
	}
	got := passagesFor(note, Request{Text: "where is the answer"}, 2, DetailSection, SectionBytes, 1)
	want := "First step. Second step.\n- third item\nThe answer is here."
	if len(got) != 1 || got[0].Text != want || pathOf(got[0].HeadingPath) != "Steps" || got[0].Cut {
		t.Errorf("section detail: %+v, want the whole Steps section %q (sentences of a line joined by a space, lines by a newline)", got, want)
	}
	// A budget that holds only the start: the section's first units, cut.
	got = passagesFor(note, Request{Text: "where is the answer"}, 2, DetailSection, len("First step. Second step."), 1)
	if len(got) != 1 || got[0].Text != "First step. Second step." || !got[0].Cut {
		t.Errorf("a short section budget: %+v, want the section's start, cut", got)
	}
}

func TestPassageBudgetAndUTF8(t *testing.T) {
	note := []index.ChunkRow{
		chunk(1, "", 0, "Заметки о кэше. Кэш хранит ответы сервера."),
		chunk(2, "Кэш", 0, "Кэш сбрасывается каждые десять минут. Размер кэша — сто мегабайт! Ключ кэша — путь запроса.\n"+
			"- очистка кэша вручную: команда flush ✅\n"+strings.Repeat("Кэш без точек и без конца ", 30)),
		chunk(3, "设置", 0, "在设置中打开缓存功能。缓存每十分钟刷新一次。缓存大小为一百兆字节。"),
		chunk(4, "Emoji", 0, "🙂🙂🙂 кэш 🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂"),
	}
	for _, req := range []Request{{Text: "кэш"}, {Text: "缓存"}, {Text: "ничего"}} {
		for _, detail := range []Detail{DetailBrief, DetailPassage, DetailSection} {
			for budget := 3; budget <= 400; budget += 1 + budget/40 {
				for _, prefer := range []int64{1, 2, 3, 4} {
					ps := passagesFor(note, req, prefer, detail, budget, 2)
					if len(ps) == 0 && detail == DetailPassage && budget <= BriefBytes && req.Text == "ничего" {
						continue // a brief passage holding no word of the query is left out
					}
					if len(ps) == 0 {
						t.Fatalf("%q %s budget %d: no passage", req.Text, detail, budget)
					}
					for _, p := range ps {
						if len(p.Text) > budget || !utf8.ValidString(p.Text) || p.Text == "" {
							t.Fatalf("%q %s budget %d prefer %d: passage of %d bytes, valid UTF-8 %v: %q",
								req.Text, detail, budget, prefer, len(p.Text), utf8.ValidString(p.Text), p.Text)
						}
					}
				}
			}
		}
	}
}

func TestPassageCutUTF8(t *testing.T) {
	s := "ab кэш 设置 🙂🙂 end of the line"
	for n := 3; n < len(s); n++ {
		got := cutUTF8(s, n)
		if len(got) > n || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
			t.Errorf("cutUTF8(%q, %d) = %q (%d bytes)", s, n, got, len(got))
		}
		if body := strings.TrimSuffix(got, "…"); !strings.HasPrefix(s, body) {
			t.Errorf("cutUTF8(%q, %d) = %q: not a prefix of the text", s, n, got)
		}
	}
	// Back to the last space past the half-way mark.
	if got := cutUTF8("alpha beta gamma delta", 17); got != "alpha beta…" {
		t.Errorf("cutUTF8 at a word: %q, want %q", got, "alpha beta…")
	}
	// No space past half-way: cut inside the word.
	if got := cutUTF8("a verylongwordwithoutspaces", 12); got != "a verylon…" {
		t.Errorf("cutUTF8 inside a word: %q, want %q", got, "a verylon…")
	}
}

// cacheNote has two sections that match "cache eviction policy" equally,
// one of them twice, and a third that does not.
var cacheNote = []index.ChunkRow{
	chunk(1, "Memory", 0, "The cache eviction policy is LRU. Cache eviction runs every minute under the policy."),
	chunk(2, "Disk", 0, "On disk the cache eviction policy is FIFO."),
	chunk(3, "Other", 0, "Nothing relevant here."),
}

func TestPassageSecondFromAnotherSection(t *testing.T) {
	q := Request{Text: "cache eviction policy"}
	// Ranked by the unrelated chunk: no unit has the bonus, the three
	// matching units score alike.
	got := passagesFor(cacheNote, q, 3, DetailBrief, 60, 3)
	var heads []string
	for _, p := range got {
		heads = append(heads, pathOf(p.HeadingPath))
	}
	if !reflect.DeepEqual(heads, []string{"Memory", "Disk"}) {
		t.Fatalf("passages under %q, want Memory then Disk: one per section, none from the unmatched one (%+v)", heads, got)
	}
	if got[0].Text != "The cache eviction policy is LRU." || got[1].Text != "On disk the cache eviction policy is FIFO." {
		t.Errorf("passages %+v", got)
	}
	// One passage asked for: one given.
	if got := passagesFor(cacheNote, q, 3, DetailBrief, 60, 1); len(got) != 1 {
		t.Errorf("n 1 gave %d passages", len(got))
	}
	// Ranked by Memory: its units carry the bonus and Disk scores under 0.8
	// of them: no second passage.
	if got := passagesFor(cacheNote, q, 1, DetailBrief, 60, 2); len(got) != 1 || pathOf(got[0].HeadingPath) != "Memory" {
		t.Errorf("ranked by Memory: %+v, want one passage, under Memory", got)
	}
	// A note of one section never gives two passages, however many match.
	one := []index.ChunkRow{chunk(1, "Only", 0, "Cache eviction one.\nCache eviction two.\nCache eviction three.")}
	if got := passagesFor(one, Request{Text: "cache eviction"}, 1, DetailBrief, 20, 3); len(got) != 1 {
		t.Errorf("one section: %d passages %+v, want 1", len(got), got)
	}
}

func TestPassageNoMatchShowsRankedSectionStart(t *testing.T) {
	note := []index.ChunkRow{
		chunk(1, "", 0, "Intro line."),
		chunk(2, "B", 1, "First of B. Second of B."),
		chunk(3, "B", 2, "Third of B."),
		chunk(4, "C", 0, "First of C.\n### D\nFirst of D."),
	}
	cases := []struct {
		query     string
		prefer    int64
		path, pre string
	}{
		{"zebra", 1, "", "Intro line."},
		{"zebra", 2, "B", "First of B."},
		{"zebra", 3, "B", "First of B."}, // part 2: the start of its section, in part 1
		{"zebra", 4, "C", "First of C."},
		{"how is it", 4, "C", "First of C."}, // stopwords only: nothing to match
		{"zebra", 99, "", "Intro line."},     // a chunk the note does not hold: its start
	}
	for _, c := range cases {
		got := passagesFor(note, Request{Text: c.query}, c.prefer, DetailBrief, BriefBytes, 2)
		if len(got) != 1 || pathOf(got[0].HeadingPath) != c.path || !strings.HasPrefix(got[0].Text, c.pre) {
			t.Errorf("%q ranked by chunk %d: %+v, want one passage under %q starting %q", c.query, c.prefer, got, c.path, c.pre)
		}
	}
	if empty := splitNote(nil); empty.choosePassages(1, DetailPassage, PassageBytes, 2) != nil {
		t.Error("a note without text has passages")
	}
}

func TestPassageRankedChunkBreaksTie(t *testing.T) {
	note := []index.ChunkRow{
		chunk(1, "A", 0, "The retry budget is five attempts."),
		chunk(2, "B", 0, "The retry budget doubles at night."),
	}
	for prefer, want := range map[int64]string{1: "A", 2: "B"} {
		got := passagesFor(note, Request{Text: "retry budget"}, prefer, DetailPassage, PassageBytes, 1)
		if len(got) != 1 || pathOf(got[0].HeadingPath) != want {
			t.Errorf("ranked by chunk %d: %+v, want the passage under %s", prefer, got, want)
		}
	}
}

func TestPassageHeadingTermsCount(t *testing.T) {
	note := []index.ChunkRow{
		chunk(1, "Notes", 0, "The retry limit is ten."),
		chunk(2, "Budget", 0, "The retry limit is five."),
	}
	// Equal units; the second's heading holds a query term.
	got := passagesFor(note, Request{Text: "retry budget"}, 0, DetailBrief, BriefBytes, 1)
	if len(got) != 1 || pathOf(got[0].HeadingPath) != "Budget" {
		t.Errorf("%+v, want the passage under the heading that holds a query term", got)
	}
}

func TestPassageQueryTerms(t *testing.T) {
	q := newQueryTerms(Request{Text: "How do I rotate the keys?", Keywords: "rotation keys vault", Answer: "vault rotates secrets"})
	want := map[string]float64{
		stem("rotate"): 1, stem("keys"): 1, // question: 1, the keywords' repeat keeps the larger
		"rotation": 0.7, "vault": 0.7, // keywords: 0.7, over the answer's 0.4
		stem("secrets"): 0.4,
	}
	if !reflect.DeepEqual(q.weight, want) {
		t.Errorf("weights %v, want %v", q.weight, want)
	}
	if want := []questionTerm{{"rotate", stem("rotate")}, {"keys", stem("keys")}}; !reflect.DeepEqual(q.question, want) {
		t.Errorf("question terms %v, want %v (stopwords out, in order)", q.question, want)
	}
	if q := newQueryTerms(Request{Text: "keys and keys"}); len(q.question) != 1 {
		t.Errorf("a repeated word: question terms %v, want it once", q.question)
	}
}

func TestPassageMatchedTerms(t *testing.T) {
	nu := splitNote([]index.ChunkRow{chunk(1, "Schedule", 0, "Handovers are on Monday.")})
	q := newQueryTerms(Request{Text: "pager schedule handover budget"})
	nu.scoreUnits(q, 1)
	found, missing := matchedTerms(q, "Pager rotation", &nu)
	if !reflect.DeepEqual(found, []string{"pager", "schedule", "handover"}) || !reflect.DeepEqual(missing, []string{"budget"}) {
		t.Errorf("found %q missing %q: the title, the headings and the text count, in the question's order", found, missing)
	}
}

func TestPassageParseDetail(t *testing.T) {
	for in, want := range map[string]Detail{"": DetailPassage, "brief": DetailBrief, "passage": DetailPassage, "section": DetailSection} {
		if got, err := ParseDetail(in); err != nil || got != want {
			t.Errorf("ParseDetail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"full", "Brief", " passage"} {
		_, err := ParseDetail(in)
		if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "brief, passage or section") {
			t.Errorf("ParseDetail(%q): %v, want ErrBadQuery naming the choices", in, err)
		}
	}
}

func TestPassageBudgetByRank(t *testing.T) {
	cases := []struct {
		detail        Detail
		i             int
		budget, count int
	}{
		{DetailPassage, 0, PassageBytes, 2},
		{DetailPassage, 1, NextBytes, 1},
		{DetailPassage, PassageNotes - 1, NextBytes, 1},
		{DetailPassage, PassageNotes, BriefBytes, 1},
		{DetailPassage, 7, BriefBytes, 1},
		{DetailBrief, 0, BriefBytes, 1},
		{DetailBrief, 5, BriefBytes, 1},
		{DetailSection, 0, SectionBytes, 1},
		{DetailSection, 9, SectionBytes, 1},
	}
	for _, c := range cases {
		if b, n := passageBudget(c.detail, c.i); b != c.budget || n != c.count {
			t.Errorf("passageBudget(%s, %d) = %d, %d; want %d, %d", c.detail, c.i, b, n, c.budget, c.count)
		}
	}
}

// BenchmarkNotePassages is the passage selection's cost for one note of
// about 40,000 characters in 20 sections (a long real note, such as
// blue-book's linux_snippets.md): cutting it into units, scoring them for a
// question with keywords and an answer, and choosing the first note's
// passages. An answer does this for each of its notes.
func BenchmarkNotePassages(b *testing.B) {
	var chunks []index.ChunkRow
	words := strings.Fields("the container writes its logs to a json file that grows without bound unless the daemon rotates it " +
		"set max-size and max-file in daemon.json then restart the service so new containers pick up the options")
	for s := range 20 {
		var body strings.Builder
		for p := range 8 {
			fmt.Fprintf(&body, "### Part %d\n\n", p)
			for w := range 40 {
				body.WriteString(words[(s*7+p*3+w)%len(words)])
				if w%12 == 11 {
					body.WriteString(". ")
				} else {
					body.WriteString(" ")
				}
			}
			body.WriteString("\n\n")
		}
		chunks = append(chunks, index.ChunkRow{ID: int64(s + 1), NoteID: 1, Ord: s, Heading: fmt.Sprintf("Section %d", s), Body: body.String()})
	}
	size := 0
	for _, c := range chunks {
		size += len(c.Body)
	}
	q := newQueryTerms(Request{Text: "container logs keep eating my disk, how can I cap their size",
		Keywords: "docker log rotation max-size max-file daemon.json", Answer: "Set max-size and max-file for the json-file log driver in daemon.json."})
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		nu := splitNote(chunks)
		nu.scoreUnits(q, 7)
		if ps := nu.choosePassages(7, DetailPassage, PassageBytes, 2); len(ps) == 0 {
			b.Fatal("no passage")
		}
	}
}

// TestTextTerms: the ASCII fast path gives stages.Terms' terms.
func TestTextTerms(t *testing.T) {
	long := strings.Repeat("word ", 300)
	for _, text := range []string{"", "Set max-size=10m in /etc/docker/daemon.json", "FERR-4102 lease_ttl_ms v2.15.2", long, "naïve café 日本語 mixed", "ABC def"} {
		if got, want := textTerms(text), stages.Terms(text); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("textTerms(%.40q) = %q, want %q", text, got, want)
		}
	}
}

func TestPassageChoices(t *testing.T) {
	note := []index.ChunkRow{
		chunk(1, "Install", 0, "Some intro about the tool and its history that is long enough to matter here.\nTo install the widget, run:\n- widget fetch\n- widget setup --all"),
		chunk(2, "Other", 0, "Unrelated words only."),
	}
	// A unit ending in ":" takes what follows it first.
	got := passagesFor(note, Request{Text: "install widget"}, 1, DetailPassage, 70, 1)
	if len(got) != 1 || !strings.HasPrefix(got[0].Text, "To install the widget, run:\n- widget fetch") {
		t.Errorf("a unit ending in a colon: %+v, want it and the list after it", got)
	}
	// A brief passage holding no word of the query is left out; one that
	// holds one is shown.
	if got := passagesFor(note, Request{Text: "zebra"}, 2, DetailPassage, BriefBytes, 1); len(got) != 0 {
		t.Errorf("a brief passage without a query word: %+v", got)
	}
	if got := passagesFor(note, Request{Text: "widget"}, 1, DetailPassage, BriefBytes, 1); len(got) != 1 {
		t.Errorf("a brief passage with a query word: %+v", got)
	}
	// A cut ends at a clause where it can.
	if got := cutUTF8("First clause here, second clause goes on and on without end", 40); got != "First clause here,…" {
		t.Errorf("cutUTF8 at a clause: %q", got)
	}
}

func TestMissingWord(t *testing.T) {
	for w, want := range map[string]bool{"vacuum": true, "db": false, "缓存": false, "キャッシュ": false, "кэш": true} {
		if got := missingWord(w); got != want {
			t.Errorf("missingWord(%q) = %v, want %v", w, got, want)
		}
	}
}
