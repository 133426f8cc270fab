package bench

import (
	"context"

	"github.com/vault-rag/vault-rag/index"
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
		exact, err := db.Nearest(ctx, qv, k)
		if err != nil {
			return r, err
		}
		bin, err := db.NearestBinary(ctx, qv, k, candidates)
		if err != nil {
			return r, err
		}
		r.Chunks += overlap(firstChunks(exact, n), firstChunks(bin, n))
		r.Notes += overlap(firstNotes(exact, n), firstNotes(bin, n))
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
