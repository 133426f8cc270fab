package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitCJK rewrites every run of Han, Hiragana, Katakana or Hangul characters
// into its overlapping bigrams, separated by spaces (a run of one character
// stays itself): 从印象笔记导入 becomes "从印 印象 象笔 笔记 记导 导入". It is
// what Lucene's CJK analyzer does, and what lets FTS5's unicode61 tokenizer —
// which keeps a whole run of letters as one token, so 印象笔记 inside
// 从印象笔记导入 never matched — find a Chinese, Japanese or Korean word
// inside a longer run. The index applies it to every text chunks_fts and the
// keyword postings hold, and the keyword stage to every query, so both sides
// split alike.
//
// Text without such a character is returned as it is, byte for byte: English
// notes and queries are indexed and searched exactly as before.
func SplitCJK(text string) string {
	i := strings.IndexFunc(text, isCJK)
	if i < 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) * 2)
	b.WriteString(text[:i])
	var run []rune
	flush := func() {
		if len(run) == 0 {
			return
		}
		b.WriteByte(' ')
		if len(run) == 1 {
			b.WriteRune(run[0])
		}
		for k := 0; k+1 < len(run); k++ {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(run[k])
			b.WriteRune(run[k+1])
		}
		b.WriteByte(' ')
		run = run[:0]
	}
	for rest := text[i:]; rest != ""; {
		r, n := utf8.DecodeRuneInString(rest)
		if isCJK(r) {
			run = append(run, r)
		} else {
			flush()
			b.WriteString(rest[:n]) // the bytes as they were, valid or not
		}
		rest = rest[n:]
	}
	flush()
	return b.String()
}

// isCJK says whether r is written in a script without spaces between words
// (Han, Hiragana, Katakana) or, for Hangul, one that Lucene's CJK analyzer
// bigrams too. The prolonged sound mark ー (Common script) belongs to the
// Katakana word it lengthens.
func isCJK(r rune) bool {
	return r == 'ー' || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
