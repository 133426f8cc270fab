package gate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
)

// has says whether fs holds a finding of type T that ok accepts.
func has[T Finding](fs []Finding, ok func(T) bool) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool {
		t, is := f.(T)
		return is && ok(t)
	})
}

// gateBaseline is a one-configuration baseline of two queries.
func gateBaseline() Baseline {
	m := Metrics{Recall10: 1, MRR10: 0.75, NDCG10: 0.8}
	return Baseline{Dataset: "t", Queries: 2, Notes: 5, Chunks: 7, Stamp: "abc", Configs: []BaselineConfig{{
		Name: "hybrid", Status: "ok", Metrics: &m,
		Ranks:    map[string][]int{"q1": {1}, "q2": {2}},
		NDCG:     map[string]FourDecimals{"q1": 1, "q2": 0.6},
		NearTies: map[string][]string{"q2": {"a.md", "b.md", "r2.md"}},
		Found:    map[string]map[string]int{"q1": {"r1.md": 1}, "q2": {"r2.md": 2}},
	}}}
}

// moved returns a copy of the baseline with q2's relevant note moved from
// rank 2 to 1 and the mean with it.
func moved(b Baseline, ties []string) Baseline { return movedTo(b, ties, 1) }

func movedTo(b Baseline, ties []string, rank int) Baseline {
	c := b.Configs[0]
	m := *c.Metrics
	m.MRR10, m.NDCG10 = 1, 0.9
	c.Metrics = &m
	c.Ranks = map[string][]int{"q1": {1}, "q2": {rank}}
	c.NDCG = map[string]FourDecimals{"q1": 1, "q2": FourDecimals(0.8 / float64(rank))}
	c.Found = map[string]map[string]int{"q1": {"r1.md": 1}, "q2": {"r2.md": rank}}
	c.NearTies = map[string][]string{}
	if ties != nil {
		c.NearTies["q2"] = ties
	}
	b.Configs = []BaselineConfig{c}
	return b
}

func TestDiffNearTies(t *testing.T) {
	old := gateBaseline()
	for _, tc := range []struct {
		name           string
		cur            Baseline
		changes, flips int
		// change and flip, when set, must accept the changes and the flips.
		change, flip func([]Finding) bool
	}{
		{name: "identical", cur: gateBaseline()},
		{name: "near-tie sets differ, results do not", cur: func() Baseline {
			b := gateBaseline()
			b.Configs[0].NearTies = map[string][]string{"q1": {"c.md"}}
			return b
		}()},
		{name: "a query moved by a near-tie seen in both runs", cur: moved(gateBaseline(), []string{"b.md", "z.md"}), flips: 3,
			flip: func(fs []Finding) bool {
				return has(fs, func(q QueryMoved) bool {
					return q.Query == "q2" && q.Flip() && slices.Equal(q.NearTied, []string{"b.md"}) && slices.Equal(q.OldRanks, []int{2}) && slices.Equal(q.CurRanks, []int{1})
				}) && has(fs, func(m MeasureMoved) bool { return m.Measure == "ndcg@10" && m.ByFlips })
			}},
		{name: "a query moved with no near-tie in this run", cur: moved(gateBaseline(), nil), changes: 3,
			change: func(fs []Finding) bool {
				return has(fs, func(q QueryMoved) bool { return q.Query == "q2" && len(q.NearTied) == 0 && !q.Flip() }) &&
					has(fs, func(m MeasureMoved) bool { return m.Measure == "ndcg@10" && !m.ByFlips })
			}},
		{name: "a query moved with other notes near-tied", cur: moved(gateBaseline(), []string{"y.md"}), changes: 3},
		// One near-tied note can push a relevant one by one rank, not by three.
		{name: "a relevant note moved further than the near-ties explain", cur: movedTo(gateBaseline(), []string{"b.md"}, 5), changes: 3,
			change: func(fs []Finding) bool {
				return has(fs, func(q QueryMoved) bool {
					return q.Unexplained != nil && *q.Unexplained == NoteMoved{Path: "r2.md", From: 2, To: 5, NearTied: 1} && !q.Flip()
				})
			}},
		{name: "a near-tied relevant note moves anywhere", cur: movedTo(gateBaseline(), []string{"b.md", "r2.md"}, 5), flips: 3},
		{name: "a mean moved with no query moving", cur: func() Baseline {
			b := gateBaseline()
			m := *b.Configs[0].Metrics
			m.NDCG10 = 0.81
			b.Configs[0].Metrics = &m
			return b
		}(), changes: 1, change: func(fs []Finding) bool {
			return has(fs, func(m MeasureMoved) bool {
				return m == MeasureMoved{Config: "hybrid", Measure: "ndcg@10", Old: "0.8000", Cur: "0.8100"}
			})
		}},
		{name: "status", cur: func() Baseline {
			b := gateBaseline()
			b.Configs[0] = BaselineConfig{Name: "hybrid", Status: "skipped: model not installed"}
			return b
		}(), changes: 1, change: func(fs []Finding) bool {
			return has(fs, func(c StatusChanged) bool {
				return c == StatusChanged{Config: "hybrid", Old: "ok", Cur: "skipped: model not installed"}
			})
		}},
		{name: "stamp", cur: func() Baseline { b := gateBaseline(); b.Stamp = "def"; return b }(), changes: 1, change: stampChanged},
		// A baseline read from disk has four decimals, a run all of them: a
		// difference below the fourth is none (here beside a stamp change,
		// which makes the files differ).
		{name: "stamp, and figures equal to four decimals", cur: func() Baseline {
			b := gateBaseline()
			b.Stamp = "def"
			b.Configs[0].NDCG = map[string]FourDecimals{"q1": 1, "q2": 0.60000321}
			return b
		}(), changes: 1, change: stampChanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := DiffBaseline(old, tc.cur)
			if len(d.Changes) != tc.changes || len(d.Flips) != tc.flips {
				t.Fatalf("changes %+v, flips %+v; want %d changes, %d flips", d.Changes, d.Flips, tc.changes, tc.flips)
			}
			if tc.change != nil && !tc.change(d.Changes) {
				t.Errorf("changes %+v lack the one expected", d.Changes)
			}
			if tc.flip != nil && !tc.flip(d.Flips) {
				t.Errorf("flips %+v lack the one expected", d.Flips)
			}
		})
	}
}

