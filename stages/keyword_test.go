package stages_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/stages"
)

// TestClientTermsRare: with client_terms rare, a client term in more than
// common_share of the chunks is not searched, a rare one is, and the
// question's terms always are, common or not. In clientVault "every" and
// "slow" are each in two of the five notes, "compaction" in one; at
// common_share 0.3 the first two are common.
func TestClientTermsRare(t *testing.T) {
	env := clientVault(t)
	text := []string{"query", "keywords", "answer"}
	all := func() *stages.Keyword {
		return &stages.Keyword{Text: text, CommonShare: 0.3}
	}
	rare := func() *stages.Keyword {
		return &stages.Keyword{Text: text, CommonShare: 0.3, ClientTerms: stages.ClientTermsRare}
	}
	question := "why were writes slow"
	got := func(k *stages.Keyword, q stages.Query) []string {
		return paths(t, env, runStage(t, env, k, q).Ranking)
	}
	alone := got(all(), stages.Query{Text: question})
	if strings.Join(alone, ",") != "writes.md,cooking.md" {
		t.Fatalf("the question alone finds %v, want writes.md, cooking.md", alone)
	}

	common := stages.Query{Text: question, Keywords: "every"}
	if g := got(all(), common); !slices.Contains(g, "bread.md") || !slices.Contains(g, "music.md") {
		t.Fatalf("client_terms all with the keyword every: %v, want bread.md and music.md among them", g)
	}
	if g := got(rare(), common); !reflect.DeepEqual(g, alone) {
		t.Errorf("client_terms rare with the common keyword every: %v, want the question's own %v", g, alone)
	}

	mixed := stages.Query{Text: question, Keywords: "every", Answer: "a compaction stall"}
	g := got(rare(), mixed)
	if !slices.Contains(g, "compaction.md") {
		t.Errorf("client_terms rare with the rare answer term compaction: %v, want compaction.md among them", g)
	}
	if slices.Contains(g, "bread.md") || slices.Contains(g, "music.md") {
		t.Errorf("client_terms rare: %v holds a note only the common keyword every finds", g)
	}

	// "slow" is common, but it is the question's: searched, and counted
	// again when the client repeats it. Every client term kept, the search
	// is the one client_terms all runs, score for score.
	repeat := stages.Query{Text: question, Keywords: "slow compaction"}
	a, r := runStage(t, env, all(), repeat), runStage(t, env, rare(), repeat)
	if !reflect.DeepEqual(a.Ranking, r.Ranking) {
		t.Errorf("every client term kept: rare %v, all %v", r.Ranking, a.Ranking)
	}
	if g := paths(t, env, r.Ranking); !slices.Contains(g, "cooking.md") {
		t.Errorf("the question's common term slow is not searched: %v", g)
	}

	// A stage reading only the client's text: its common terms go too.
	if g := got(&stages.Keyword{Text: []string{"keywords"}, CommonShare: 0.3, ClientTerms: stages.ClientTermsRare}, stages.Query{Text: question, Keywords: "every compaction"}); strings.Join(g, ",") != "compaction.md" {
		t.Errorf("a keywords-only stage, client_terms rare: %v, want compaction.md alone", g)
	}

	// client_terms budget: "compaction" (one chunk) fits a budget of one
	// posting, "every" (two) does not; a budget every client term fits in is
	// client_terms all.
	budget := func(n int64) *stages.Keyword {
		return &stages.Keyword{Text: text, ClientTerms: stages.ClientTermsBudget, ClientPostings: n}
	}
	if g := got(budget(1), mixed); !slices.Contains(g, "compaction.md") || slices.Contains(g, "bread.md") || slices.Contains(g, "music.md") {
		t.Errorf("client_terms budget 1: %v, want compaction.md and no note only every finds", g)
	}
	if a, b := runStage(t, env, all(), mixed), runStage(t, env, budget(1000), mixed); !reflect.DeepEqual(a.Ranking, b.Ranking) {
		t.Errorf("client_terms budget 1000, every client term within it: %v, all %v", b.Ranking, a.Ranking)
	}
}

func TestClientTermsValidate(t *testing.T) {
	qa := []string{"query", "answer"}
	for _, tc := range []struct {
		stage    *stages.Keyword
		key, err string
	}{
		{&stages.Keyword{ClientTerms: "some", Text: qa}, "client_terms", `client_terms "some" is not all, rare or budget`},
		{&stages.Keyword{ClientTerms: "rare"}, "client_terms", "client_terms rare needs a text that reads the client's keywords or answer"},
		{&stages.Keyword{ClientTerms: "budget"}, "client_terms", "client_terms budget needs a text that reads the client's keywords or answer"},
		{&stages.Keyword{ClientTerms: "rare", Text: qa}, "", ""},
		{&stages.Keyword{ClientTerms: "all"}, "", ""},
		{&stages.Keyword{ClientTerms: "budget", Text: qa, ClientPostings: 500}, "", ""},
		{&stages.Keyword{ClientTerms: "budget", Text: qa, ClientPostings: -1}, "client_postings", "client_postings -1 is below 0"},
		{&stages.Keyword{ClientTerms: "rare", Text: qa, ClientPostings: 500}, "client_postings", "client_postings is client_terms budget's budget; client_terms is rare"},
	} {
		err := tc.stage.Validate()
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%+v: error %v, want %q", *tc.stage, err, tc.err)
		}
		var se *stages.SettingError
		if err != nil && (!errors.As(err, &se) || se.Key != tc.key) {
			t.Errorf("%+v: %v is not a setting error naming %s", *tc.stage, err, tc.key)
		}
	}
	k := &stages.Keyword{}
	if err := k.Validate(); err != nil || k.ClientTerms != stages.ClientTermsAll {
		t.Errorf("default client_terms %q (%v), want all", k.ClientTerms, err)
	}
	b := &stages.Keyword{ClientTerms: "budget", Text: qa}
	if err := b.Validate(); err != nil || b.ClientPostings != stages.DefaultClientPostings {
		t.Errorf("client_terms budget: client_postings %d (%v), want the default %d", b.ClientPostings, err, stages.DefaultClientPostings)
	}
}
