package vault

import (
	"context"
	"sort"
	"strings"
	"unicode"
)

// Language is a language a vault's notes are written in, and how many of its
// notes are.
type Language struct {
	// Name is the language ("English", "Chinese", …), or "" when only its
	// script is known: a Latin or Cyrillic text whose commonest words are
	// none of the languages below, or a script several languages share
	// (Arabic, Devanagari).
	Name   string `json:"name,omitempty"`
	Script string `json:"script"` // "Latin", "Han", … (ScriptOf)
	Notes  int    `json:"notes"`
}

// Languages counts a vault's notes by language, most notes first.
type Languages []Language

// Total is the number of notes counted.
func (ls Languages) Total() int {
	n := 0
	for _, l := range ls {
		n += l.Notes
	}
	return n
}

// Thresholds of Main.
const (
	// SingleShare is the share of the notes at or above which the first
	// language is the vault's only main one.
	SingleShare = 0.8
	// MainShare is the share of the notes at or above which a language is
	// one of a mixed vault's main ones.
	MainShare = 0.2
	// maxMain bounds the main languages named to a caller.
	maxMain = 3
)

// Main is what a caller needs to know of a vault's languages: the first one
// alone when it holds at least SingleShare of the notes; otherwise the ones
// holding at least MainShare, at most three, and the first one always.
// Empty when no note was counted.
func (ls Languages) Main() Languages {
	total := ls.Total()
	if total == 0 {
		return nil
	}
	if float64(ls[0].Notes) >= SingleShare*float64(total) {
		return ls[:1]
	}
	out := Languages{ls[0]}
	for _, l := range ls[1:] {
		if len(out) < maxMain && float64(l.Notes) >= MainShare*float64(total) {
			out = append(out, l)
		}
	}
	return out
}

// Label names a language for a reader: its name, or the script it is
// written in when only that is known.
func (l Language) Label() string {
	if l.Name != "" {
		return l.Name
	}
	return "a language written in " + l.Script + " script"
}

// Describe names the vault's main languages (Main) as prose: "English",
// "Chinese and English", or "" when no note was counted.
func (ls Languages) Describe() string {
	main := ls.Main()
	names := make([]string, len(main))
	for i, l := range main {
		names[i] = l.Label()
	}
	return JoinAnd(names)
}

// JoinAnd joins names as prose: "a", "a and b", "a, b and c".
func JoinAnd(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// FilesLanguages counts a vault's notes by the language of their text
// (NoteLanguage). A note whose Latin or Cyrillic text names no language
// counts for the language most of that script's notes are in, when there is
// one: short notes and notes of code and names are in the vault's language
// far more often than in another.
func FilesLanguages(files []File) Languages {
	counts := map[Language]int{} // Notes is 0 in the keys
	for _, f := range files {
		name, script := NoteLanguage(f.Raw)
		if script != "" {
			counts[Language{Name: name, Script: script}]++
		}
	}
	top := map[string]Language{} // script → its language with the most notes
	for l, n := range counts {
		if l.Name == "" {
			continue
		}
		if t, ok := top[l.Script]; !ok || n > counts[t] || (n == counts[t] && l.Name < t.Name) {
			top[l.Script] = l
		}
	}
	for l, n := range counts {
		if t, ok := top[l.Script]; ok && l.Name == "" {
			counts[t] += n
			delete(counts, l)
		}
	}
	out := make(Languages, 0, len(counts))
	for l, n := range counts {
		l.Notes = n
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Notes != out[j].Notes {
			return out[i].Notes > out[j].Notes
		}
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Script < out[j].Script
	})
	return out
}

// DetectLanguages scans a vault (as List does) and counts its notes by
// language (FilesLanguages).
func DetectLanguages(ctx context.Context, root string, opts ScanOptions) (Languages, error) {
	l, err := List(ctx, root, opts)
	if err != nil {
		return nil, err
	}
	return FilesLanguages(l.Files), nil
}

// minLetters is the fewest letters a note's sample needs to say anything of
// its language.
const minLetters = 12

// NoteLanguage is the language of a note's text (its raw bytes) and the
// script it is written in: read from the first KiB of the prose (past the
// frontmatter, code blocks and inline code left out). The script decides
// the language where only one language writes it (Han is Chinese unless kana
// are mixed in, which makes it Japanese; Hangul is Korean; Greek, Hebrew,
// Thai); Latin and Cyrillic text is told apart by its commonest short words
// (stopWords). "" and "" for a note with too few letters to tell.
func NoteLanguage(raw []byte) (name, script string) {
	text := proseSample(raw)
	c := CountScripts(text)
	total := 0
	for _, n := range c {
		total += n
	}
	if total < minLetters {
		return "", ""
	}
	han, kana := c["Han"], c["Hiragana"]+c["Katakana"]
	script, _ = c.Dominant()
	switch {
	case kana > 0 && float64(han+kana) >= HanShare*float64(total) && kana*10 >= han+kana:
		// Japanese mixes kana into its Han (in running text, far more
		// than a tenth of them); Chinese never does.
		return "Japanese", script
	case stopWords[script] != nil:
		return wordLanguage(text, stopWords[script]), script
	}
	return ScriptLanguage(script), script
}

