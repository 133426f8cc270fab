package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/pipeline"
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
