package vault

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The fuzz targets below run their seeds (f.Add and testdata/fuzz/FuzzX/) as
// ordinary tests; `make fuzz` runs each briefly with -fuzz. Each asserts an
// invariant of the function, not only that it returns.

var fuzzTime = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// noteSeeds are realistic and hostile notes shared by the note fuzzers.
var noteSeeds = []string{
	"",
	"# Title\n\nBody with a [[link]] and [[other#Heading|alias]].\n",
	"---\ntype: meeting\ndate: 2025-03-04\ntopics: [a, b]\n---\n# Standup\n\n## Notes\n\ntext\n",
	"---\nkey: [unclosed\n---\nbody",
	"---\ntype: a\ntype: b\n---\n",
	"---\n",
	"---",
	"\xef\xbb\xbf# BOM title\r\n\r\nline one\r\nline two\r",
	"bad \xff\xfe utf8 \xc3",
	"```\n# not a title\n[[not a link]]\n```\n# Real\n",
	"# \n#  \n## \n##\n## ## x\n",
	"use `[[not a link]]` but [[real]]",
	"[`x`[a]]",
	"[[a|b|c#d]] [[#only heading]] [[]] [[ ]] ![[embed.png]]",
	"# T\n\n" + strings.Repeat("word ", 300) + "\n\n## H\n\n" + strings.Repeat("x", 5000),
	"\x00\x01\x02 binary",
	"~~~\nunclosed fence [[hidden]]\n",
}

// FuzzParseNote: ParseNote takes any bytes and returns a note whose body is
// clean text, whose title is never empty, whose hash is the input's, and
// whose links are well-formed.
func FuzzParseNote(f *testing.F) {
	for _, s := range noteSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		orig := append([]byte(nil), raw...)
		n := ParseNote("folder/some note.md", raw, fuzzTime)
		if !bytes.Equal(raw, orig) {
			t.Fatal("ParseNote modified its input")
		}
		if !utf8.ValidString(n.Body) {
			t.Errorf("body is not valid UTF-8: %q", n.Body)
		}
		if strings.ContainsRune(n.Body, '\r') {
			t.Errorf("body has a carriage return: %q", n.Body)
		}
		// A byte-order mark and CRLF line ends change nothing but the hash.
		if bom := []byte("\xef\xbb\xbf"); bytes.HasPrefix(raw, bom) && !bytes.HasPrefix(raw[3:], bom) {
			if m := ParseNote("folder/some note.md", raw[3:], fuzzTime); m.Body != n.Body || m.Title != n.Title || !reflect.DeepEqual(m.Frontmatter, n.Frontmatter) {
				t.Errorf("a leading byte-order mark changed the note: %+v vs %+v", n, m)
			}
		}
		if lf := bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n")); len(lf) < len(raw) && !bytes.ContainsRune(lf, '\r') {
			if m := ParseNote("folder/some note.md", lf, fuzzTime); m.Body != n.Body || m.Title != n.Title || !reflect.DeepEqual(m.Frontmatter, n.Frontmatter) {
				t.Errorf("CRLF line ends changed the note: %+v vs %+v", n, m)
			}
		}
		if n.Title == "" || !utf8.ValidString(n.Title) || strings.ContainsAny(n.Title, "\r\n") {
			t.Errorf("title %q: want a non-empty single line of UTF-8", n.Title)
		}
		if n.Hash != sha256Hex(raw) {
			t.Errorf("hash %s is not the sha256 of the input", n.Hash)
		}
		if n.Size != int64(len(raw)) {
			t.Errorf("size %d, want %d", n.Size, len(raw))
		}
		if !utf8.Valid(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))) && !hasWarning(n.Warnings, "invalid UTF-8") {
			t.Errorf("invalid UTF-8 without a warning: %q", n.Warnings)
		}
		for _, w := range n.Warnings {
			if !utf8.ValidString(w.Reason) || !utf8.ValidString(w.Kind) || !utf8.ValidString(w.Detail) {
				t.Errorf("warning is not valid UTF-8: %q", w)
			}
			if w.Reason == "" || w.Kind == "" {
				t.Errorf("warning without a reason or a kind: %+v", w)
			}
		}
		for _, l := range n.Links {
			checkLink(t, l)
		}
		if n.DateSource != "frontmatter" && n.DateSource != "filename" && n.DateSource != "mtime" {
			t.Errorf("date source %q", n.DateSource)
		}
	})
}

func hasWarning(ws []Problem, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w.Reason, sub) {
			return true
		}
	}
	return false
}

func checkLink(t *testing.T, l Link) {
	t.Helper()
	for _, s := range []string{l.Target, l.Heading, l.Alias} {
		if strings.Contains(s, "[[") || strings.Contains(s, "]]") || strings.ContainsRune(s, '\n') {
			t.Errorf("link %+v has a part with [[, ]] or a newline", l)
		}
	}
	if l.Target == "" && l.Heading == "" {
		t.Errorf("link %+v has neither target nor heading", l)
	}
}

