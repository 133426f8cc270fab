package eval

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat"
)

// Permutations is how many sign flips the randomization test draws.
const Permutations = 20000

// Comparison is a configuration against the shipping one, query by query.
type Comparison struct {
	Config   string
	Baseline string // the configuration compared against
	Metric   string // the per-query measure tested
	Delta    float64
	P        float64 // two-sided p of the paired randomization test
	Wins     []Change
	Losses   []Change
}

// Change is one query whose first relevant rank moved (0 = not in the top 10).
type Change struct {
	ID       string
	From, To int
}

// Compare pairs two runs of the same queries. The test is Fisher's paired
// randomization test on per-query nDCG@10: under the null hypothesis each
// query's difference is as likely to have either sign, so the p-value is the
// share of random sign assignments whose mean difference is at least as large
// in magnitude as the observed one. The generator is seeded, so the p-value is
// reproducible.
func Compare(base, other *ConfigRun) Comparison {
	c := Comparison{Config: other.Name, Baseline: base.Name, Metric: "ndcg@10"}
	n := min(len(base.Queries), len(other.Queries))
	diffs := make([]float64, n)
	for i := 0; i < n; i++ {
		b, o := base.Queries[i], other.Queries[i]
		diffs[i] = o.Score.NDCG - b.Score.NDCG
		fb, fo := first10(b), first10(o)
		switch {
		case better(fo, fb):
			c.Wins = append(c.Wins, Change{b.ID, fb, fo})
		case better(fb, fo):
			c.Losses = append(c.Losses, Change{b.ID, fb, fo})
		}
	}
	if n == 0 {
		c.P = 1
		return c
	}
	c.Delta = stat.Mean(diffs, nil)
	c.P = randomizationP(diffs)
	return c
}

func first10(q QueryRun) int {
	if len(q.RelevantRanks) == 0 {
		return 0
	}
	return q.RelevantRanks[0]
}

// better reports whether rank a beats rank b (0 means absent, worst).
func better(a, b int) bool {
	if a == 0 {
		return false
	}
	return b == 0 || a < b
}

func randomizationP(diffs []float64) float64 {
	observed := math.Abs(stat.Mean(diffs, nil))
	if observed == 0 {
		return 1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	flipped := make([]float64, len(diffs))
	extreme := 0
	for i := 0; i < Permutations; i++ {
		for j, d := range diffs {
			if rng.IntN(2) == 0 {
				flipped[j] = d
			} else {
				flipped[j] = -d
			}
		}
		// A tiny tolerance keeps the observed assignment itself counted
		// despite summation-order rounding.
		if math.Abs(stat.Mean(flipped, nil)) >= observed-1e-12 {
			extreme++
		}
	}
	return float64(extreme+1) / float64(Permutations+1)
}
