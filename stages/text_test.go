package stages_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

// hostile is every kind of text a user might type that FTS5 would read as
// syntax, plus text that stresses the tokenizer. terms is what Terms must make
// of it; raw says the text, passed to FTS5 unquoted, is a syntax error (so the
// FTS5 test below proves it can see one); find is a note the sanitised search
// must return, showing operators are searched as the words they are.
var hostile = []struct {
	name  string
	text  string
	terms []string
	raw   bool
	find  string
}{
	{name: "double quote", text: `"`, raw: true},
	{name: "unbalanced quote", text: `"compaction stall`, terms: []string{"compaction", "stall"}, raw: true, find: "ops/compaction.md"},
	{name: "quote inside a word", text: `comp"action`, terms: []string{"comp", "action"}, raw: true},
	{name: "star", text: `*`, raw: true},
	{name: "prefix star", text: `compact*`, terms: []string{"compact"}},
	{name: "minus", text: `-`, raw: true},
	{name: "leading minus", text: `-compaction`, terms: []string{"compaction"}, raw: true, find: "ops/compaction.md"},
	{name: "caret", text: `^`, raw: true},
	{name: "initial-token caret", text: `^compaction`, terms: []string{"compaction"}, find: "ops/compaction.md"},
	{name: "colon", text: `:`, raw: true},
	{name: "open paren", text: `(`, raw: true},
	{name: "close paren", text: `)`, raw: true},
	{name: "parenthesised", text: `(compaction OR)`, terms: []string{"compaction", "or"}, raw: true, find: "ops/compaction.md"},
	{name: "plus", text: `+`, raw: true},
	{name: "plus joined", text: `disk+full`, terms: []string{"disk", "full"}, find: "ops/compaction.md"},
	{name: "NEAR", text: `NEAR`, terms: []string{"near"}, find: "ops/operators.md"},
	{name: "NEAR group", text: `NEAR(compaction stall, 2)`, terms: []string{"near", "compaction", "stall", "2"}, find: "ops/operators.md"},
	{name: "NEAR open", text: `NEAR(`, terms: []string{"near"}, raw: true, find: "ops/operators.md"},
	{name: "AND", text: `AND`, terms: []string{"and"}, raw: true, find: "ops/operators.md"},
	{name: "OR", text: `OR`, terms: []string{"or"}, raw: true, find: "ops/operators.md"},
	{name: "NOT", text: `NOT`, terms: []string{"not"}, raw: true, find: "ops/operators.md"},
	{name: "dangling AND", text: `compaction AND`, terms: []string{"compaction", "and"}, raw: true},
	{name: "NOT first", text: `NOT compaction`, terms: []string{"not", "compaction"}, raw: true},
	{name: "column filter", text: `title:foo`, terms: []string{"title", "foo"}, find: "ops/operators.md"},
	{name: "unknown column", text: `nosuch:foo`, terms: []string{"nosuch", "foo"}, raw: true, find: "ops/operators.md"},
	{name: "column set", text: `{a b}`, terms: []string{"a", "b"}, raw: true},
	{name: "column set filter", text: `{title body}: compaction`, terms: []string{"title", "body", "compaction"}}, // valid FTS5: a column filter, not words
	{name: "SQL fragment", text: `'; DROP TABLE notes; --`, terms: []string{"drop", "table", "notes"}, raw: true, find: "ops/operators.md"},
	{name: "SQL comment and quote", text: `x' OR 1=1 /* */`, terms: []string{"x", "or", "1", "1"}, raw: true},
	{name: "empty", text: ``},
	{name: "white space", text: " \t\r\n\u00a0\u3000 "},
	{name: "only punctuation", text: `!?.,;:-—–…"'()[]{}<>/\|@#$%^&*_+=~` + "`"},
	{name: "NUL and control bytes", text: "comp\x00action\x1b[0m", terms: []string{"comp", "action", "0m"}},
	// A run of Han and kana becomes its bigrams (index.SplitCJK), as the index holds it.
	{name: "Japanese", text: `日本語のテキスト`, terms: []string{"日本", "本語", "語の", "のテ", "テキ", "キス", "スト"}},
	{name: "Chinese inside a run", text: `从印象笔记导入`, terms: []string{"从印", "印象", "象笔", "笔记", "记导", "导入"}},
	{name: "Japanese words", text: `東京 大阪`, terms: []string{"東京", "大阪"}, find: "intl/scripts.md"},
	{name: "Cyrillic", text: `Привет, Мир!`, terms: []string{"привет", "мир"}, find: "intl/scripts.md"},
	{name: "Arabic", text: `مرحبا بالعالم`, terms: []string{"مرحبا", "بالعالم"}, find: "intl/scripts.md"},
	// Combining marks (category Mn) are separators to FTS5's unicode61 as to
	// Terms, so both split these words the same way, and the pieces still find
	// the note.
	{name: "Arabic with diacritics", text: `مَرْحَبًا`, terms: []string{"م", "ر", "ح", "ب", "ا"}, find: "intl/marks.md"},
	{name: "Devanagari with vowel signs", text: `नमस्ते`, terms: []string{"नमस", "त"}, find: "intl/marks.md"},
	{name: "emoji only", text: `🔥🚀👩‍💻`},
	{name: "emoji beside a word", text: `🔥compaction🚀`, terms: []string{"compaction"}, find: "ops/compaction.md"},
	{name: "accented", text: `Crème Brûlée`, terms: []string{"crème", "brûlée"}},
	{name: "repeated terms kept (query term frequency)", text: `Stall stall STALL`, terms: []string{"stall", "stall", "stall"}, find: "ops/compaction.md"},
	{name: "snake case", text: `lease_ttl_ms`, terms: []string{"lease", "ttl", "ms"}},
}