// FuzzExtractLinks: every link's parts are free of link syntax and line
// breaks, and there are never more links than "[[" openers in the text.
func FuzzExtractLinks(f *testing.F) {
	for _, s := range noteSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		links := ExtractLinks(body)
		for _, l := range links {
			checkLink(t, l)
		}
		if n := strings.Count(body, "[["); len(links) > n {
			t.Errorf("%d links from a text with %d \"[[\": %+v", len(links), n, links)
		}
	})
}

// FuzzChunkNote splits with a word counter and a small window, and checks:
// chunks are numbered 0..n-1; every chunk fits the window unless Truncated,
// and with a word counter a chunk is Truncated only when the title and
// heading leave less than the splitter's minimum budget; parts of one section
// are numbered 1, 2, ... under one heading; and no word is lost or invented:
// the words of the chunks (bodies, and each section's heading once) are the
// body's words minus the "##" markers of section headings and, at most once,
// the dropped "# title" line.
func FuzzChunkNote(f *testing.F) {
	for _, s := range noteSeeds {
		n := ParseNote("note.md", []byte(s), fuzzTime)
		f.Add(n.Title, n.Body, uint8(20))
	}
	f.Add("A title with many many many many many many many words", "## h\n\n"+strings.Repeat("w ", 40), uint8(20))
	f.Add("T", "# T\n# T\n## a\n\n"+strings.Repeat("p q r\n", 30)+"\n\n"+strings.Repeat("s ", 50), uint8(20))
	f.Add("T", "one\n\ntwo", uint8(0))
	count := func(s string) int { return len(strings.Fields(s)) }
	f.Fuzz(func(t *testing.T, title, body string, window uint8) {
		maxTokens := 1 + int(window)%64
		chunks := ChunkNote(title, body, count, maxTokens)
		if len(chunks) == 0 {
			t.Fatal("no chunks")
		}
		headingsSeen := 0
		for i, c := range chunks {
			if c.Ord != i {
				t.Fatalf("chunk %d has Ord %d", i, c.Ord)
			}
			// Lines keep their indentation, but no chunk starts or ends with a
			// blank line, and a part of a split section is never empty.
			if c.Body != strings.Trim(c.Body, "\n") {
				t.Errorf("chunk %d body starts or ends with a line break: %q", i, c.Body)
			}
			if c.Part > 0 && strings.TrimSpace(c.Body) == "" {
				t.Errorf("chunk %d is part %d of a section and is empty", i, c.Part)
			}
			n := count(EmbedText(title, c))
			if n > maxTokens && !c.Truncated {
				t.Errorf("chunk %d takes %d tokens > %d and is not marked truncated", i, n, maxTokens)
			}
			if c.Truncated {
				if n <= maxTokens {
					t.Errorf("chunk %d is marked truncated but fits (%d <= %d)", i, n, maxTokens)
				}
				if prefix := count(EmbedText(title, Chunk{Heading: c.Heading})); maxTokens-prefix-1 >= 16 {
					t.Errorf("chunk %d truncated although the splitter had a budget of %d words", i, maxTokens-prefix-1)
				}
			}
			if c.Part > 1 {
				if i == 0 || chunks[i-1].Part != c.Part-1 || chunks[i-1].Heading != c.Heading {
					t.Errorf("chunk %d is part %d but does not follow part %d of the same heading", i, c.Part, c.Part-1)
				}
			} else {
				headingsSeen++ // a part 0 or 1 starts a section (or is the preamble)
			}
		}

		// Words of the body not found in the chunks, as a multiset.
		missing := map[string]int{}
		for _, w := range strings.Fields(body) {
			missing[w]++
		}
		for _, c := range chunks {
			words := strings.Fields(c.Body)
			if c.Part <= 1 {
				words = append(words, strings.Fields(c.Heading)...) // parts 2, 3, ... repeat the heading
			}
			for _, w := range words {
				missing[w]--
				if missing[w] < 0 {
					t.Fatalf("chunk word %q is not in the body (or appears more often in the chunks)", w)
				}
			}
		}
		// Either no title line was dropped, or exactly one: "#" and the
		// words of a level-one heading that reads as the title once its
		// markup is dropped (PlainHeading), as written.
		ok := onlyMarkers(missing, nil, headingsSeen)
		var titleLines []map[string]int
		for _, line := range strings.Split(body, "\n") {
			if h, isH1 := strings.CutPrefix(strings.TrimRight(line, "\r"), "# "); isH1 && PlainHeading(h) == title {
				words := map[string]int{"#": 1}
				for _, w := range strings.Fields(h) {
					words[w]++
				}
				titleLines = append(titleLines, words)
				ok = ok || onlyMarkers(missing, words, headingsSeen)
			}
		}
		if !ok {
			t.Errorf("words lost beyond the \"##\" markers (%d sections) and one title line (of %v): %v", headingsSeen, titleLines, nonZero(missing))
		}
	})
}

// onlyMarkers reports whether missing minus minus (a multiset) is
// non-negative and holds nothing but at most sections "##" markers.
func onlyMarkers(missing, minus map[string]int, sections int) bool {
	rest := map[string]int{}
	for k, v := range missing {
		rest[k] = v
	}
	for k, v := range minus {
		rest[k] -= v
		if rest[k] < 0 {
			return false
		}
	}
	markers := rest["##"]
	delete(rest, "##")
	return markers <= sections && len(nonZero(rest)) == 0
}

func nonZero(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
