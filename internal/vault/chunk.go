package vault

import (
	"strings"
)

// TokenCounter counts the tokens a text takes in the embedding model, without
// the special tokens. Tests may pass a word counter.
type TokenCounter func(string) int

// MaxTokens is the embedding window of a BERT-sized model, less [CLS] and [SEP].
const MaxTokens = 510

// EmbedText is the text a chunk is embedded as: the note title and the section
// heading, then the body, so a section whose body never names its subject is
// still found by it.
func EmbedText(title string, c Chunk) string {
	var b strings.Builder
	b.WriteString(title)
	if c.Heading != "" {
		b.WriteString("\n")
		b.WriteString(c.Heading)
	}
	if c.Body != "" {
		b.WriteString("\n")
		b.WriteString(c.Body)
	}
	return b.String()
}

// ChunkNote splits a note body on level-two headings ("## ", outside code
// fences). The text before the first one is the first chunk (without the "# "
// title line). A section whose embedding text is longer than maxTokens is split
// on paragraph boundaries into parts that each fit, every part keeping the
// heading; a single paragraph that still does not fit is split on lines, then on
// words, so nothing is silently cut off. count may be nil (no splitting).
func ChunkNote(title, body string, count TokenCounter, maxTokens int) []Chunk {
	type section struct {
		heading string
		lines   []string
	}
	secs := []section{{}}
	var fence fenceState
	titleDropped := false
	for _, line := range strings.Split(body, "\n") {
		if fence.update(line) {
			secs[len(secs)-1].lines = append(secs[len(secs)-1].lines, line)
			continue
		}
		if strings.HasPrefix(line, "## ") || line == "##" {
			secs = append(secs, section{heading: strings.TrimSpace(strings.TrimPrefix(line, "##"))})
			continue
		}
		if !titleDropped && len(secs) == 1 && strings.HasPrefix(line, "# ") && PlainHeading(line[2:]) == title {
			titleDropped = true
			continue
		}
		secs[len(secs)-1].lines = append(secs[len(secs)-1].lines, line)
	}

	var chunks []Chunk
	for i, s := range secs {
		text := strings.TrimSpace(strings.Join(s.lines, "\n"))
		if i == 0 && text == "" {
			continue // no preamble
		}
		base := Chunk{Heading: s.heading, Body: text}
		for _, c := range splitToFit(title, base, count, maxTokens) {
			c.Ord = len(chunks)
			chunks = append(chunks, c)
		}
	}
	if len(chunks) == 0 {
		// A title-only note is still findable by its title, and a title longer
		// than the window is embedded as a prefix, so it is marked as one.
		chunks = splitToFit(title, Chunk{}, count, maxTokens)
	}
	return chunks
}

// splitToFit returns c itself when it fits, else its parts.
func splitToFit(title string, c Chunk, count TokenCounter, maxTokens int) []Chunk {
	if count == nil || maxTokens <= 0 || count(EmbedText(title, c)) <= maxTokens {
		return []Chunk{c}
	}
	prefix := count(EmbedText(title, Chunk{Heading: c.Heading}))
	budget := maxTokens - prefix - 1
	if budget < 16 {
		// A heading and title that fill the window themselves: embed a prefix only.
		c.Truncated = true
		return []Chunk{c}
	}
	var parts []string
	var cur []string
	curTokens := 0
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, strings.Join(cur, "\n\n"))
			cur, curTokens = nil, 0
		}
	}
	for _, para := range pieces(c.Body, budget, count) {
		n := count(para)
		if curTokens > 0 && curTokens+n+1 > budget {
			flush()
		}
		cur = append(cur, para)
		curTokens += n + 1
	}
	flush()
	out := make([]Chunk, len(parts))
	for i, p := range parts {
		out[i] = Chunk{Heading: c.Heading, Body: p, Part: i + 1}
		// A single word longer than the window (a pasted blob) still cannot fit.
		out[i].Truncated = count(EmbedText(title, out[i])) > maxTokens
	}
	return out
}

// pieces splits text into paragraphs, and any paragraph over budget into lines,
// and any line over budget into runs of words, so that each piece fits.
func pieces(text string, budget int, count TokenCounter) []string {
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		if count(para) <= budget {
			out = append(out, para)
			continue
		}
		for _, line := range strings.Split(para, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if count(line) <= budget {
				out = append(out, line)
				continue
			}
			out = append(out, wordRuns(line, budget, count)...)
		}
	}
	return out
}

// wordRuns counts word by word: a BERT pre-tokenizer splits on white space
// first, so the counts add up, and a huge line costs linear time.
func wordRuns(line string, budget int, count TokenCounter) []string {
	var out []string
	var cur []string
	curTokens := 0
	for _, w := range strings.Fields(line) {
		n := count(w)
		if len(cur) > 0 && curTokens+n > budget {
			out = append(out, strings.Join(cur, " "))
			cur, curTokens = nil, 0
		}
		cur = append(cur, w)
		curTokens += n
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}
