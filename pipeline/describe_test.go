package pipeline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
)

// What the pipeline, /health and `vault-rag models` know of a stage comes
// from the stage itself (stages.Retriever, stages.ModelUser), never from a
// switch on its name.
func TestStagesDescribeThemselves(t *testing.T) {
	if got, want := pipeline.Retrievers(), []string{"hyde", "keyword", "vector"}; !slices.Equal(got, want) {
		t.Errorf("Retrievers() = %q, want %q", got, want)
	}
	if got, want := pipeline.StagesNeeding(models.RoleCrossEncoder), []string{"rerank"}; !slices.Equal(got, want) {
		t.Errorf("StagesNeeding(cross-encoder) = %q, want %q", got, want)
	}
	if got, want := pipeline.StagesNeeding(models.RoleEmbedder), []string{"feedback", "hyde", "keyword", "rerank", "vector"}; !slices.Equal(got, want) {
		t.Errorf("StagesNeeding(embedder) = %q, want %q", got, want)
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
