package vault

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func words(s string) int { return len(strings.Fields(s)) }

func TestChunkNoteSections(t *testing.T) {
	tests := []struct {
		name  string
		title string
		body  string
		want  []Chunk
	}{
		{
			name:  "preamble, sections, ### and fenced ## stay inside",
			title: "T",
			body:  "# T\nintro line\n\n## A\na text\n### A.1\nsub text\n## B\n```md\n## not a heading\n```\n~~~\n## nor this\n~~~\nb text\n",
			want: []Chunk{
				{Ord: 0, Heading: "", Body: "intro line"},
				{Ord: 1, Heading: "A", Body: "a text\n### A.1\nsub text"},
				{Ord: 2, Heading: "B", Body: "```md\n## not a heading\n```\n~~~\n## nor this\n~~~\nb text"},
			},
		},
		{
			name:  "no preamble",
			title: "T",
			body:  "## Only\nx\n",
			want:  []Chunk{{Ord: 0, Heading: "Only", Body: "x"}},
		},
		{
			name:  "title line alone is not a preamble",
			title: "T",
			body:  "# T\n\n## S\ns\n",
			want:  []Chunk{{Ord: 0, Heading: "S", Body: "s"}},
		},
		{
			name:  "only a title",
			title: "Lonely",
			body:  "# Lonely\n",
			want:  []Chunk{{}},
		},
		{
			name:  "empty body",
			title: "file-name",
			body:  "",
			want:  []Chunk{{}},
		},
		{
			name:  "a # line that is not the title stays",
			title: "T",
			body:  "# T\n# Another\ntext\n",
			want:  []Chunk{{Heading: "", Body: "# Another\ntext"}},
		},
		{
			name:  "a title line after the first section is body text",
			title: "T",
			body:  "## S\n# T\n",
			want:  []Chunk{{Heading: "S", Body: "# T"}},
		},
		{
			name:  "section without a body",
			title: "T",
			body:  "## Empty\n## Full\ntext\n",
			want:  []Chunk{{Ord: 0, Heading: "Empty"}, {Ord: 1, Heading: "Full", Body: "text"}},
		},
		{
			name:  "##text without a space is not a heading",
			title: "T",
			body:  "##nospace\n## Real  \nbody\n",
			want:  []Chunk{{Ord: 0, Body: "##nospace"}, {Ord: 1, Heading: "Real", Body: "body"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ChunkNote(tc.title, tc.body, words, MaxTokens)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ChunkNote =\n%#v\nwant\n%#v", got, tc.want)
			}
			// Without a counter nothing is split either.
			if plain := ChunkNote(tc.title, tc.body, nil, MaxTokens); !reflect.DeepEqual(plain, tc.want) {
				t.Errorf("ChunkNote(count=nil) = %#v, want %#v", plain, tc.want)
			}
		})
	}
}

func TestEmbedText(t *testing.T) {
	tests := []struct {
		title string
		c     Chunk
		want  string
	}{
		{"Title", Chunk{Heading: "Heading", Body: "body"}, "Title\nHeading\nbody"},
		{"Title", Chunk{Body: "preamble"}, "Title\npreamble"},
		{"Title", Chunk{Heading: "H"}, "Title\nH"},
		{"Title", Chunk{}, "Title"},
	}
	for _, tc := range tests {
		if got := EmbedText(tc.title, tc.c); got != tc.want {
			t.Errorf("EmbedText(%q, %+v) = %q, want %q", tc.title, tc.c, got, tc.want)
		}
	}
}

// paragraphs returns n paragraphs of k distinct words each.
func paragraphs(prefix string, n, k int) string {
	var ps []string
	for i := range n {
		var ws []string
		for j := range k {
			ws = append(ws, fmt.Sprintf("%s%d_%d", prefix, i, j))
		}
		ps = append(ps, strings.Join(ws, " "))
	}
	return strings.Join(ps, "\n\n")
}

// charTokens counts one token per started 4 bytes of each word, like a
// subword tokenizer on a pasted blob.
func charTokens(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		n += (len(w) + 3) / 4
	}
	return n
}

