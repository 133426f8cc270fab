package stages_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

func TestAnalyzeTerms(t *testing.T) {
	cases := []struct {
		text, list string
		want       []string
	}{
		{"how do I save my plugin settings", stages.StopwordsEnglish, []string{"save", "plugin", "settings"}},
		{"how do I save my plugin settings", stages.StopwordsNone, []string{"how", "do", "i", "save", "my", "plugin", "settings"}},
		// every word a stopword: nothing would be searched, so all are kept
		{"how do I", stages.StopwordsEnglish, []string{"how", "do", "i"}},
		// exact tokens split as Terms always did, and none of their parts is dropped
		{"what is FERR-4102", stages.StopwordsEnglish, []string{"ferr", "4102"}},
		{"where is lease_ttl_ms set", stages.StopwordsEnglish, []string{"lease", "ttl", "ms", "set"}},
		{"sort by file.mtime", stages.StopwordsEnglish, []string{"sort", "file", "mtime"}},
		{"--icon-size", stages.StopwordsEnglish, []string{"icon", "size"}},
		// repeats are kept (query term frequency)
		{"the cache and the cache", stages.StopwordsEnglish, []string{"cache", "cache"}},
		// contractions split into stopword pieces
		{"why doesn't it load", stages.StopwordsEnglish, []string{"load"}},
		{"", stages.StopwordsEnglish, nil},
		// the function-word list keeps what changes the question; NLTK's does not
		{"billed again after the retry", stages.StopwordsEnglish, []string{"billed", "again", "after", "retry"}},
		{"billed again after the retry", stages.StopwordsNLTK, []string{"billed", "retry"}},
		{"not working", stages.StopwordsNLTK, []string{"working"}},
	}
	for _, c := range cases {
		got := stages.AnalyzeTerms(c.text, c.list)
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("AnalyzeTerms(%q, %s) = %q, want %q", c.text, c.list, got, c.want)
		}
	}
}

func TestKeywordValidateAnalysis(t *testing.T) {
	k := &stages.Keyword{}
	if err := k.Validate(); err != nil {
		t.Fatal(err)
	}
	if k.Stopwords != stages.StopwordsNone || k.TitleWeight != 1 || k.Score != stages.ScoreChunk {
		t.Errorf("defaults = %q %v %q, want none 1 chunk", k.Stopwords, k.TitleWeight, k.Score)
	}
	for _, bad := range []*stages.Keyword{
		{Stopwords: "french"}, {TitleWeight: -1}, {TitleWeight: 1000}, {Score: "sum"},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", *bad)
		}
	}
}

// kwVault: one note whose title holds "lease" once, and one whose body says
// "lease" in a longer text, and a short chunk full of stopwords.
var kwVault = map[string]string{
	"a.md":   "# Lease\nThe renewal happens on a timer and nothing else is said here at any length at all today.\n",
	"b.md":   "# Timers\nA lease is held by the writer. The writer renews it.\n",
	"c.md":   "# How do I\nHow do I do it? How do I?\n",
	"d.md":   "# Many\n## One\nlease one\n## Two\nlease two\n## Three\nlease three\n",
	"e.md":   "# Other\nnothing relevant\n",
	"x/f.md": "# Filler\nwords words words\n",
}

func runKeyword(t *testing.T, env *stages.Env, k *stages.Keyword, text string) []stages.Item {
	t.Helper()
	if err := k.Validate(); err != nil {
		t.Fatal(err)
	}
	st := stages.NewState(stages.Query{Text: text})
	if err := k.Run(context.Background(), env, st); err != nil {
		t.Fatal(err)
	}
	return st.Ranking
}

func TestKeywordStopwordsAgainstIndex(t *testing.T) {
	env := stagetest.Env(t, kwVault)
	ids := noteIDs(t, stagetest.DB(t, env))
	// Without analysis the stopword-stuffed note wins a conversational query.
	plain := runKeyword(t, env, &stages.Keyword{}, "how do I renew a lease")
	if len(plain) == 0 || plain[0].NoteID != ids["c.md"] {
		t.Fatalf("plain first hit = %v, want c.md (%d)", plain, ids["c.md"])
	}
	got := runKeyword(t, env, &stages.Keyword{Stopwords: stages.StopwordsEnglish}, "how do I renew a lease")
	for _, it := range got {
		if it.NoteID == ids["c.md"] {
			t.Errorf("with stopwords dropped, c.md (stopwords only) is still listed: %v", got)
		}
	}
	// A query of stopwords alone still searches.
	if got := runKeyword(t, env, &stages.Keyword{Stopwords: stages.StopwordsEnglish}, "how do I"); len(got) == 0 || got[0].NoteID != ids["c.md"] {
		t.Errorf("all-stopword query = %v, want c.md first", got)
	}
}

func TestKeywordTitleWeightAndNoteScore(t *testing.T) {
	env := stagetest.Env(t, kwVault)
	ids := noteIDs(t, stagetest.DB(t, env))
	// Weighting the title column puts the note titled "Lease" first.
	got := runKeyword(t, env, &stages.Keyword{TitleWeight: 20}, "lease")
	if len(got) == 0 || got[0].NoteID != ids["a.md"] {
		t.Errorf("title_weight 20: first = %v, want a.md (%d)", got, ids["a.md"])
	}
	// Title weight 1 through the chunk-level query equals the default query.
	base := runKeyword(t, env, &stages.Keyword{}, "lease writer")
	hits, err := stagetest.DB(t, env).Keyword(context.Background(), index.KeywordQuery{Terms: stages.Terms("lease writer"), Limit: 1000, PerChunk: true})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	var chunkLevel []int64
	for _, h := range hits {
		if !seen[h.NoteID] {
			seen[h.NoteID] = true
			chunkLevel = append(chunkLevel, h.NoteID)
		}
	}
	var baseIDs []int64
	for _, it := range base {
		baseIDs = append(baseIDs, it.NoteID)
	}
	if !reflect.DeepEqual(baseIDs, chunkLevel) {
		t.Errorf("the per-chunk search at weight 1 orders notes %v, the per-note one %v", chunkLevel, baseIDs)
	}
	// Note score: d.md matches in three chunks and sums them.
	note := runKeyword(t, env, &stages.Keyword{Score: stages.ScoreNote}, "lease")
	if len(note) == 0 || note[0].NoteID != ids["d.md"] {
		t.Errorf("score note: first = %v, want d.md (%d)", note, ids["d.md"])
	}
	if _, err := stagetest.DB(t, env).Keyword(context.Background(), index.KeywordQuery{Terms: []string{"lease"}, TitleWeight: -1, Limit: 10, PerChunk: true}); err == nil {
		t.Error("a negative column weight was accepted")
	}
}

func TestSumByNote(t *testing.T) {
	hits := []index.Hit{
		{ChunkID: 10, NoteID: 1, Score: 5},
		{ChunkID: 20, NoteID: 2, Score: 4},
		{ChunkID: 21, NoteID: 2, Score: 3},
		{ChunkID: 30, NoteID: 3, Score: 2},
		{ChunkID: 40, NoteID: 4, Score: 2},
	}
	got := stages.SumByNote(hits, 3)
	want := []stages.Item{{NoteID: 2, ChunkID: 20, Score: 7}, {NoteID: 1, ChunkID: 10, Score: 5}, {NoteID: 3, ChunkID: 30, Score: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SumByNote = %v, want %v (ties by first position: 3 before 4)", got, want)
	}
	if got := stages.SumByNote(nil, 5); len(got) != 0 {
		t.Errorf("SumByNote(nil) = %v", got)
	}
}
