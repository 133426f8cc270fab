package index

import (
	"context"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// bestPerNote keeps each note's first hit in hit order, at most limit, and
// names the first hit of a note it left out, not a later chunk of a note it
// kept.
func TestBestPerNote(t *testing.T) {
	h := func(chunk, note int64) Hit { return Hit{ChunkID: chunk, NoteID: note, Score: float64(-chunk)} }
	hits := []Hit{h(1, 10), h(2, 10), h(3, 20), h(4, 10), h(5, 20), h(6, 30), h(7, 40)}
	for _, tc := range []struct {
		limit int
		want  []Hit
		next  *Hit
	}{
		{0, nil, &hits[0]},
		{1, []Hit{hits[0]}, &hits[2]},
		{2, []Hit{hits[0], hits[2]}, &hits[5]},
		{3, []Hit{hits[0], hits[2], hits[5]}, &hits[6]},
		{4, []Hit{hits[0], hits[2], hits[5], hits[6]}, nil},
		{-1, []Hit{hits[0], hits[2], hits[5], hits[6]}, nil},
	} {
		got, next := bestPerNote(slices.Values(hits), tc.limit)
		if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(next, tc.next) {
			t.Errorf("limit %d: %v, next %v; want %v, next %v", tc.limit, got, next, tc.want, tc.next)
		}
	}
}

// Asked for no hits, the postings return none, as FTS5 does, per note and
// per chunk, filtered or not.
func TestKeywordLimitZero(t *testing.T) {
	ctx := context.Background()
	d, _ := randomIndex(t, rand.New(rand.NewSource(5)), 40)
	for _, f := range []Filter{{}, {PathPrefix: "b/"}} {
		for _, perChunk := range []bool{false, true} {
			for _, e := range []Engine{EnginePostings, EngineFTS5} {
				q := KeywordQuery{Terms: []string{"wombat", "lease"}, Filter: f, PerChunk: perChunk, Engine: e}
				hits, err := d.Keyword(ctx, q)
				if err != nil || len(hits) != 0 {
					t.Fatalf("%+v: %v (%v), want no hits", q, hits, err)
				}
				q.Limit = 1
				if hits, err := d.Keyword(ctx, q); err != nil || len(hits) != 1 {
					t.Fatalf("%+v: %v (%v), want one hit", q, hits, err)
				}
			}
		}
	}
}
