package index

import (
	"context"
	"math/rand"
	"reflect"
	"testing"
)

// On the postings a filter is part of the merge, not a pass over the ranked
// chunks after it; the hits are the unfiltered search's, filtered after: the
// same chunks with the same scores in the same order, with MinMatch too
// (which FTS5 cannot run to compare with).
func TestFilterInTheMerge(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(6))
	d, _ := randomIndex(t, rng, 150)
	filters := []Filter{{PathPrefix: "b/"}, {Type: "log"}, {PathPrefix: "a/", Type: "ref"}, {PathPrefix: "b/n1"}}
	for _, match := range bm25Queries(rng, 25) {
		terms, plain := quotedTerms(match)
		if !plain {
			continue
		}
		for _, minMatch := range []float64{0, 0.5} {
			all, err := d.Keyword(ctx, KeywordQuery{Terms: terms, MinMatch: minMatch, PerChunk: true, Limit: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range filters {
				notes, _, err := d.List(ctx, f, 0, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				in := map[int64]bool{}
				for _, n := range notes {
					in[n.ID] = true
				}
				for _, limit := range []int{1, 5, 40} {
					var chunks, perNote []Hit
					seen := map[int64]bool{}
					for _, h := range all {
						if !in[h.NoteID] {
							continue
						}
						if len(chunks) < limit {
							chunks = append(chunks, h)
						}
						if !seen[h.NoteID] && len(perNote) < limit {
							seen[h.NoteID] = true
							perNote = append(perNote, h)
						}
					}
					for _, perChunk := range []bool{false, true} {
						q := KeywordQuery{Terms: terms, MinMatch: minMatch, PerChunk: perChunk, Limit: limit, Filter: f}
						got, err := d.Keyword(ctx, q)
						want := perNote
						if perChunk {
							want = chunks
						}
						if err != nil || !reflect.DeepEqual(got, want) {
							t.Fatalf("%+v: %v (%v)\nwant %v", q, got, err, want)
						}
					}
				}
			}
		}
	}
}