// proseSample is the first scriptSample bytes of a note's prose: the text
// past its frontmatter, without fenced code and inline code, whose keywords
// ("for", "if", "not", "and") would make any note read as English.
func proseSample(raw []byte) string {
	// The frontmatter is looked for in a bounded head: one longer than that
	// is read as text, which costs a little accuracy and never time.
	s := string(raw[:min(len(raw), 16<<10)])
	s = strings.TrimPrefix(s, "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if _, body, problem := splitFrontmatter(s); problem == "" {
		s = body
	}
	var b strings.Builder
	var fence fenceState
	for line := range strings.SplitSeq(s, "\n") {
		if b.Len() >= scriptSample {
			break
		}
		if fence.update(line) {
			continue
		}
		b.WriteString(stripInlineCode(line))
		b.WriteByte('\n')
	}
	out := b.String()
	if len(out) > scriptSample {
		out = out[:scriptSample]
	}
	return out
}

// Thresholds of wordLanguage: a language is named when at least
// minWordHits of the sample's words are its common words, they are at least
// minWordShare of all its words, and at least twice as many as any other
// language's. Running text has about a quarter of its words among a list of
// thirty commonest ones; a note of names, numbers and code has few, and a
// language with no list (Swedish, Polish, Turkish) scores a few chance hits
// spread over several lists.
const (
	minWordHits  = 4
	minWordShare = 0.06
)

// wordLanguage names the language whose common words a text uses most
// (lists: one of stopWords' values), or "" when none stands out.
func wordLanguage(text string, lists map[string]map[string]bool) string {
	hits := map[string]int{}
	words := 0
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) }) {
		words++
		w = strings.ToLower(w)
		for name, list := range lists {
			if list[w] {
				hits[name]++
			}
		}
	}
	best, second := "", 0
	for name, n := range hits {
		switch {
		case best == "" || n > hits[best] || (n == hits[best] && name < best):
			if best != "" {
				second = max(second, hits[best])
			}
			best = name
		default:
			second = max(second, n)
		}
	}
	if best == "" {
		return ""
	}
	n := hits[best]
	if n < minWordHits || float64(n) < minWordShare*float64(words) || n < 2*second {
		return ""
	}
	return best
}

// stopWords are, per script, a few dozen of the commonest words of the
// languages told apart in it, each list left without the words the others
// use as often ("de", "la", "en", "a", "in", "que", "il"): enough to name the
// language of a paragraph, far too few to describe it.
var stopWords = map[string]map[string]map[string]bool{
	"Latin": wordLists(map[string]string{
		"English":    "the and of to is that it for with are this be not you have from or by can which what if there they we should how but when would has been their these will was",
		"French":     "le les des du est et une pour dans pas qui sur avec ce au aux sont cette nous vous être peut ces été fait tout leur sa ses même aussi il elle",
		"German":     "der die das und ist nicht mit den dem von zu ein eine einen auf für sich auch im wird werden bei oder wenn wie sind noch nach kann aus dass wir ich",
		"Spanish":    "el los las del y es por más pero sus también hay puede muy cuando esta este son una con lo al se su para entre sin sobre ya",
		"Portuguese": "o os do da dos das em um uma não é ao na pelo pela isso são também muito seu sua você mas ou ser está quando nos já",
		"Italian":    "il di che della delle dei degli gli è anche più questo questa essere nel nella alla sono per non ma come ci si lo del da una",
		"Dutch":      "het een van dat niet op zijn voor maar ook wordt bij naar deze wat nog heeft om geen uit worden hebben je er te met",
	}),
	"Cyrillic": wordLists(map[string]string{
		"Russian":   "и что это как с по он но из от же все или при если быть так его её она они мы вы был была было только еще уже кто когда где есть нет чтобы который можно нужно этот эта",
		"Ukrainian": "і та що це як з від але або його її вони ми ви був була було тільки ще вже щоб які є також хто коли де немає який можна потрібно цей ця",
	}),
}

func wordLists(m map[string]string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for name, words := range m {
		out[name] = map[string]bool{}
		for _, w := range strings.Fields(words) {
			out[name][w] = true
		}
	}
	return out
}

// ScriptLanguage is the language a script is written for, when the script
// alone says ("Han": "Chinese"), else "".
func ScriptLanguage(script string) string {
	switch script {
	case "Han":
		return "Chinese"
	case "Hiragana", "Katakana":
		return "Japanese"
	case "Hangul":
		return "Korean"
	case "Greek", "Hebrew", "Thai":
		return script
	}
	return ""
}
