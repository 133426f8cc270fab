package stages

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vault-rag/vault-rag/index"
)

// MaxQueryTerms bounds the terms a query contributes to a keyword search: a
// 100 KB paste still makes a bounded FTS5 expression, and the longest real
// queries (Cranfield's run past 64 terms) keep every word.
const MaxQueryTerms = 256

// Terms splits text into the lower-cased alphanumeric runs FTS5's unicode61
// tokenizer would index, in order, at most MaxQueryTerms; a run of Han, Kana
// or Hangul becomes its bigrams first, as the index holds it (index.SplitCJK). A repeated word is
// kept each time: in an OR query bm25 sums over the terms, so repetition is
// the query's term frequency, as FTS5 counts it.
func Terms(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(index.SplitCJK(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}) {
		out = append(out, f)
		if len(out) == MaxQueryTerms {
			break
		}
	}
	return out
}

// MatchExpr turns user text into an FTS5 query that is only ever plain text:
// its Terms, each double-quoted (so NEAR, AND, OR, NOT, *, ^, -, column
// filters and parentheses are words, not syntax), joined with OR as BM25
// expects (index.QuoteTerms). An empty result means the text has nothing to
// search for.
func MatchExpr(text string) string {
	return index.QuoteTerms(Terms(text))
}

// Snippet returns at most n characters of text (on rune boundaries, white space
// folded): the window holding the most query terms, preferring the earliest.
func Snippet(text string, terms []string, n int) string {
	words := strings.Fields(text)
	if len(words) == 0 {
		return ""
	}
	joined := strings.Join(words, " ")
	if len([]rune(joined)) <= n {
		return joined
	}
	want := map[string]bool{}
	for _, t := range terms {
		want[t] = true
	}
	hit := make([]bool, len(words))
	for i, w := range words {
		for _, t := range Terms(w) {
			if want[t] {
				hit[i] = true
			}
		}
	}
	best, bestHits := 0, -1
	for start := range words {
		length, hits := 0, 0
		for j := start; j < len(words); j++ {
			length += len([]rune(words[j])) + 1
			if length > n+1 {
				break
			}
			if hit[j] {
				hits++
			}
		}
		if hits > bestHits {
			best, bestHits = start, hits
		}
	}
	return truncateRunes(strings.Join(words[best:], " "), n)
}

// Prefix returns at most n characters of text with white space folded.
func Prefix(text string, n int) string {
	return truncateRunes(strings.Join(strings.Fields(text), " "), n)
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	// i is a byte offset and n counts runes: compare like with like, or
	// multi-byte text is cut at a space well before the half-way mark.
	if i := strings.LastIndexByte(cut, ' '); i >= 0 && utf8.RuneCountInString(cut[:i]) > n/2 {
		cut = cut[:i]
	}
	return cut
}
