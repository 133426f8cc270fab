package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
)

// The binary vector search finds what the exact KNN finds on the demo vault,
// embedded with the real default model: at the vector stage's own setting,
// and at a strict one that rescores only 80 of its 170 chunks.
func TestBinaryRecallDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds the demo vault with the real model")
	}
	ctx := context.Background()
	settings := models.SettingsFrom(os.Getenv)
	reg, err := models.NewRegistry(settings.DataDir, settings.Runtime)
	if err != nil {
		t.Skipf("ONNX Runtime: %v", err)
	}
	defer reg.Close()
	emb, err := reg.Embedder(ctx, "")
	if errors.Is(err, models.ErrNotInstalled) {
		t.Skipf("%v; run `make setup`", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	demo, err := eval.LoadDemo("..")
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "demo.db")
	if _, err := eval.EnsureIndex(ctx, emb, demo.VaultPath, dbPath, t.Logf); err != nil {
		t.Fatal(err)
	}
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var qvs [][]float32
	for _, q := range demo.Queries {
		v, err := emb.EmbedQuery(ctx, q.Text)
		if err != nil {
			t.Fatal(err)
		}
		qvs = append(qvs, v)
	}
	for _, c := range []struct {
		k, candidates int
		bar           float64
	}{
		{160, index.VectorQuery{}.Rescored(160), 0.99},
		{10, 80, 0.95},
	} {
		r, err := VectorRecall(ctx, db, qvs, c.k, c.candidates, 10)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("k=%d, %d candidates: recall@10 notes %.4f, chunks %.4f over %d queries", c.k, c.candidates, r.Notes, r.Chunks, r.Queries)
		if r.Queries != len(demo.Queries) || r.Notes < c.bar || r.Chunks < c.bar {
			t.Errorf("k=%d, %d candidates: recall@10 notes %.4f, chunks %.4f; the bar is %.2f", c.k, c.candidates, r.Notes, r.Chunks, c.bar)
		}
	}
}

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		want, got []int64
		share     float64
	}{
		{[]int64{1, 2, 3, 4}, []int64{4, 3, 2, 1}, 1},
		{[]int64{1, 2, 3, 4}, []int64{1, 2, 9, 8}, 0.5},
		{[]int64{1, 2}, nil, 0},
		{nil, []int64{1}, 1},
	} {
		if got := overlap(tc.want, tc.got); got != tc.share {
			t.Errorf("overlap(%v, %v) = %v, want %v", tc.want, tc.got, got, tc.share)
		}
	}
	hits := []index.Hit{{ChunkID: 10, NoteID: 1}, {ChunkID: 11, NoteID: 1}, {ChunkID: 20, NoteID: 2}, {ChunkID: 30, NoteID: 3}}
	if got := firstNotes(hits, 2); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("firstNotes = %v, want [1 2]", got)
	}
	if got := firstChunks(hits, 2); len(got) != 2 || got[0] != 10 || got[1] != 11 {
		t.Errorf("firstChunks = %v, want [10 11]", got)
	}
}
