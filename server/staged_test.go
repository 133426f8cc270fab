package server

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/vault-rag/vault-rag/index"
)

// heldEmbedder holds every embedding call until released: the test looks at
// a first build between its keyword index and its vectors.
type heldEmbedder struct {
	index.Embedder
	called  chan struct{}
	release chan struct{}
}

func (h *heldEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case h.called <- struct{}{}:
	default:
	}
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.Embedder.EmbedPassages(ctx, texts)
}

// TestSearchBeforeEmbeddingEnds: a server started on a vault with no index
// answers vault_search and vault_list as soon as the first build has put the
// keyword index in place, while embedding is still held, and says how far
// the vectors are in the answer and in /health; once the embedding ends, the
// coverage is complete.
func TestSearchBeforeEmbeddingEnds(t *testing.T) {
	vault := tinyVault(t)
	db := filepath.Join(t.TempDir(), "vault.db")
	held := &heldEmbedder{called: make(chan struct{}, 1), release: make(chan struct{})}
	s := newServer(t, func(o *Options) {
		o.VaultPath, o.DBPath = vault, db
		o.wrapEmbedder = func(e index.Embedder) index.Embedder { held.Embedder = e; return held }
	})
	c := connectStdio(t, s)
	<-held.called // the keyword index is in place: embedding has begun

	var res struct {
		searchOut
		Vectors Coverage `json:"vectors"`
	}
	callOK(t, c, ToolSearch, map[string]any{"query": "idempotency"}, &res)
	if len(res.Notes) == 0 || res.Notes[0].Path != "knowledge/idempotency.md" {
		t.Errorf("search while embedding: %+v, want the idempotency note first", res.Notes)
	}
	if res.Vectors.Chunks == 0 || res.Vectors.Embedded != 0 {
		t.Errorf("search while embedding says vectors %+v, want 0 of the chunks", res.Vectors)
	}
	var list listOut
	callOK(t, c, ToolList, nil, &list)
	if list.Total != 2 {
		t.Errorf("list while embedding: %d notes, want 2", list.Total)
	}
	h := s.Health(context.Background())
	if h.Status == StatusError || h.Vectors == nil || h.Vectors.Complete() || h.Notes != 2 {
		t.Errorf("health while embedding: status %s, vectors %+v, notes %d", h.Status, h.Vectors, h.Notes)
	}

	close(held.release)
	if _, isErr := call(t, c, ToolReindex, nil); isErr { // waits for the first build
		t.Fatal("reindex failed")
	}
	var after SearchResult
	callOK(t, c, ToolSearch, map[string]any{"query": "idempotency"}, &after)
	if after.Vectors != nil {
		t.Errorf("search after the build says vectors %+v; once every chunk has its vector the answer leaves them out", after.Vectors)
	}
}
