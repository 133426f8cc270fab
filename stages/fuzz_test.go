package stages_test

import (
	"context"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

// fuzzIndex builds a tiny index once for a fuzz target, with the
// bag-of-words embedder, and opens it.
func fuzzIndex(f *testing.F) *index.DB {
	f.Helper()
	return stagetest.DB(f, stagetest.IndexEnv(f, stagetest.WriteVault(f, map[string]string{
		"a.md":           "# Alpha\n\nThe lease_ttl_ms setting and FERR-4102 errors.\n\n## Night\n\nWrites got slow at night.",
		"b.md":           "# Ünïcödé\n\nМосква 東京 القاهرة naïve café ½ ⅷ ٣",
		"deep/c.md":      "---\ntype: log\n---\n# Gamma\n\nNEAR AND OR NOT title body column",
		"quotes/d.md":    "# D\n\n\"quoted\" 'single' `code` (paren) [[Alpha]]",
		"numbers/e 1.md": "# E\n\n123 4.5 6e7 0x1f",
	})))
}

// quotedTerms parses an expression of the form "t1" OR "t2" OR ... (with ""
// as an escaped quote inside a term) and returns the terms unquoted; ok is
// false when the expression has any other shape.
func quotedTerms(expr string) (terms []string, ok bool) {
	if expr == "" {
		return nil, true
	}
	rest := expr
	for {
		if !strings.HasPrefix(rest, `"`) {
			return nil, false
		}
		rest = rest[1:]
		var b strings.Builder
		closed := false
		for len(rest) > 0 {
			if strings.HasPrefix(rest, `""`) {
				b.WriteByte('"')
				rest = rest[2:]
				continue
			}
			if rest[0] == '"' {
				rest = rest[1:]
				closed = true
				break
			}
			b.WriteByte(rest[0])
			rest = rest[1:]
		}
		if !closed {
			return nil, false
		}
		terms = append(terms, b.String())
		if rest == "" {
			return terms, true
		}
		if !strings.HasPrefix(rest, " OR ") {
			return nil, false
		}
		rest = rest[len(" OR "):]
	}
}

// FuzzMatchExpr: whatever the user types, MatchExpr makes an expression of at
// most MaxQueryTerms double-quoted terms joined by OR, the terms are Terms(text), each a
// run of letters and digits, and FTS5 accepts the expression.
func FuzzMatchExpr(f *testing.F) {
	for _, s := range []string{
		"",
		"   ",
		"why did writes get slow in the middle of the night",
		"FERR-4102",
		"lease_ttl_ms",
		`title:foo OR body:bar NOT baz`,
		`NEAR(a b, 3) AND c*`,
		`{title body}: x`,
		`"unterminated`,
		`a"b""c`,
		`'; DROP TABLE notes; --`,
		`") OR 1=1 --`,
		"^start -minus +plus (paren",
		"Москва 東京 القاهرة naïve café",
		"½ ⅷ ٣ ①",
		"İstanbul ǅ ß ﬃ",
		"\xff\xfe invalid \xc3",
		"\x00 nul",
		strings.Repeat("word ", 200),
		strings.Repeat("x", 10000),
	} {
		f.Add(s)
	}
	db := fuzzIndex(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, text string) {
		terms := stages.Terms(text)
		if len(terms) > stages.MaxQueryTerms {
			t.Fatalf("%d terms, want at most %d", len(terms), stages.MaxQueryTerms)
		}
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) {
				t.Fatalf("term %q: want a non-empty UTF-8 string", term)
			}
			for _, r := range term {
				if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
					t.Fatalf("term %q has %q, neither letter nor digit", term, r)
				}
			}
		}
		expr := stages.MatchExpr(text)
		got, ok := quotedTerms(expr)
		if !ok {
			t.Fatalf("MatchExpr(%q) = %q: not a list of quoted terms joined by OR", text, expr)
		}
		if strings.Join(got, "\x00") != strings.Join(terms, "\x00") {
			t.Fatalf("MatchExpr(%q) quotes %q, Terms gives %q", text, got, terms)
		}
		if expr == "" {
			return
		}
		if _, err := db.Keyword(ctx, index.KeywordQuery{Match: expr, Limit: 10}); err != nil {
			t.Fatalf("FTS5 refuses MatchExpr(%q) = %q: %v", text, expr, err)
		}
	})
}
