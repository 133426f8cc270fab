package vault

import (
	"fmt"
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

// DefaultMaxChunks is how many chunks of one note are indexed: about 4 MB of
// prose, or 2,000 sections, a hundred times a long real note (a 40,000-character
// note makes about 20). Past it a note is a generated file or an export: its
// first DefaultMaxChunks are indexed for keyword search, and none is
// embedded, since each would cost the model time (a chunk of a full window
// takes about a twentieth of a second, 2,000 short ones several seconds) for
// text a search by meaning would hardly rank.
const DefaultMaxChunks = 2000

// Cut is what ChunkNoteMax left out of a note that made more chunks than
// its limit: the chunks after the first Kept.
type Cut struct {
	Kept int // the chunks kept: the limit
	// Heading is the "## " heading of the section the cut falls in ("" for
	// the text before the first one), and InSection says the cut falls after
	// some of that section's parts rather than before the section.
	Heading   string
	InSection bool
	// LeftBytes of the body's TotalBytes (heading lines and text) are left
	// out.
	LeftBytes, TotalBytes int
}

// Reason says what was left out, in one line, for a build report.
func (c Cut) Reason() Problem {
	share := 100 * c.LeftBytes / max(c.TotalBytes, 1)
	if share == 0 && c.LeftBytes > 0 {
		share = 1
	}
	where := ""
	switch {
	case c.InSection && c.Heading != "":
		where = fmt.Sprintf(", from part way through “## %s”,", c.Heading)
	case c.Heading != "":
		where = fmt.Sprintf(", from “## %s” on,", c.Heading)
	}
	kind := fmt.Sprintf("note too long: only its first %d chunks are indexed, for keyword search only", c.Kept)
	detail := fmt.Sprintf("the last %d%% of its text%s is not searchable", share, where)
	return Problem{Reason: kind + "; " + detail, Kind: kind, Detail: detail}
}

// ChunkNote splits a note body on level-two headings ("## ", outside code
// fences). The text before the first one is the first chunk (without the "# "
// title line). A section whose embedding text is longer than maxTokens is split
// on paragraph boundaries into parts that each fit, every part keeping the
// heading; a single paragraph that still does not fit is split on lines, then on
// words, so nothing is silently cut off. count may be nil (no splitting).
func ChunkNote(title, body string, count TokenCounter, maxTokens int) []Chunk {
	chunks, _ := ChunkNoteMax(title, body, count, maxTokens, 0)
	return chunks
}

// ChunkNoteMax is ChunkNote that makes at most maxChunks chunks (0: no
// limit). A note that would make more is cut: its first maxChunks chunks are
// returned with a Cut saying what was left out. Past the cut nothing is
// tokenized, so a note of a million headings costs little more than the
// scan of its lines.
func ChunkNoteMax(title, body string, count TokenCounter, maxTokens, maxChunks int) ([]Chunk, *Cut) {
	var chunks []Chunk
	var cut *Cut
	var fence fenceState
	titleDropped := false
	// The current section: its heading, its lines, and the bytes it spans
	// in the body (its heading line included).
	heading, first := "", true
	var lines []string
	span := 0
	emit := func() {
		defer func() { lines, span = lines[:0], 0 }()
		if cut != nil {
			cut.LeftBytes += span
			return
		}
		text := strings.TrimSpace(strings.Join(lines, "\n"))
		if first && text == "" {
			return // no preamble
		}
		room := 0
		if maxChunks > 0 {
			room = maxChunks - len(chunks)
			if room <= 0 {
				cut = &Cut{Kept: len(chunks), Heading: heading, LeftBytes: span}
				return
			}
		}
		parts, left := splitToFit(title, Chunk{Heading: heading, Body: text}, count, maxTokens, room)
		for _, c := range parts {
			c.Ord = len(chunks)
			chunks = append(chunks, c)
		}
		if left > 0 {
			cut = &Cut{Kept: len(chunks), Heading: heading, InSection: true, LeftBytes: left}
		}
	}
	for len(body) > 0 {
		line := body
		next := ""
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			line, next = body[:i], body[i+1:]
		}
		size := len(body) - len(next) // the line and its newline
		body = next
		if fence.update(line) {
			lines, span = append(lines, line), span+size
			continue
		}
		if strings.HasPrefix(line, "## ") || line == "##" {
			emit()
			heading, first, span = strings.TrimSpace(strings.TrimPrefix(line, "##")), false, size
			continue
		}
		if !titleDropped && first && strings.HasPrefix(line, "# ") && PlainHeading(line[2:]) == title {
			titleDropped = true
			continue
		}
		lines, span = append(lines, line), span+size
	}
	emit() // the last section
	if len(chunks) == 0 {
		// A title-only note is still findable by its title, and a title longer
		// than the window is embedded as a prefix, so it is marked as one.
		chunks, _ = splitToFit(title, Chunk{}, count, maxTokens, 0)
	}
	if cut != nil {
		for _, c := range chunks {
			cut.TotalBytes += len(c.Heading) + len(c.Body)
		}
		cut.TotalBytes += cut.LeftBytes
	}
	return chunks, cut
}

// splitToFit returns c itself when it fits, else its parts: at most room of
// them when room > 0, and then left counts the bytes of the body the parts
// after those would have held.
func splitToFit(title string, c Chunk, count TokenCounter, maxTokens, room int) (out []Chunk, left int) {
	if count == nil || maxTokens <= 0 || count(EmbedText(title, c)) <= maxTokens {
		return []Chunk{c}, 0
	}
	prefix := count(EmbedText(title, Chunk{Heading: c.Heading}))
	budget := maxTokens - prefix - 1
	if budget < 16 {
		// A heading and title that fill the window themselves: embed a prefix only.
		c.Truncated = true
		return []Chunk{c}, 0
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
	ps := pieces(c.Body, budget, count)
	for k, para := range ps {
		n := count(para)
		if curTokens > 0 && curTokens+n+1 > budget {
			flush()
			if room > 0 && len(parts) == room {
				for _, rest := range ps[k:] {
					left += len(rest) + 1
				}
				break
			}
		}
		cur = append(cur, para)
		curTokens += n + 1
	}
	flush()
	out = make([]Chunk, len(parts))
	for i, p := range parts {
		out[i] = Chunk{Heading: c.Heading, Body: p, Part: i + 1}
		// A single word longer than the window (a pasted blob) still cannot fit.
		out[i].Truncated = count(EmbedText(title, out[i])) > maxTokens
	}
	return out, left
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