func TestTerms(t *testing.T) {
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			got := stages.Terms(tc.text)
			if len(got) == 0 && len(tc.terms) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.terms) {
				t.Errorf("Terms(%q) = %q, want %q", tc.text, got, tc.terms)
			}
		})
	}
}

func TestTermsBounded(t *testing.T) {
	big := strings.Repeat("compaction stall ", 100<<10/len("compaction stall "))
	if got := stages.Terms(big); len(got) != stages.MaxQueryTerms || got[0] != "compaction" || got[1] != "stall" || got[stages.MaxQueryTerms-1] != "stall" {
		t.Errorf("100 KB of two words: %d terms %q", len(got), got[:min(5, len(got))])
	}
	var b strings.Builder
	for i := 0; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, "w%d ", i)
	}
	got := stages.Terms(b.String())
	if len(got) != stages.MaxQueryTerms || got[0] != "w0" || got[stages.MaxQueryTerms-1] != fmt.Sprintf("w%d", stages.MaxQueryTerms-1) {
		t.Errorf("100 KB of distinct words: %d terms, first %q last %q; want the first MaxQueryTerms", len(got), got[0], got[len(got)-1])
	}
}

func TestMatchExprQuotesEveryTerm(t *testing.T) {
	cases := append([]string{strings.Repeat("x", 100<<10), strings.Repeat("w y ", 30<<10)}, func() []string {
		var out []string
		for _, tc := range hostile {
			out = append(out, tc.text)
		}
		return out
	}()...)
	for _, text := range cases {
		m := stages.MatchExpr(text)
		terms := stages.Terms(text)
		if len(terms) == 0 {
			if m != "" {
				t.Errorf("MatchExpr(%.40q) = %q, want empty: nothing to search", text, m)
			}
			continue
		}
		parts := strings.Split(m, " OR ")
		if len(parts) != len(terms) {
			t.Errorf("MatchExpr(%.40q) has %d parts for %d terms", text, len(parts), len(terms))
			continue
		}
		for i, p := range parts {
			if p != `"`+terms[i]+`"` {
				t.Errorf("MatchExpr(%.40q) part %d is %.40q, want the quoted term %.40q", text, i, p, terms[i])
			}
		}
	}
	if got, want := stages.MatchExpr("Compaction stall"), `"compaction" OR "stall"`; got != want {
		t.Errorf("MatchExpr = %s, want %s", got, want)
	}
}

// ftsVault holds the words the hostile queries are made of, so a search can
// show it found them as words.
var ftsVault = map[string]string{
	"ops/compaction.md": "# Compaction stall\n\nThe compaction stalled because the disk was full.\n",
	"ops/operators.md":  "# Operators\n\nSearch words that look like syntax: near, and, or, not. A title of foo. Someone typed drop table notes; nosuch column.\n",
	"intl/scripts.md":   "# Scripts\n\n東京 大阪 and Привет мир and مرحبا بالعالم.\n",
	"intl/marks.md":     "# Marks\n\nمَرْحَبًا and नमस्ते\n",
	"ops/other.md":      "# Other\n\nNothing to see here.\n",
}