func TestChunkNoteSplitsLongSections(t *testing.T) {
	const title = "Big Note Title" // 3 words
	huge := make([]string, 500)
	for i := range huge {
		huge[i] = fmt.Sprintf("w%d", i)
	}
	blob := strings.Repeat("z", 400) // 100 tokens by charTokens
	tests := []struct {
		name      string
		body      string
		count     TokenCounter
		max       int
		heading   string // of the split section
		minParts  int
		truncated []bool // per part; nil means none truncated
	}{
		{
			name:     "paragraphs",
			body:     "# Big Note Title\nshort intro\n\n## Long Section\n" + paragraphs("p", 12, 10) + "\n## After\nend\n",
			count:    words,
			max:      50,
			heading:  "Long Section",
			minParts: 3,
		},
		{
			name:     "one paragraph of many lines",
			body:     "## Lines\n" + strings.ReplaceAll(paragraphs("l", 30, 7), "\n\n", "\n"),
			count:    words,
			max:      40,
			heading:  "Lines",
			minParts: 5,
		},
		{
			name:     "a single huge line is split on words",
			body:     "## Huge\n" + strings.Join(huge, " "),
			count:    words,
			max:      60,
			heading:  "Huge",
			minParts: 9,
		},
		{
			name:      "a single over-long word is kept whole and marked truncated",
			body:      "## Blob\nsome words before\n\n" + blob + "\n\nwords after",
			count:     charTokens,
			max:       40,
			heading:   "Blob",
			minParts:  3,
			truncated: []bool{false, true, false},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chunks := ChunkNote(title, tc.body, tc.count, tc.max)
			var parts []Chunk
			for i, c := range chunks {
				if c.Ord != i {
					t.Errorf("chunk %d has Ord %d", i, c.Ord)
				}
				if c.Heading == tc.heading {
					parts = append(parts, c)
				} else if c.Part != 0 {
					t.Errorf("chunk %q that fits has Part %d, want 0", c.Heading, c.Part)
				}
			}
			if len(parts) < tc.minParts {
				t.Fatalf("%d parts of %q, want at least %d: %#v", len(parts), tc.heading, tc.minParts, chunks)
			}
			for i, p := range parts {
				if p.Part != i+1 {
					t.Errorf("part %d has Part %d, want %d", i, p.Part, i+1)
				}
				if i > 0 && p.Ord != parts[i-1].Ord+1 {
					t.Errorf("parts are not consecutive chunks: Ord %d after %d", p.Ord, parts[i-1].Ord)
				}
				want := false
				if tc.truncated != nil {
					want = tc.truncated[i]
				}
				if p.Truncated != want {
					t.Errorf("part %d Truncated = %v, want %v", i+1, p.Truncated, want)
				}
				n := tc.count(EmbedText(title, p))
				if !p.Truncated && n > tc.max {
					t.Errorf("part %d: EmbedText has %d tokens, over the budget %d", i+1, n, tc.max)
				}
				if p.Truncated && n <= tc.max {
					t.Errorf("part %d is marked Truncated but fits (%d tokens)", i+1, n)
				}
				if !strings.HasPrefix(EmbedText(title, p), title+"\n"+tc.heading+"\n") {
					t.Errorf("part %d EmbedText does not start with the title and heading: %q", i+1, EmbedText(title, p))
				}
			}
			// Nothing is lost or reordered: the parts' words are the section's words.
			var got []string
			for _, p := range parts {
				got = append(got, strings.Fields(p.Body)...)
			}
			section := tc.body[strings.Index(tc.body, "## "+tc.heading):]
			section = strings.TrimPrefix(section, "## "+tc.heading+"\n")
			if i := strings.Index(section, "\n## "); i >= 0 {
				section = section[:i]
			}
			if want := strings.Fields(section); !reflect.DeepEqual(got, want) {
				t.Errorf("parts hold %d words, the section %d (or in another order)", len(got), len(want))
			}
		})
	}
}

