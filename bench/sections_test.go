package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// --only runs the one section it names; no --only runs them all, in the
// table's order; a name that is no section is refused with the names there
// are.
func TestChosen(t *testing.T) {
	all, err := chosen("")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range all {
		names = append(names, s.name)
	}
	want := []string{"listing", "reindex", "first-answer", "throughput", "latency", "rerank", "recall"}
	if !slices.Equal(names, want) || !slices.Equal(Sections(), want) {
		t.Errorf("a full run: %q (Sections %q), want %q", names, Sections(), want)
	}
	for _, name := range want {
		got, err := chosen(name)
		if err != nil || len(got) != 1 || got[0].name != name || got[0].run == nil {
			t.Errorf("chosen(%q) = %v, %v; want that section alone", name, got, err)
		}
	}
	if _, err := chosen("recal"); err == nil || !strings.Contains(err.Error(), `no section "recal" (listing, reindex, first-answer, throughput, latency, rerank, recall)`) {
		t.Errorf("chosen(\"recal\"): %v", err)
	}
}

// The models the sections time come from the manifest: the default embedder
// and the fp32 original it was quantized from; the default cross-encoder and
// its two cost stand-ins.
func TestSectionModels(t *testing.T) {
	re, err := reindexModels()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{models.DefaultEmbedder, "bge-small-en-v1.5"}; !slices.Equal(re, want) {
		t.Errorf("reindex models %q, want %q", re, want)
	}
	rr, err := rerankModels()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{models.DefaultCrossEncoder, "all-MiniLM-L6-v2-standin", "all-MiniLM-L6-v2-q-standin"}; !slices.Equal(rr, want) {
		t.Errorf("rerank models %q, want %q", rr, want)
	}
}

// TestStandInExpansions: every request gets keywords and an answer of the
// client's mean size, made of the questions' words, its own text untouched.
func TestStandInExpansions(t *testing.T) {
	reqs := []pipeline.Request{{Text: "why were writes slow"}, {Text: "feeding a sourdough starter"}}
	got := withStandInExpansions(reqs)
	if len(got) != len(reqs) {
		t.Fatalf("%d requests, want %d", len(got), len(reqs))
	}
	vocab := strings.Fields(reqs[0].Text + " " + reqs[1].Text)
	for i, r := range got {
		if r.Text != reqs[i].Text {
			t.Errorf("request %d: text %q changed to %q", i, reqs[i].Text, r.Text)
		}
		kw, ans := strings.Fields(r.Keywords), strings.Fields(r.Answer)
		if len(kw) != standInKeywords || len(ans) != standInAnswer {
			t.Errorf("request %d: %d keywords and %d answer words, want %d and %d", i, len(kw), len(ans), standInKeywords, standInAnswer)
		}
		for _, w := range append(kw, ans...) {
			if !slices.Contains(vocab, w) {
				t.Errorf("request %d: word %q is not one of the questions'", i, w)
			}
		}
	}
	if reqs[0].Keywords != "" {
		t.Error("the requests given were changed")
	}
}

// TestEveryClientTerm: shipping's keyword stage holds the client's terms to a
// postings budget; the variant the bench times beside it searches them all,
// and shipping itself is left as it was.
func TestEveryClientTerm(t *testing.T) {
	ship, err := pipeline.Find("..", "shipping")
	if err != nil {
		t.Fatal(err)
	}
	every, ok := everyClientTerm(ship)
	if !ok {
		t.Fatal("shipping: no keyword stage with client_terms budget")
	}
	for i, s := range every.Stages {
		k, is := s.(*stages.Keyword)
		if !is {
			if s != ship.Stages[i] {
				t.Errorf("stage %d (%s) replaced", i, s.Name())
			}
			continue
		}
		if k.ClientTerms != stages.ClientTermsAll || k.ClientPostings != 0 {
			t.Errorf("the variant's keyword stage: client_terms %s, client_postings %d", k.ClientTerms, k.ClientPostings)
		}
		if orig := ship.Stages[i].(*stages.Keyword); orig.ClientTerms != stages.ClientTermsBudget || orig.ClientPostings != stages.DefaultClientPostings {
			t.Errorf("shipping changed: client_terms %s, client_postings %d", orig.ClientTerms, orig.ClientPostings)
		}
	}
	hybrid, err := pipeline.Find("..", "hybrid")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := everyClientTerm(hybrid); ok {
		t.Error("hybrid has no budget, yet a variant was made")
	}
}