// TestMatchExprRunsInFTS5 sends every sanitised expression to a real FTS5
// index: none may be a syntax error, and the words must be found. The raw
// text is sent too, to show the index would have refused the syntax.
func TestMatchExprRunsInFTS5(t *testing.T) {
	env := stagetest.Env(t, ftsVault)
	ctx := context.Background()
	id := noteIDs(t, stagetest.DB(t, env))
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			m := stages.MatchExpr(tc.text)
			if m != "" {
				hits, err := stagetest.DB(t, env).Keyword(ctx, index.KeywordQuery{Match: m, Limit: 10})
				if err != nil {
					t.Fatalf("FTS5 refused the sanitised %s: %v", m, err)
				}
				if tc.find != "" && !hasNote(hits, id[tc.find]) {
					t.Errorf("%s did not find %s", m, tc.find)
				}
			}
			if tc.raw {
				if _, err := stagetest.DB(t, env).Keyword(ctx, index.KeywordQuery{Match: tc.text, Limit: 10}); err == nil {
					t.Errorf("raw %q was accepted by FTS5: the case does not exercise the sanitiser", tc.text)
				}
			}
			// The stage itself: never an error, and no terms means no search.
			k := &stages.Keyword{}
			_ = k.Validate()
			st := stages.NewState(stages.Query{Text: tc.text})
			if err := k.Run(ctx, env, st); err != nil {
				t.Fatalf("keyword stage: %v", err)
			}
			if m == "" && (st.Ranking != nil || st.Steps[0].Info != "no searchable terms in the query") {
				t.Errorf("no terms, yet ranking %v info %q", st.Ranking, st.Steps[0].Info)
			}
		})
	}
}

