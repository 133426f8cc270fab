package stages_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

// clientVault is a small vault where the question's words and the client's
// find different notes: the question's words are in writes.md (and "slow" in
// cooking.md), the words a client would guess ("compaction stall") only in
// compaction.md, and an off-topic client's in bread.md.
func clientVault(t *testing.T) *stages.Env {
	return stagetest.Env(t, map[string]string{
		"writes.md":     "# writes\n\nWhy were writes slow? Nobody knew at first.\n",
		"compaction.md": "# compaction\n\nA compaction stall blocks the memtable flush and ingestion backs up.\n",
		"cooking.md":    "# cooking\n\nSlow cooking recipes.\n",
		"bread.md":      "# bread\n\nFeed the sourdough starter flour and water every day.\n",
		"music.md":      "# music\n\nScales and arpeggios every morning.\n",
	})
}

func runStage(t *testing.T, env *stages.Env, s stages.Stage, q stages.Query) *stages.State {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	st := stages.NewState(q)
	if err := s.Run(context.Background(), env, st); err != nil {
		t.Fatal(err)
	}
	return st
}

func paths(t *testing.T, env *stages.Env, items []stages.Item) []string {
	t.Helper()
	ids := noteIDs(t, stagetest.DB(t, env))
	byID := map[int64]string{}
	for p, id := range ids {
		byID[id] = p
	}
	var out []string
	for _, it := range items {
		out = append(out, byID[it.NoteID])
	}
	return out
}

func TestComposeSources(t *testing.T) {
	q := stages.Query{Text: "why slow", Keywords: "compaction stall", Answer: "A stall blocked writes."}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"query"}, "why slow"},
		{[]string{"query", "keywords"}, "why slow\ncompaction stall"},
		{[]string{"answer", "query"}, "A stall blocked writes.\nwhy slow"},
		{[]string{"keywords"}, "compaction stall"},
	} {
		if got := q.Compose(tc.names); got != tc.want {
			t.Errorf("Compose(%v) = %q, want %q", tc.names, got, tc.want)
		}
	}
	plain := stages.Query{Text: "why slow"}
	if got := plain.Compose([]string{"query", "keywords", "answer"}); got != "why slow" {
		t.Errorf("without expansions Compose = %q, want the query alone", got)
	}
	if got := plain.Compose([]string{"answer"}); got != "" {
		t.Errorf("an answer-only stage without an answer composes %q, want nothing", got)
	}
}

func TestTextSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		stage stages.Stage
		err   string
	}{
		{&stages.Keyword{Text: []string{"query", "kewords"}}, `text "kewords" is not one of query, keywords, answer`},
		{&stages.Keyword{Text: []string{"query", "query"}}, `text "query" is named twice`},
		{&stages.Vector{EmbedAs: "document"}, `embed_as "document" is neither query nor passage`},
		{&stages.Vector{Vet: 10}, "vet 10 needs a text that reads the client's keywords or answer"},
		{&stages.Keyword{Text: []string{"query", "keywords"}, Vet: -1}, "vet -1 is outside 0..1000"},
		{&stages.Keyword{Text: []string{"query", "keywords"}, Vet: 10}, ""},
	} {
		err := tc.stage.Validate()
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%#v: error %v, want %q", tc.stage, err, tc.err)
		}
	}
	k := &stages.Keyword{}
	if err := k.Validate(); err != nil || !reflect.DeepEqual(k.Text, []string{"query"}) || k.List != "keyword" {
		t.Errorf("defaults: text %v, list %q, err %v", k.Text, k.List, err)
	}
}

