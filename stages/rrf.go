package stages

import (
	"context"
	"fmt"
	"sort"
)

// RRF fuses every list produced so far by reciprocal rank: a note scores
// Σ 1/(k + rank) over the lists it appears in, by position only, so lists with
// incomparable scores (bm25, cosine) combine fairly.
type RRF struct {
	K     int `yaml:"k"`     // rank constant (default 60)
	Limit int `yaml:"limit"` // notes to keep (default 30)
	// Weights scale each list's share by stage name (default 1 each) and
	// Depth counts only each list's first notes (0: all); see fusion.go.
	Weights map[string]float64 `yaml:"weights"`
	Depth   int                `yaml:"depth"`
}

// Name implements Stage.
func (*RRF) Name() string { return "rrf" }

// Validate implements Stage.
func (r *RRF) Validate() error {
	if r.K == 0 {
		r.K = 60
	}
	if r.Limit == 0 {
		r.Limit = 30
	}
	if r.K < 1 {
		return fmt.Errorf("k %d must be positive", r.K)
	}
	if r.Limit < 1 || r.Limit > 10000 {
		return fmt.Errorf("limit %d is outside 1..10000", r.Limit)
	}
	if r.Depth < 0 || r.Depth > 10000 {
		return fmt.Errorf("depth %d is outside 0..10000", r.Depth)
	}
	return validateWeights("weights", r.Weights)
}

// Run implements Stage.
func (r *RRF) Run(ctx context.Context, env *Env, st *State) error {
	if len(st.Lists) == 0 {
		return ErrNoRanking
	}
	if len(r.Weights) > 0 || r.Depth > 0 {
		st.rerank(r.Name(), FuseWeighted(st.Lists, r.K, r.Limit, r.Weights, r.Depth), "")
		st.markExact() // a function of ranks alone
		return nil
	}
	st.rerank(r.Name(), Fuse(st.Lists, r.K, r.Limit), "")
	st.markExact() // a function of ranks alone
	return nil
}

// Fuse is reciprocal rank fusion. Ties in the fused score go to the note with
// the better best rank, then the one found by more lists, then the earlier
// list, then the lower note id: a total order, so the result never depends on
// map iteration or sort stability. A note's chunk is the one from the list
// where it ranked best.
func Fuse(lists []List, k, limit int) []Item {
	type acc struct {
		item               Item
		score              float64
		bestRank, bestList int
		count              int
		ranks              []int
	}
	byNote := map[int64]*acc{}
	for li, l := range lists {
		for r, it := range l.Items {
			rank := r + 1
			a := byNote[it.NoteID]
			if a == nil {
				a = &acc{item: it, bestRank: rank, bestList: li}
				byNote[it.NoteID] = a
			} else if rank < a.bestRank {
				a.item, a.bestRank, a.bestList = it, rank, li
			}
			a.ranks = append(a.ranks, rank)
			a.count++
		}
	}
	all := make([]*acc, 0, len(byNote))
	for _, a := range byNote {
		// Sum in rank order, not list order: floating-point addition is not
		// associative, and notes holding the same ranks in different lists
		// must score exactly equal so the tie-break, not rounding, orders them.
		sort.Ints(a.ranks)
		for _, r := range a.ranks {
			a.score += 1 / float64(k+r)
		}
		all = append(all, a)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.score != b.score:
			return a.score > b.score
		case a.bestRank != b.bestRank:
			return a.bestRank < b.bestRank
		case a.count != b.count:
			return a.count > b.count
		case a.bestList != b.bestList:
			return a.bestList < b.bestList
		}
		return a.item.NoteID < b.item.NoteID
	})
	out := make([]Item, 0, min(limit, len(all)))
	for _, a := range all[:min(limit, len(all))] {
		out = append(out, Item{NoteID: a.item.NoteID, ChunkID: a.item.ChunkID, Score: a.score})
	}
	return out
}
