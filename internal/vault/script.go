package vault

import (
	"context"
	"sort"
	"unicode"
	"unicode/utf8"
)

// Scripts a vault is told apart by: the writing systems of the languages an
// embedder may or may not read. A letter of any other script counts as
// ScriptOther.
var scriptTables = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin},
	{"Han", unicode.Han},
	{"Hiragana", unicode.Hiragana},
	{"Katakana", unicode.Katakana},
	{"Hangul", unicode.Hangul},
	{"Cyrillic", unicode.Cyrillic},
	{"Greek", unicode.Greek},
	{"Arabic", unicode.Arabic},
	{"Hebrew", unicode.Hebrew},
	{"Devanagari", unicode.Devanagari},
	{"Thai", unicode.Thai},
}

// ScriptOther is the script of a letter in none of the named ones.
const ScriptOther = "Other"

// scriptSample is how much of a note counts toward its vault's script: the
// first KiB says what language a note is in, and reading no more keeps the
// count cheap on every build (30,000 notes: 30 MB of text at most).
const scriptSample = 1 << 10

// ScriptCounts counts letters by script.
type ScriptCounts map[string]int

// CountScripts counts every letter of text by script.
func CountScripts(text string) ScriptCounts {
	c := ScriptCounts{}
	c.add([]byte(text))
	return c
}

// Add counts the letters of a note's text (at most its first scriptSample
// bytes).
func (c ScriptCounts) Add(text []byte) {
	if len(text) > scriptSample {
		text = text[:scriptSample]
	}
	c.add(text)
}

func (c ScriptCounts) add(text []byte) {
	for len(text) > 0 {
		r, n := utf8.DecodeRune(text)
		text = text[n:]
		if !unicode.IsLetter(r) {
			continue
		}
		c[ScriptOf(r)]++
	}
}

// FilesScript is the dominant script of a vault's notes and its share of
// their letters (each note's first scriptSample bytes): what the first
// index chooses an embedder by, and what every build records.
func FilesScript(files []File) (string, float64) {
	c := ScriptCounts{}
	for _, f := range files {
		c.Add(f.Raw)
	}
	return c.Dominant()
}

// ScriptOf is the named script of a letter, or ScriptOther.
func ScriptOf(r rune) string {
	if r < utf8.RuneSelf {
		return "Latin"
	}
	for _, s := range scriptTables {
		if unicode.Is(s.table, r) {
			return s.name
		}
	}
	return ScriptOther
}

// Dominant is the script with the most letters and its share of all the
// letters counted; "" and 0 when there are none. Han text is mixed with
// Latin in most Chinese notes (names, code, English terms), and a Latin
// word has several letters where a Han word has one or two: a vault whose
// letters are at least HanShare Han is a Chinese one, whatever its
// majority.
func (c ScriptCounts) Dominant() (string, float64) {
	total := 0
	for _, n := range c {
		total += n
	}
	if total == 0 {
		return "", 0
	}
	if han := c["Han"]; float64(han) >= HanShare*float64(total) && han > c["Hiragana"]+c["Katakana"]+c["Hangul"] {
		return "Han", float64(han) / float64(total)
	}
	names := make([]string, 0, len(c))
	for s := range c {
		names = append(names, s)
	}
	sort.Strings(names)
	best := names[0]
	for _, s := range names[1:] {
		if c[s] > c[best] {
			best = s
		}
	}
	return best, float64(c[best]) / float64(total)
}

// HanShare is the share of Han letters above which a vault counts as
// Chinese (see Dominant). Japanese is told apart by its kana.
const HanShare = 0.25

// Outside is the share of the letters counted in scripts covers rejects,
// and the one of those scripts with the most letters (ties to the name
// first in order); 0 and "" without letters.
func (c ScriptCounts) Outside(covers func(script string) bool) (float64, string) {
	total, out, top := 0, 0, ""
	for s, n := range c {
		total += n
		if covers(s) {
			continue
		}
		out += n
		if top == "" || n > c[top] || (n == c[top] && s < top) {
			top = s
		}
	}
	if total == 0 {
		return 0, ""
	}
	return float64(out) / float64(total), top
}

// DetectScript scans a vault (as Scan does) and returns its dominant script
// and that script's share of its letters (FilesScript).
func DetectScript(ctx context.Context, root string) (string, float64, error) {
	files, _, err := Scan(ctx, root, ScanOptions{})
	if err != nil {
		return "", 0, err
	}
	s, share := FilesScript(files)
	return s, share, nil
}
