package vault

import (
	"path"
	"regexp"
	"strings"
)

// Embed is one "![[target]]", "![[target#heading]]" or "![[target#^block]]"
// of a note body, outside code fences and inline code.
type Embed struct {
	Start, End int    // byte offsets of "![[" and just past "]]" in the body
	Target     string // as written, without "#..." and "|...", a trailing ".md" dropped; "" for the note itself
	Heading    string // after "#": a heading, or nested headings joined by "#"; "" when none or a block
	Block      string // after "#^": a block id; "" when none
}

// Attachment reports whether the embed names a file that is not a note (an
// image, a PDF, audio or video): one with an extension other than ".md".
func (e Embed) Attachment() bool {
	ext := strings.ToLower(path.Ext(e.Target))
	return ext != "" && ext != ".md" && len(ext) <= 6 && !strings.ContainsAny(ext, " \t")
}

var embedPattern = regexp.MustCompile(`!\[\[([^\[\]\n]+?)\]\]`)

// Embeds returns the body's embeds in order, skipping those inside code fences
// and inline code, as ExtractLinks does.
func Embeds(body string) []Embed {
	if !strings.Contains(body, "![[") {
		return nil
	}
	var out []Embed
	var fence fenceState
	off := 0
	for _, line := range strings.Split(body, "\n") {
		start := off
		off += len(line) + 1
		if fence.update(line) || !strings.Contains(line, "![[") {
			continue
		}
		code := inlineCodeSpans(line)
		for _, m := range embedPattern.FindAllStringSubmatchIndex(line, -1) {
			if inSpans(code, m[0]) {
				continue
			}
			inner := line[m[2]:m[3]]
			e := Embed{Start: start + m[0], End: start + m[1]}
			if i := strings.Index(inner, "|"); i >= 0 {
				inner = inner[:i]
			}
			if i := strings.Index(inner, "#"); i >= 0 {
				frag := strings.TrimSpace(inner[i+1:])
				if strings.HasPrefix(frag, "^") {
					e.Block = strings.TrimSpace(frag[1:])
				} else {
					e.Heading = strings.Trim(frag, "# ")
				}
				inner = inner[:i]
			}
			e.Target = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(inner), ".md"))
			if e.Target == "" && e.Heading == "" && e.Block == "" {
				continue
			}
			out = append(out, e)
		}
	}
	return out
}

// inlineCodeSpans returns the [start, end) byte ranges of a line's
// backtick-delimited spans.
func inlineCodeSpans(line string) [][2]int {
	var spans [][2]int
	open := -1
	for i := 0; i < len(line); i++ {
		if line[i] != '`' {
			continue
		}
		if open < 0 {
			open = i
		} else {
			spans = append(spans, [2]int{open, i + 1})
			open = -1
		}
	}
	return spans
}

func inSpans(spans [][2]int, at int) bool {
	for _, s := range spans {
		if at >= s[0] && at < s[1] {
			return true
		}
	}
	return false
}
