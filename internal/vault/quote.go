package vault

import (
	"strconv"
	"unicode/utf8"
)

// QuoteBytes is the most of a client's text an error quotes.
const QuoteBytes = 60

// QuoteInput quotes text a client gave (a path, a parameter's value, a key)
// for an error message or a log line: Go-quoted, so control characters and
// invalid UTF-8 are escaped, and cut to its first QuoteBytes bytes (at a
// character boundary, "…" after the closing quote) so an error never repeats
// a long input whole. Every error that quotes a client's input uses it.
func QuoteInput(s string) string {
	if len(s) <= QuoteBytes {
		return strconv.Quote(s)
	}
	cut := QuoteBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