func TestChunkNoteHeadingFillsWindow(t *testing.T) {
	heading := strings.Repeat("h ", 40)
	chunks := ChunkNote("T", "## "+heading+"\n"+paragraphs("x", 5, 10), words, 50)
	if len(chunks) != 1 {
		t.Fatalf("got %d chunks, want 1 truncated chunk: %#v", len(chunks), chunks)
	}
	if !chunks[0].Truncated || chunks[0].Part != 0 {
		t.Errorf("chunk = %+v, want Truncated with Part 0", chunks[0])
	}
}

func TestChunkNoteFitsExactly(t *testing.T) {
	// Title (1) + heading (1) + 48 words = 50 = the budget: one chunk, unsplit.
	body := "## H\n" + paragraphs("w", 1, 48)
	chunks := ChunkNote("T", body, words, 50)
	if len(chunks) != 1 || chunks[0].Part != 0 || chunks[0].Truncated {
		t.Errorf("chunks = %#v, want one whole chunk", chunks)
	}
	chunks = ChunkNote("T", body+" one-more", words, 50)
	if len(chunks) < 2 {
		t.Errorf("one word over the budget: %d chunks, want a split", len(chunks))
	}
}

// TestChunkNoteMax: a note that would make more chunks than the limit keeps
// its first ones, and the cut says where it fell and how much was left out;
// one at the limit is whole, and a limit of 0 is none.
func TestChunkNoteMax(t *testing.T) {
	sections := "# T\n\nintro\n\n## A\na\n## B\nb\n## C\nc\n"
	long := "## Long\n" + paragraphs("w", 8, 10) // 8 paragraphs of 10 words: several parts at 30 tokens
	for _, tc := range []struct {
		name     string
		body     string
		max, cap int // cap: the tokens a chunk fits
		heads    []string
		cut      *Cut
		reason   string
	}{
		{name: "under the limit", body: sections, max: 5, heads: []string{"", "A", "B", "C"}},
		{name: "at the limit", body: sections, max: 4, heads: []string{"", "A", "B", "C"}},
		{name: "no limit", body: sections, max: 0, heads: []string{"", "A", "B", "C"}},
		{
			name: "cut before a section", body: sections, max: 2, heads: []string{"", "A"},
			cut:    &Cut{Kept: 2, Heading: "B", LeftBytes: len("## B\nb\n## C\nc\n"), TotalBytes: len("intro") + len("Aa") + len("## B\nb\n## C\nc\n")},
			reason: "note too long: only its first 2 chunks are indexed, for keyword search only; the last 66% of its text, from “## B” on, is not searchable",
		},
		{
			name: "cut inside a section", body: long, max: 2, cap: 30, heads: []string{"Long", "Long"},
			reason: "note too long: only its first 2 chunks are indexed, for keyword search only; the last 49% of its text, from part way through “## Long”, is not searchable",
		},
		{
			name: "cut in the text before the first heading", body: paragraphs("w", 8, 10), max: 1, cap: 30, heads: []string{""},
			reason: "note too long: only its first 1 chunks are indexed, for keyword search only; the last 75% of its text is not searchable",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cap := cmpOr(tc.cap, MaxTokens)
			chunks, cut := ChunkNoteMax("T", tc.body, words, cap, tc.max)
			var heads []string
			for i, c := range chunks {
				heads = append(heads, c.Heading)
				if c.Ord != i {
					t.Errorf("chunk %d numbered %d", i, c.Ord)
				}
			}
			if !reflect.DeepEqual(heads, tc.heads) {
				t.Errorf("headings %q, want %q", heads, tc.heads)
			}
			// Unlimited, the same note makes the kept chunks first.
			if all := ChunkNote("T", tc.body, words, cap); !reflect.DeepEqual(all[:len(chunks)], chunks) {
				t.Errorf("the kept chunks differ from the first ones of the whole note")
			}
			if (cut == nil) != (tc.reason == "") {
				t.Fatalf("cut %+v, want one: %v", cut, tc.reason != "")
			}
			if cut == nil {
				return
			}
			if tc.cut != nil && *cut != *tc.cut {
				t.Errorf("cut %+v, want %+v", *cut, *tc.cut)
			}
			got := cut.Reason().Reason
			if got != tc.reason {
				t.Errorf("reason %q, want %q", got, tc.reason)
			}
		})
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}