// TestStagesReadTheirTexts: a keyword stage searches the client's keywords
// only when its text names them, and a list name sets the list's name.
func TestStagesReadTheirTexts(t *testing.T) {
	env := clientVault(t)
	q := stages.Query{Text: "why were writes slow", Keywords: "compaction stall memtable"}
	plain := runStage(t, env, &stages.Keyword{}, q)
	withKW := runStage(t, env, &stages.Keyword{Text: []string{"query", "keywords"}, List: "kw-client"}, q)
	if got := paths(t, env, plain.Ranking); strings.Join(got, ",") != "writes.md,cooking.md" {
		t.Errorf("query alone: %v, want writes.md, cooking.md", got)
	}
	if got := paths(t, env, withKW.Ranking); !slices.Contains(got, "compaction.md") {
		t.Errorf("query + keywords: %v, want compaction.md among them", got)
	}
	if info := withKW.Steps[0].Info; !strings.Contains(info, "the client's keywords read as sent") {
		t.Errorf("query + keywords: info %q does not say the client's keywords were read", info)
	}
	if info := plain.Steps[0].Info; strings.Contains(info, "client") {
		t.Errorf("query alone: info %q speaks of the client's text it did not read", info)
	}
	if withKW.Lists[0].Stage != "kw-client" {
		t.Errorf("list named %q, want kw-client", withKW.Lists[0].Stage)
	}
	onlyKW := runStage(t, env, &stages.Keyword{Text: []string{"keywords"}}, stages.Query{Text: "why were writes slow"})
	if len(onlyKW.Ranking) != 0 || !strings.Contains(onlyKW.Steps[0].Info, "no keywords sent") {
		t.Errorf("a keywords-only stage without keywords: %d items, info %q", len(onlyKW.Ranking), onlyKW.Steps[0].Info)
	}
}

// TestVetSetsAsideAnOffTopicClient: with vet, the client's texts are read
// when its answer is about the question (as close to it as the question's
// own nearest notes) and set aside when it is about something else; the
// decision is made once per request.
func TestVetSetsAsideAnOffTopicClient(t *testing.T) {
	env := clientVault(t)
	stage := func() *stages.Keyword {
		// Held against the question's second nearest note, cooking.md,
		// which shares one word with it.
		return &stages.Keyword{Text: []string{"query", "keywords"}, Vet: 2}
	}
	onTopic := stages.Query{Text: "why were writes slow", Keywords: "compaction stall memtable", Answer: "writes were slow because of a compaction stall"}
	st := runStage(t, env, stage(), onTopic)
	if got := paths(t, env, st.Ranking); !slices.Contains(got, "compaction.md") {
		t.Errorf("on-topic client: %v, want compaction.md among them", got)
	}
	if info := st.Steps[0].Info; !strings.Contains(info, "kept") {
		t.Errorf("on-topic client: info %q does not say the text was kept", info)
	}
	offTopic := stages.Query{Text: "why were writes slow", Keywords: "sourdough starter flour", Answer: "feed the sourdough starter flour every day"}
	st = runStage(t, env, stage(), offTopic)
	if got := paths(t, env, st.Ranking); strings.Join(got, ",") != "writes.md,cooking.md" {
		t.Errorf("off-topic client: %v, want the question's own result", got)
	}
	if info := st.Steps[0].Info; !strings.Contains(info, "set aside") {
		t.Errorf("off-topic client: info %q does not say the text was set aside", info)
	}
	// Once per request: stages on the state and on states forked from it
	// get the verdict without embedding or searching again.
	counted := &countingModels{}
	env = stages.NewEnv(stagetest.DB(t, env), counted)
	fork := st.Fork()
	for _, s := range []*stages.State{st, fork} {
		ok, _, err := s.ClientTrusted(context.Background(), env, 2)
		if err != nil || ok {
			t.Errorf("ClientTrusted again: %v, %v; want the cached false", ok, err)
		}
	}
	if n := counted.queries.Load(); n != 0 {
		t.Errorf("asking again embedded %d texts, want 0", n)
	}
	// Without client texts there is nothing to vet.
	st = runStage(t, env, stage(), stages.Query{Text: "why were writes slow"})
	if info := st.Steps[0].Info; info != "" {
		t.Errorf("no client texts: info %q, want none", info)
	}
}
