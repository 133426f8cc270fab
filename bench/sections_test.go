package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// --only keeps the parts of a full run its section names, and nothing else.
func TestSectionParts(t *testing.T) {
	for _, tc := range []struct {
		only string
		want parts
	}{
		{"", parts{reindex: true, throughput: true, latency: true, recall: true, rerank: true, first: true}},
		{"reindex", parts{reindex: true}},
		{"throughput", parts{throughput: true}},
		{"rerank", parts{rerank: true}},
		{"latency", parts{latency: true}},
		{"first-answer", parts{first: true}},
		{"recall", parts{recall: true}},
	} {
		got, err := sectionParts(tc.only)
		if err != nil || got != tc.want {
			t.Errorf("sectionParts(%q) = %+v, %v; want %+v", tc.only, got, err, tc.want)
		}
	}
	if _, err := sectionParts("recal"); err == nil || !strings.Contains(err.Error(), `no section "recal" (reindex, throughput, rerank, latency, first-answer, recall)`) {
		t.Errorf("sectionParts(\"recal\"): %v", err)
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
