package gate

import (
	"fmt"
	"math"
	"sort"
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
	Changes []string
	// Flips are differences explained by near-ties (allowed, reported).
	Flips []string
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
			c.Changes = append(c.Changes, fmt.Sprintf("order: %s where %s was (no near-tie explains it)", g[i].Path, w[i].Path))
			return c
		}
		d := math.Abs(w[i].Score - g[i].Score)
		c.Drift = math.Max(c.Drift, d)
		if d > tol {
			c.Changes = append(c.Changes, fmt.Sprintf("score: %s %.6f → %.6f (moved %.2g, tolerance %.2g)", w[i].Path, w[i].Score, g[i].Score, d, tol))
		}
	}
	if len(w) != len(g) {
		longer, which := w[n:], "dropped"
		if len(g) > len(w) {
			longer, which = g[n:], "added"
		}
		if len(want) != len(got) {
			c.Changes = append(c.Changes, fmt.Sprintf("length: %d notes → %d", len(want), len(got)))
		} else {
			for _, s := range longer {
				c.Flips = append(c.Flips, fmt.Sprintf("%s %s at the cut (pushed by a near-tied note)", s.Path, which))
			}
		}
	}
	wpos, gpos := positions(want), positions(got)
	var moved []string
	for _, p := range tied {
		wi, inW := wpos[p]
		gi, inG := gpos[p]
		switch {
		case inW && inG && wi != gi:
			moved = append(moved, fmt.Sprintf("%s rank %d → %d (near-tie)", p, wi+1, gi+1))
		case inW && !inG:
			moved = append(moved, fmt.Sprintf("%s left the list (near-tie)", p))
		case !inW && inG:
			moved = append(moved, fmt.Sprintf("%s entered the list at rank %d (near-tie)", p, gi+1))
		}
	}
	sort.Strings(moved)
	c.Flips = append(c.Flips, moved...)
	return c
}

func positions(l []Scored) map[string]int {
	out := make(map[string]int, len(l))
	for i, s := range l {
		out[s.Path] = i
	}
	return out
}