func stampChanged(fs []Finding) bool {
	return has(fs, func(c StampChanged) bool { return c == StampChanged{Old: "abc", Cur: "def"} })
}

// wideBaseline is a one-configuration baseline of n queries, each with its
// relevant note at rank 2 beside a near-tied note.
func wideBaseline(n int) Baseline {
	c := BaselineConfig{Name: "hybrid", Status: "ok", Metrics: &Metrics{NDCG10: 0.6},
		Ranks: map[string][]int{}, NDCG: map[string]FourDecimals{}, NearTies: map[string][]string{}, Found: map[string]map[string]int{}}
	for i := range n {
		id := fmt.Sprintf("q%03d", i)
		c.Ranks[id], c.NDCG[id] = []int{2}, 0.6
		c.NearTies[id] = []string{"a.md", "r.md"}
		c.Found[id] = map[string]int{"r.md": 2}
	}
	return Baseline{Dataset: "t", Queries: n, Notes: 5, Chunks: 7, Stamp: "abc", Configs: []BaselineConfig{c}}
}

// flipped moves the relevant note of the first k queries from rank 2 to 1, a
// move the near-tie (seen in both runs) explains, and the mean with them.
func flipped(b Baseline, k int) Baseline {
	c := b.Configs[0]
	c.Ranks, c.NDCG, c.Found = maps.Clone(c.Ranks), maps.Clone(c.NDCG), maps.Clone(c.Found)
	for i := range k {
		id := fmt.Sprintf("q%03d", i)
		c.Ranks[id], c.NDCG[id], c.Found[id] = []int{1}, 1, map[string]int{"r.md": 1}
	}
	c.Metrics = &Metrics{NDCG10: FourDecimals(0.6 + 0.4*float64(k)/float64(b.Queries))}
	b.Configs = []BaselineConfig{c}
	return b
}

// TestDiffFlippedShare: near-tie flips are counted against the results
// compared, and more than 1 % of them fails the gate even when each one alone
// would be explained.
func TestDiffFlippedShare(t *testing.T) {
	for _, tc := range []struct {
		queries, flips int
		fail           bool
	}{
		{300, 0, false},
		{300, 3, false}, // exactly 1 %
		{300, 4, true},
		{50, 1, true},
	} {
		t.Run(fmt.Sprintf("%d of %d", tc.flips, tc.queries), func(t *testing.T) {
			d := DiffBaseline(wideBaseline(tc.queries), flipped(wideBaseline(tc.queries), tc.flips))
			if d.Compared != tc.queries || d.Flipped != tc.flips {
				t.Fatalf("compared %d, flipped %d; want %d, %d", d.Compared, d.Flipped, tc.queries, tc.flips)
			}
			if len(d.Changes) != 0 {
				t.Fatalf("changes %+v: every flip here is explained", d.Changes)
			}
			if d.Failed() != tc.fail {
				t.Errorf("failed %v, want %v", d.Failed(), tc.fail)
			}
			if d.TooManyFlipped() != tc.fail {
				t.Errorf("%d flipped of %d compared, at most %d: too many %v, want %v", d.Flipped, d.Compared, MaxFlipped(d.Compared), d.TooManyFlipped(), tc.fail)
			}
		})
	}
}

// TestDiffUnencodable: a baseline holding a figure that is not a number
// cannot be written as JSON; two such baselines must not read as a match.
func TestDiffUnencodable(t *testing.T) {
	b := gateBaseline()
	m := *b.Configs[0].Metrics
	m.NDCG10 = FourDecimals(math.NaN())
	b.Configs[0].Metrics = &m
	d := DiffBaseline(b, b)
	if !d.Failed() || !has(d.Changes, func(u Unencodable) bool { return !u.Run && u.Err != nil }) || !has(d.Changes, func(u Unencodable) bool { return u.Run }) {
		t.Errorf("a baseline with a NaN figure against itself: changes %+v", d.Changes)
	}
}
