package stages_test

import (
	"errors"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vault-rag/vault-rag/stages"
)

// The rerank stage's passage and scorer refuse an unknown word while they
// are decoded, with the message Validate gives the same word set in Go.
func TestRerankChoicesDecode(t *testing.T) {
	var r stages.Rerank
	if err := yaml.Unmarshal([]byte("passage: window\nscorer: bi-encoder\n"), &r); err != nil {
		t.Fatal(err)
	}
	if r.Passage != stages.PassageWindow || r.Scorer != stages.ScorerBiEncoder {
		t.Errorf("decoded %+v, want the window passage and the bi-encoder", r)
	}
	for _, tc := range []struct {
		src, key string
		inGo     stages.Rerank
	}{
		{"passage: page\n", "passage", stages.Rerank{Passage: "page"}},
		{"scorer: llm\n", "scorer", stages.Rerank{Scorer: "llm"}},
	} {
		var got stages.Rerank
		err := yaml.Unmarshal([]byte(tc.src), &got)
		var se *stages.SettingError
		if !errors.As(err, &se) || se.Key != tc.key {
			t.Errorf("%q: error %#v, want a *stages.SettingError for %s", tc.src, err, tc.key)
			continue
		}
		if got != (stages.Rerank{}) {
			t.Errorf("%q: the refused word was kept: %+v", tc.src, got)
		}
		if verr := tc.inGo.Validate(); verr == nil || verr.Error() != err.Error() {
			t.Errorf("%q: decoding says %q, Validate %v", tc.src, err, verr)
		}
	}
}
