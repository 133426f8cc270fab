package pipeline_test

import (
	"testing"

	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

const tol = pipeline.ScoreTolerance

func TestNearTies(t *testing.T) {
	item := func(id int64, score float64) stages.Item { return stages.Item{NoteID: id, Score: score} }
	steps := []stages.Step{
		{Stage: "vector", Items: []stages.Item{item(1, 0.9), item(2, 0.9-tol/3), item(3, 0.8), item(4, 0.8)}, Cut: &stages.Item{NoteID: 5, Score: 0.8 - tol/2}},
		{Stage: "keyword", SameOnEveryCPU: true, Items: []stages.Item{item(6, 12.5), item(7, 12.5-tol/10)}},
		{Stage: "rrf", SameOnEveryCPU: true, Items: []stages.Item{item(1, 0.0325), item(3, 0.0325-tol/10)}},
		{Stage: "rerank", Items: []stages.Item{item(8, 1.5), item(9, 1.4)}},
	}
	got := pipeline.NearTies(steps, tol)
	// 1–2 inside the vector list, 4–5 across its cut; 3–4 are exactly equal
	// (equal inputs, equal everywhere); keyword and rrf are exact, so their
	// close scores are real; rerank's gap is wide.
	want := []pipeline.NearTie{{Stage: "vector", Rank: 1, A: 1, B: 2}, {Stage: "vector", Rank: 4, A: 4, B: 5}}
	if len(got) != len(want) {
		t.Fatalf("near-ties %+v, want %+v", got, want)
	}
	for i := range want {
		g := got[i]
		if g.Stage != want[i].Stage || g.Rank != want[i].Rank || g.A != want[i].A || g.B != want[i].B || g.Gap <= 0 || g.Gap >= tol {
			t.Errorf("near-tie %d: %+v, want %+v with a gap in (0, tol)", i, g, want[i])
		}
	}
	if tied := pipeline.TiedNotes(got); len(tied) != 4 || !tied[1] || !tied[2] || !tied[4] || !tied[5] {
		t.Errorf("tied notes %v, want 1, 2, 4, 5", tied)
	}
}

func TestTolerance(t *testing.T) {
	m := models.Manifest{Models: []models.Spec{
		{Name: "emb-q", Role: "embedder", ScoreTolerance: 0.002},
		{Name: "emb", Role: "embedder"},
		{Name: "ce", Role: "cross-encoder", ScoreTolerance: 0.01},
	}}
	for _, tc := range []struct {
		src, index string
		want       float64
	}{
		{"stages:\n  - keyword: {}\n", "emb-q", pipeline.ScoreTolerance},            // bm25 only: the default
		{"stages:\n  - keyword: {}\n  - vector: {}\n  - rrf: {}\n", "emb-q", 0.002}, // the embedder's
		{"stages:\n  - vector: {}\n", "emb", pipeline.ScoreTolerance},               // a model without one
		{"stages:\n  - vector: {}\n  - rerank: {model: ce}\n", "emb-q", 0.01},       // the noisiest model
	} {
		cfg, err := pipeline.Parse("x.yaml", []byte("name: x\n"+tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if got := pipeline.Tolerance(cfg, m, tc.index); got != tc.want {
			t.Errorf("Tolerance(%q, index %s) = %g, want %g", tc.src, tc.index, got, tc.want)
		}
	}
}