func TestKeywordHugeQuery(t *testing.T) {
	env := stagetest.Env(t, ftsVault)
	ctx := context.Background()
	for name, text := range map[string]string{
		"100 KB word":           strings.Repeat("x", 100<<10),
		"100 KB of words":       strings.Repeat("compaction NEAR( \" ", 100<<10/18),
		"100 KB distinct words": strings.Repeat("a1 b2 c3 d4 e5 f6 g7 h8 i9 j10 k11 l12 m13 n14 o15 p16 q17 r18 s19 t20 ", 1500),
	} {
		k := &stages.Keyword{Limit: 5}
		st := stages.NewState(stages.Query{Text: text})
		if err := k.Run(ctx, env, st); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestKeywordScope(t *testing.T) {
	env := stagetest.Env(t, ftsVault)
	id := noteIDs(t, stagetest.DB(t, env))
	k := &stages.Keyword{}
	_ = k.Validate()
	st := stages.NewState(stages.Query{Text: "and", Filter: index.Filter{PathPrefix: "intl/"}})
	if err := k.Run(context.Background(), env, st); err != nil {
		t.Fatal(err)
	}
	// "and" is in ops/operators.md too, which the scope leaves out.
	got := map[int64]bool{}
	for _, it := range st.Ranking {
		got[it.NoteID] = true
	}
	if want := map[int64]bool{id["intl/scripts.md"]: true, id["intl/marks.md"]: true}; !reflect.DeepEqual(got, want) {
		t.Errorf("scoped search %+v, want the two intl/ notes %v", st.Ranking, want)
	}
}

func hasNote(hits []index.Hit, note int64) bool {
	for _, h := range hits {
		if h.NoteID == note {
			return true
		}
	}
	return false
}

func TestSnippet(t *testing.T) {
	filler := func(n int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }
	tests := []struct {
		name  string
		text  string
		terms []string
		n     int
		want  string // exact result, when set
		has   string // must be in the snippet
		lacks string // must not be
	}{
		{name: "short text whole, white space folded", text: "a  b\n\n c\t d", n: 100, want: "a b c d"},
		{name: "exactly n", text: "abcde fghij", n: 11, want: "abcde fghij"},
		{name: "empty", text: " \n\t ", n: 10, want: ""},
		{name: "window holding the term", text: filler(50, "pad") + " needle " + filler(50, "pad"), terms: []string{"needle"}, n: 40, has: "needle"},
		{name: "window holding most terms", text: "alpha " + filler(30, "pad") + " alpha beta gamma " + filler(30, "pad"), terms: []string{"alpha", "beta", "gamma"}, n: 30, has: "alpha beta gamma"},
		{name: "earliest of equal windows", text: filler(20, "pad") + " first " + filler(40, "pad") + " second " + filler(20, "pad"), terms: []string{"first", "second"}, n: 30, has: "first", lacks: "second"},
		{name: "terms match case-insensitively through Terms", text: filler(40, "pad") + " Needle, " + filler(40, "pad"), terms: stages.Terms("needle"), n: 30, has: "Needle,"},
		{name: "no terms: from the start", text: "start " + filler(60, "pad"), n: 20, has: "start"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := stages.Snippet(tc.text, tc.terms, tc.n)
			if n := utf8.RuneCountInString(got); n > tc.n {
				t.Errorf("%d runes, limit %d: %q", n, tc.n, got)
			}
			if tc.want != "" || tc.has == "" {
				if got != tc.want {
					t.Errorf("Snippet = %q, want %q", got, tc.want)
				}
			}
			if tc.has != "" && !strings.Contains(got, tc.has) {
				t.Errorf("Snippet = %q, want it to hold %q", got, tc.has)
			}
			if tc.lacks != "" && strings.Contains(got, tc.lacks) {
				t.Errorf("Snippet = %q, want it without %q", got, tc.lacks)
			}
		})
	}
}

// TestSnippetPrefixRuneSafe cuts text of every script at every length: the
// result is valid UTF-8, at most n runes, and folded.
func TestSnippetPrefixRuneSafe(t *testing.T) {
	texts := []string{
		strings.Repeat("compaction stalled because the disk was full ", 8),
		strings.Repeat("日本語のテキストです。", 30),                        // no spaces at all
		strings.Repeat("東京 大阪 名古屋 ", 20),                         // spaces between multi-byte words
		strings.Repeat("Привет мир ", 30),                        // two-byte runes
		strings.Repeat("🔥🚀 👩‍💻 ", 30),                            // four-byte runes and joiners
		strings.Repeat("ééé ", 5) + strings.Repeat("é", 200),     // one long multi-byte word
		strings.Repeat("a\u0301 e\u0301 ", 40),                   // combining marks
		"word " + strings.Repeat("x", 300) + " needle " + "tail", // a window that starts with an over-long word
	}
	for ti, text := range texts {
		terms := stages.Terms("needle stalled 大阪 мир")
		for n := 1; n <= 120; n++ {
			for name, got := range map[string]string{
				"Snippet": stages.Snippet(text, terms, n),
				"Prefix":  stages.Prefix(text, n),
			} {
				if !utf8.ValidString(got) {
					t.Fatalf("text %d, n %d: %s is not valid UTF-8: %q", ti, n, name, got)
				}
				if c := utf8.RuneCountInString(got); c > n {
					t.Fatalf("text %d, n %d: %s has %d runes: %q", ti, n, name, c, got)
				}
				if strings.Contains(got, "  ") || strings.ContainsAny(got, "\n\t") {
					t.Fatalf("text %d, n %d: %s not folded: %q", ti, n, name, got)
				}
			}
		}
	}
}

func TestPrefix(t *testing.T) {
	tests := []struct {
		text string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  folded \n white\tspace ", 100, "folded white space"},
		{"cut at the last space after half", 20, "cut at the last"},
		{"averyveryverylongword tail", 10, "averyveryv"}, // no space past half: cut mid-word
		{"ab cdefghijklmnop", 10, "ab cdefghi"},          // the only space is before half: keep n runes
		// The space sits at rune 3 but byte 6: a byte offset against a rune
		// count would cut this to "ééé", three runes of ten.
		{"ééé éééééééééééééé", 10, "ééé éééééé"},
		{"Привет мир и всё остальное", 12, "Привет мир"},
		{"", 5, ""},
	}
	for _, tc := range tests {
		if got := stages.Prefix(tc.text, tc.n); got != tc.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tc.text, tc.n, got, tc.want)
		}
	}
}
