package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// Recall says how much of the exact KNN the binary path finds.
type Recall struct {
	Queries int
	Chunks  float64 // mean share of the exact n nearest chunks in the binary path's n nearest
	Notes   float64 // the same over the first n distinct notes (what the vector stage returns)
}

// VectorRecall runs each query vector through the exact KNN and the binary
// path at depth k (the vector stage's first rung is 4 × its limit) with the
// given number of rescored candidates, and compares their first n results.
func VectorRecall(ctx context.Context, db *index.DB, qvs [][]float32, k, candidates, n int) (Recall, error) {
	var r Recall
	for _, qv := range qvs {
		exact, err := db.Vector(ctx, index.VectorQuery{Vector: qv, Mode: index.Exact, K: k})
		if err != nil {
			return r, err
		}
		bin, err := db.Vector(ctx, index.VectorQuery{Vector: qv, Mode: index.Binary, K: k, Candidates: candidates})
		if err != nil {
			return r, err
		}
		r.Chunks += overlap(firstChunks(exact.Hits, n), firstChunks(bin.Hits, n))
		r.Notes += overlap(firstNotes(exact.Hits, n), firstNotes(bin.Hits, n))
		r.Queries++
	}
	if r.Queries > 0 {
		r.Chunks /= float64(r.Queries)
		r.Notes /= float64(r.Queries)
	}
	return r, nil
}

func firstChunks(hs []index.Hit, n int) []int64 {
	var out []int64
	for _, h := range hs[:min(n, len(hs))] {
		out = append(out, h.ChunkID)
	}
	return out
}

func firstNotes(hs []index.Hit, n int) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, h := range hs {
		if len(out) == n {
			break
		}
		if !seen[h.NoteID] {
			seen[h.NoteID] = true
			out = append(out, h.NoteID)
		}
	}
	return out
}

// overlap is |want ∩ got| / |want|; an empty want counts as fully found.
func overlap(want, got []int64) float64 {
	if len(want) == 0 {
		return 1
	}
	in := map[int64]bool{}
	for _, g := range got {
		in[g] = true
	}
	n := 0
	for _, w := range want {
		if in[w] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// realRecall measures the binary first pass on real embeddings at scale: a
// generated vault of n notes embedded with emb (once; the index is kept in
// work for later runs), searched at the vector stage's first rung (k = 160,
// shipping's limit 40 × 4) with several oversampling factors, each with the
// first pass's latency and the exact KNN's beside it. The queries are note
// titles, alone and with stand-in client expansions (what a caller sends).
func realRecall(ctx context.Context, res *Results, emb *models.Embedder, work string, n, queries int, logf func(string, ...any)) error {
	v, err := genVault(ctx, work, n, logf)
	if err != nil {
		return err
	}
	dataset := fmt.Sprintf("gen-%d", n)
	dbPath := eval.IndexPath(work, dataset, emb.Name())
	t0 := time.Now()
	if _, err := eval.EnsureIndex(ctx, emb, v, dbPath, logf); err != nil {
		return err
	}
	logf("%s embedded with %s in %s", dataset, emb.Name(), time.Since(t0).Round(time.Second))
	titles, err := scaleQueries(ctx, dbPath, queries)
	if err != nil {
		return err
	}
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	total, err := db.ChunkCount(ctx)
	if err != nil {
		return err
	}
	reqs := make([]pipeline.Request, len(titles))
	for i, q := range titles {
		reqs[i] = pipeline.Request{Text: q}
	}
	for _, set := range []struct {
		name  string
		texts []string
	}{{"titles", titles}, {"titles +client", composed(withStandInExpansions(reqs))}} {
		var qvs [][]float32
		for _, q := range set.texts {
			qv, err := emb.EmbedQuery(ctx, q)
			if err != nil {
				return err
			}
			qvs = append(qvs, qv)
		}
		exact, err := timeSearch(qvs, func(qv []float32) error {
			_, err := db.Vector(ctx, index.VectorQuery{Vector: qv, Mode: index.Exact, K: realRecallK})
			return err
		})
		if err != nil {
			return err
		}
		note := fmt.Sprintf("%d queries (%s), %s vectors, %d chunks, k %d", len(qvs), set.name, emb.Name(), total, realRecallK)
		res.add("recall at scale", "exact KNN p50, "+set.name, dataset, measure.Millis(exact), "ms", note)
		for _, over := range []int{2, 4, index.DefaultOversample, 16} {
			c := index.VectorQuery{Oversample: over}.Rescored(realRecallK)
			r, err := VectorRecall(ctx, db, qvs, realRecallK, c, 10)
			if err != nil {
				return err
			}
			p50, err := timeSearch(qvs, func(qv []float32) error {
				_, err := db.Vector(ctx, index.VectorQuery{Vector: qv, Mode: index.Binary, K: realRecallK, Candidates: c})
				return err
			})
			if err != nil {
				return err
			}
			name := fmt.Sprintf("%s, oversample %d (%d candidates)", set.name, over, c)
			res.add("recall at scale", "recall@10 notes, "+name, dataset, r.Notes, "", "")
			res.add("recall at scale", "recall@10 chunks, "+name, dataset, r.Chunks, "", "")
			res.add("recall at scale", "binary pass p50, "+name, dataset, measure.Millis(p50), "ms", "")
			logf("recall at scale %s %s: notes %.4f, chunks %.4f, p50 %.2f ms", dataset, name, r.Notes, r.Chunks, measure.Millis(p50))
		}
	}
	return nil
}

// realRecallK is the depth realRecall searches at: the vector stage's first
// rung for shipping's limit of 40.
const realRecallK = 160

// composed is each request's text with its stand-in expansions, in the order
// shipping's vector stage composes them (query, answer, keywords).
func composed(reqs []pipeline.Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = stages.Query{Text: r.Text, Keywords: r.Keywords, Answer: r.Answer}.Compose([]string{stages.SourceQuery, stages.SourceAnswer, stages.SourceKeywords})
	}
	return out
}

// timeSearch runs search on every vector once (after one untimed run) and
// returns the median time.
func timeSearch(qvs [][]float32, search func([]float32) error) (time.Duration, error) {
	if len(qvs) == 0 {
		return 0, nil
	}
	if err := search(qvs[0]); err != nil {
		return 0, err
	}
	ds := make([]time.Duration, 0, len(qvs))
	for _, qv := range qvs {
		t0 := time.Now()
		if err := search(qv); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(t0))
	}
	return measure.Percentile(ds, 50), nil
}
