package gate

import (
	"fmt"
	"math"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
)

// runOf builds a configuration run from per-query nDCG@10 values (query ids
// q0, q1, ...) and, optionally, the rank of each query's first relevant note.
func runOf(name string, ndcg []float64, first []int) *eval.ConfigRun {
	r := &eval.ConfigRun{Name: name}
	for i, v := range ndcg {
		q := eval.QueryRun{ID: fmt.Sprintf("q%d", i), Score: eval.Scores{NDCG: v}}
		if first != nil && first[i] > 0 {
			q.RelevantRanks = []int{first[i]}
		}
		r.Queries = append(r.Queries, q)
	}
	return r
}

func TestCompareIdenticalRuns(t *testing.T) {
	v := []float64{0.2, 0.9, 0, 1, 0.5}
	c := ComparePaired(runOf("a", v, []int{3, 1, 0, 1, 2}), runOf("b", v, []int{3, 1, 0, 1, 2}))
	if c.P != 1 || c.Delta != 0 || len(c.Wins) != 0 || len(c.Losses) != 0 {
		t.Errorf("identical runs: Δ %v p %v wins %v losses %v; want 0, 1, none, none", c.Delta, c.P, c.Wins, c.Losses)
	}
	if c.Config != "b" || c.Baseline != "a" || c.Metric != "ndcg@10" {
		t.Errorf("labels %q vs %q on %q", c.Config, c.Baseline, c.Metric)
	}
}

func TestCompareEmpty(t *testing.T) {
	c := ComparePaired(runOf("a", nil, nil), runOf("b", nil, nil))
	if c.P != 1 || c.Delta != 0 {
		t.Errorf("no queries: Δ %v p %v, want 0 and 1", c.Delta, c.P)
	}
}

func TestCompareLargeConsistentDifference(t *testing.T) {
	// 40 queries, each 0.3 better: only the all-plus and all-minus of 2^40
	// sign assignments are as extreme, so p is as small as 20,000 draws can
	// show, 1/20,001.
	base, other := make([]float64, 40), make([]float64, 40)
	for i := range base {
		base[i] = 0.4 + 0.01*float64(i%5)
		other[i] = base[i] + 0.3
	}
	c := ComparePaired(runOf("base", base, nil), runOf("other", other, nil))
	if math.Abs(c.Delta-0.3) > 1e-12 {
		t.Errorf("Δ = %v, want 0.3", c.Delta)
	}
	if want := 1.0 / float64(Permutations+1); c.P != want {
		t.Errorf("p = %v, want %v", c.P, want)
	}
	// The same in the other direction: the test is two-sided.
	if r := ComparePaired(runOf("other", other, nil), runOf("base", base, nil)); r.P != c.P || math.Abs(r.Delta+0.3) > 1e-12 {
		t.Errorf("reversed: Δ %v p %v, want -0.3 and %v", r.Delta, r.P, c.P)
	}
}

func TestRandomizationExactSmallCases(t *testing.T) {
	cases := []struct {
		diffs []float64
		want  float64
		why   string
	}{
		// ±1±2±3 (×0.1): only +++ and --- reach |6|: 2 of 8.
		{[]float64{0.1, 0.2, 0.3}, 2.0 / 8, "2 of 8"},
		// observed |+1+2-3+4| = 4; of the 16 sums of ±1±2±3±4 these reach
		// |4|: 10, 8, 6, 4, 4, -4, -4, -6, -8, -10.
		{[]float64{0.1, 0.2, -0.3, 0.4}, 10.0 / 16, "10 of 16"},
		// Queries that did not move are left out: the same case as the first.
		{[]float64{0, 0.1, 0, 0.2, 0.3, 0}, 2.0 / 8, "zeros ignored"},
		// One query that moved: either sign is as extreme.
		{[]float64{-0.5}, 1, "one difference"},
		// Cancelling differences: observed 0.
		{[]float64{0.2, -0.2}, 1, "observed zero"},
	}
	for _, c := range cases {
		if got := randomizationP(c.diffs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: p(%v) = %v, want %v", c.why, c.diffs, got, c.want)
		}
	}
}

func TestRandomizationMonteCarloMatchesExact(t *testing.T) {
	// 24 differences of the form ±k/100 put the test past ExactLimit, where
	// it samples. Its estimate must agree with the exact answer computed here
	// independently, by counting sign assignments with a subset-sum table.
	diffs := make([]float64, 24)
	ints := make([]int, 24)
	for i := range diffs {
		ints[i] = i%7 + 1
		if i%3 == 0 {
			ints[i] = -ints[i]
		}
		diffs[i] = float64(ints[i]) / 100
	}
	total, obs := 0, 0
	for _, v := range ints {
		total += abs(v)
		obs += v
	}
	// count[s] = number of sign assignments with signed sum s - total.
	count := make([]float64, 2*total+1)
	count[total] = 1
	for _, v := range ints {
		next := make([]float64, len(count))
		for s, n := range count {
			if n == 0 {
				continue
			}
			next[s+abs(v)] += n
			next[s-abs(v)] += n
		}
		count = next
	}
	extreme := 0.0
	for s, n := range count {
		if abs(s-total) >= abs(obs) {
			extreme += n
		}
	}
	exact := extreme / math.Pow(2, 24)
	got := randomizationP(diffs)
	// Standard error of a 20,000-draw estimate is at most 0.0036.
	if math.Abs(got-exact) > 0.015 {
		t.Errorf("sampled p = %.4f, exact %.4f", got, exact)
	}
	if again := randomizationP(diffs); again != got {
		t.Errorf("p is not reproducible: %v then %v", got, again)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestCompareWinsAndLosses(t *testing.T) {
	base := runOf("base", []float64{0.5, 0.5, 0.5, 0.5, 0.5}, []int{2, 0, 3, 1, 4})
	other := runOf("other", []float64{0.6, 0.6, 0.4, 0.4, 0.5}, []int{1, 5, 0, 2, 4})
	c := ComparePaired(base, other)
	wantWins := []QueryChange{{"q0", 2, 1}, {"q1", 0, 5}}
	wantLosses := []QueryChange{{"q2", 3, 0}, {"q3", 1, 2}}
	if fmt.Sprint(c.Wins) != fmt.Sprint(wantWins) || fmt.Sprint(c.Losses) != fmt.Sprint(wantLosses) {
		t.Errorf("wins %v losses %v, want %v and %v", c.Wins, c.Losses, wantWins, wantLosses)
	}
}

func TestComparePairsByQueryID(t *testing.T) {
	base := runOf("base", []float64{0.1, 0.2, 0.3}, nil)
	// The same three queries in another order, and one the base lacks.
	other := &eval.ConfigRun{Name: "other", Queries: []eval.QueryRun{
		{ID: "q2", Score: eval.Scores{NDCG: 0.3}},
		{ID: "q0", Score: eval.Scores{NDCG: 0.1}},
		{ID: "extra", Score: eval.Scores{NDCG: 1}},
		{ID: "q1", Score: eval.Scores{NDCG: 0.2}},
	}}
	if c := ComparePaired(base, other); c.Delta != 0 || c.P != 1 {
		t.Errorf("same scores in another order: Δ %v p %v, want 0 and 1", c.Delta, c.P)
	}
}
