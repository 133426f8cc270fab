package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every string of the vault's that the commands print for a person (a note's
// path, title, headings and passages, the reasons a build gives, an error
// naming a file) goes through termSafe or termSafeLines first: a file name or
// a heading may hold an escape sequence, and printed raw it would recolour,
// retitle or rewrite the user's terminal. JSON output (--json) needs neither:
// the encoder escapes control characters itself.

// termSafe is s with every control character (C0 including newline and tab,
// DEL, C1), every Unicode bidirectional control and every byte that is not
// UTF-8 written as a visible Go escape: "\x1b[31m" prints as `\x1b[31m`.
func termSafe(s string) string { return escapeForTerminal(s, false) }

// termSafeLines is termSafe for text of several lines (a passage, an error):
// newlines and tabs are kept, everything else termSafe escapes is escaped.
func termSafeLines(s string) string { return escapeForTerminal(s, true) }

func escapeForTerminal(s string, keepLines bool) string {
	needs := func(r rune) bool {
		if keepLines && (r == '\n' || r == '\t') {
			return false
		}
		return r == utf8.RuneError || unicode.IsControl(r) || isBidiControl(r)
	}
	if strings.IndexFunc(s, needs) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r != utf8.RuneError && needs(r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isBidiControl reports the Unicode controls that reorder what follows them
// (U+202A–U+202E, U+2066–U+2069, and the marks U+200E, U+200F, U+061C): a
// name holding one can display as another.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}
