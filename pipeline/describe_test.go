package pipeline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// What the pipeline, /health and `vault-rag models` know of a stage comes
// from the stage itself (its registration, stages.Retriever,
// stages.ModelUser), never from a switch on its name.
func TestStagesDescribeThemselves(t *testing.T) {
	want := []string{"convex", "feedback", "hyde", "keyword", "recency", "rerank", "rrf", "vector"}
	if got := stages.Names(); !slices.Equal(got, want) {
		t.Errorf("stages.Names() = %q, want %q", got, want)
	}
	for _, name := range want {
		if st, ok := stages.New(name); !ok || st.Name() != name {
			t.Errorf("stages.New(%q) = %v, %v: want a stage of that name", name, st, ok)
		}
	}
	if st, ok := stages.New("keywrd"); ok {
		t.Errorf("stages.New(keywrd) = %v", st)
	}
	if got, want := pipeline.Retrievers(), []string{"hyde", "keyword", "vector"}; !slices.Equal(got, want) {
		t.Errorf("Retrievers() = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"stages:\n  - keyword: {}\n  - rrf: {}\n  - recency: {weight: 0.1}\n", nil},
		{"stages:\n  - keyword: {}\n  - vector: {}\n  - hyde: {}\n  - rrf: {}\n", []string{"index-emb"}},
		{"stages:\n  - vector: {}\n  - rerank: {}\n", []string{"index-emb", "ms-marco-MiniLM-L-6-v2"}},
		{"stages:\n  - keyword: {}\n  - rerank: {scorer: bi-encoder, model: other-emb}\n", []string{"other-emb"}},
		{"stages:\n  - vector: {}\n  - rerank: {scorer: cross-encoder, model: my-ce}\n", []string{"index-emb", "my-ce"}},
		{"stages:\n  - keyword: {}\n  - rrf: {}\n  - feedback: {rm3: true}\n  - rrf: {}\n", nil},
		{"stages:\n  - keyword: {}\n  - rrf: {}\n  - feedback: {rocchio: true}\n  - rrf: {}\n", []string{"index-emb"}},
	} {
		cfg, err := pipeline.Parse("x.yaml", []byte("name: x\n"+tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if got := pipeline.Needs(cfg, "index-emb"); !slices.Equal(got, tc.want) {
			t.Errorf("Needs(%s) = %q, want %q", strings.ReplaceAll(tc.src, "\n", " "), got, tc.want)
		}
	}
}
