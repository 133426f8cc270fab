package gate

import (
	"math"
	"slices"
	"strings"
)

// Scored is one entry of a ranked list as a fixture or baseline keeps it.
type Scored struct {
	Path  string
	Score float64
}

// RankedDiff is the outcome of comparing a stored ranked list with a new one
// (CompareRanked); DiffBaseline's BaselineDiff is its counterpart for a
// dataset's committed figures.
type RankedDiff struct {
	// Changes are real differences: an order, a membership or a score that
	// moved by more than the tolerance and is not explained by a near-tie.
	Changes []Finding
	// Flips are differences explained by near-ties (allowed, reported).
	Flips []Finding
	// Drift is the largest score difference among notes compared by score.
	Drift float64
}

// CompareRanked compares a stored ranking (want) with a new one (got) of the
// same query, score by score (the pipeline's frozen fixtures). The notes of
// tied, those that took part in a near-tie in both runs (NearTiedInBoth),
// may move, enter or leave: a flip upstream moves them through every later
// stage (a rank-fused score jumps by a whole rank), so they are reported, not
// failed. Every other note must keep its relative order and its score within
// tol. When both lists were cut at the same length, the notes that a tied
// note pushed below the cut may drop out of the tail.
func CompareRanked(want, got []Scored, tied []string, tol float64) RankedDiff {
	isTied := map[string]bool{}
	for _, p := range tied {
		isTied[p] = true
	}
	var c RankedDiff
	rest := func(l []Scored) []Scored {
		var out []Scored
		for _, s := range l {
			if !isTied[s.Path] {
				out = append(out, s)
			}
		}
		return out
	}
	w, g := rest(want), rest(got)
	n := min(len(w), len(g))
	for i := 0; i < n; i++ {
		if w[i].Path != g[i].Path {
			c.Changes = append(c.Changes, OrderChanged{Got: g[i].Path, Want: w[i].Path})
			return c
		}
		d := math.Abs(w[i].Score - g[i].Score)
		c.Drift = math.Max(c.Drift, d)
		if d > tol {
			c.Changes = append(c.Changes, ScoreMoved{Path: w[i].Path, Want: w[i].Score, Got: g[i].Score, Tolerance: tol})
		}
	}
	if len(w) != len(g) {
		longer, added := w[n:], false
		if len(g) > len(w) {
			longer, added = g[n:], true
		}
		if len(want) != len(got) {
			c.Changes = append(c.Changes, LengthChanged{Want: len(want), Got: len(got)})
		} else {
			for _, s := range longer {
				c.Flips = append(c.Flips, CutFlip{Path: s.Path, Added: added})
			}
		}
	}
	wrank, grank := ranks(want), ranks(got)
	var moved []TiedMoved
	for _, p := range tied {
		if wrank[p] != grank[p] {
			moved = append(moved, TiedMoved{Path: p, From: wrank[p], To: grank[p]})
		}
	}
	slices.SortFunc(moved, func(a, b TiedMoved) int { return strings.Compare(a.Path, b.Path) })
	for _, m := range moved {
		c.Flips = append(c.Flips, m)
	}
	return c
}

// ranks maps each note of a list to its rank, from 1.
func ranks(l []Scored) map[string]int {
	out := make(map[string]int, len(l))
	for i, s := range l {
		out[s.Path] = i + 1
	}
	return out
}
