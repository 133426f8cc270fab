package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/measure"
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
		exact, err := db.Vector(ctx, index.VectorQuery{Vector: qv, Mode: index.VectorExact, K: k})
		if err != nil {
			return r, err
		}
		bin, err := db.Vector(ctx, index.VectorQuery{Vector: qv, Mode: index.VectorBinary, K: k, Candidates: candidates})
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

// recallFigures measures the binary vector search against the exact KNN on
// the index's own vectors: at the vector stage's default (first rung k = 160,
// 8 × 160 candidates) and at a strict setting (k = 10, MinCandidates), which
// on a small collection is the one that examines only a part of it.
func (r *runner) recallFigures(ctx context.Context, emb stages.Embedder, dataset, dbPath string, queries []string) error {
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if emb.Name() != db.Embedder() {
		return fmt.Errorf("recall on %s: the index was embedded with %s, the queries with %s", dataset, db.Embedder(), emb.Name())
	}
	var qvs [][]float32
	for _, q := range queries {
		v, err := emb.EmbedQuery(ctx, q)
		if err != nil {
			return err
		}
		qvs = append(qvs, v)
	}
	total, err := db.ChunkCount(ctx)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("%d queries, %s vectors, %d chunks", len(qvs), db.Embedder(), total)
	for _, c := range []struct {
		name          string
		k, candidates int
	}{
		{"default: k=160, 1280 candidates", 160, index.VectorQuery{}.Rescored(160)},
		{fmt.Sprintf("strict: k=10, %d candidates", index.MinCandidates), 10, index.VectorQuery{Oversample: 1}.Rescored(10)},
	} {
		rc, err := VectorRecall(ctx, db, qvs, c.k, c.candidates, 10)
		if err != nil {
			return err
		}
		r.res.add("recall", "binary vs exact KNN recall@10 notes, "+c.name, dataset, rc.Notes, "", note)
		r.res.add("recall", "binary vs exact KNN recall@10 chunks, "+c.name, dataset, rc.Chunks, "", "")
		r.logf("recall %s %s: notes %.4f, chunks %.4f", dataset, c.name, rc.Notes, rc.Chunks)
	}
	return nil
}

// recallAtScale measures the binary first pass on real embeddings at scale:
// a generated vault of RecallNotes notes embedded with o.Embedder (once; the
// index is kept in the work folder for later runs), searched at the vector stage's first rung (k = 160,
// shipping's limit 40 × 4) with several oversampling factors, each with the
// first pass's latency and the exact KNN's beside it. The queries are note
// titles, alone and with stand-in client expansions (what a caller sends).
// It is the recall section, and runs when RecallNotes is above 0.
func (r *runner) recallAtScale(ctx context.Context) error {
	n := r.o.RecallNotes
	if n <= 0 {
		return nil
	}
	emb, err := r.embedder(ctx)
	if err != nil {
		return err
	}
	v, err := r.genVault(ctx, n)
	if err != nil {
		return err
	}
	dataset := fmt.Sprintf("gen-%d", n)
	dbPath := eval.IndexPath(r.work, dataset, emb.Name())
	t0 := time.Now()
	if _, err := eval.EnsureIndex(ctx, emb, v, dbPath, r.logf); err != nil {
		return err
	}
	r.logf("%s embedded with %s in %s", dataset, emb.Name(), time.Since(t0).Round(time.Second))
	titles, err := scaleQueries(ctx, dbPath, r.o.Queries)
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
			_, err := db.Vector(ctx, index.VectorQuery{Vector: qv, Mode: index.VectorExact, K: realRecallK})
			return err
		})
		if err != nil {
			return err
		}
		note := fmt.Sprintf("%d queries (%s), %s vectors, %d chunks, k %d", len(qvs), set.name, emb.Name(), total, realRecallK)
		r.res.add("recall at scale", "exact KNN p50, "+set.name, dataset, measure.Millis(exact), "ms", note)
		for _, over := range []int{2, 4, index.DefaultOversample, 16} {
			c := index.VectorQuery{Oversample: over}.Rescored(realRecallK)
			rc, err := VectorRecall(ctx, db, qvs, realRecallK, c, 10)
			if err != nil {
				return err
			}
			p50, err := timeSearch(qvs, func(qv []float32) error {
				_, err := db.Vector(ctx, index.VectorQuery{Vector: qv, Mode: index.VectorBinary, K: realRecallK, Candidates: c})
				return err
			})
			if err != nil {
				return err
			}
			name := fmt.Sprintf("%s, oversample %d (%d candidates)", set.name, over, c)
			r.res.add("recall at scale", "recall@10 notes, "+name, dataset, rc.Notes, "", "")
			r.res.add("recall at scale", "recall@10 chunks, "+name, dataset, rc.Chunks, "", "")
			r.res.add("recall at scale", "binary pass p50, "+name, dataset, measure.Millis(p50), "ms", "")
			r.logf("recall at scale %s %s: notes %.4f, chunks %.4f, p50 %.2f ms", dataset, name, rc.Notes, rc.Chunks, measure.Millis(p50))
		}
	}
	return nil
}

// realRecallK is the depth recallAtScale searches at: the vector stage's first
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
