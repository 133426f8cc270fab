package gate

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"github.com/vault-rag/vault-rag/eval"
)

// Permutations is how many sign flips the randomization test draws.
const Permutations = 20000

// PairedComparison is a configuration against the shipping one, query by query.
type PairedComparison struct {
	Config   string
	Baseline string // the configuration compared against
	Metric   string // the per-query measure tested
	Delta    float64
	P        float64 // two-sided p of the paired randomization test
	Wins     []QueryChange
	Losses   []QueryChange
}

// QueryChange is one query whose first relevant rank moved (0 = not in the top 10).
type QueryChange struct {
	ID       string
	From, To int
}

// ComparePaired pairs two runs of the same queries, by query id (a query only one
// run holds is left out). The test is Fisher's paired randomization test on
// per-query nDCG@10: under the null hypothesis each query's difference is as
// likely to have either sign, so the p-value is the share of sign assignments
// whose mean difference is at least as large in magnitude as the observed one.
// Queries with no difference cannot change any assignment's sum, so only the
// m queries that differ count: with m ≤ ExactLimit every one of the 2^m
// assignments is enumerated and p is exact; above it Permutations random
// assignments are drawn from a seeded generator, so p is reproducible.
func ComparePaired(base, other *eval.ConfigRun) PairedComparison {
	c := PairedComparison{Config: other.Name, Baseline: base.Name, Metric: "ndcg@10"}
	byID := make(map[string]eval.QueryRun, len(base.Queries))
	for _, q := range base.Queries {
		byID[q.ID] = q
	}
	var diffs []float64
	for _, o := range other.Queries {
		b, ok := byID[o.ID]
		if !ok {
			continue
		}
		diffs = append(diffs, o.Score.NDCG-b.Score.NDCG)
		fb, fo := first10(b), first10(o)
		switch {
		case better(fo, fb):
			c.Wins = append(c.Wins, QueryChange{b.ID, fb, fo})
		case better(fb, fo):
			c.Losses = append(c.Losses, QueryChange{b.ID, fb, fo})
		}
	}
	if len(diffs) == 0 {
		c.P = 1
		return c
	}
	c.Delta = stat.Mean(diffs, nil)
	c.P = randomizationP(diffs)
	return c
}

func first10(q eval.QueryRun) int {
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

// ExactLimit is the largest number of differing queries whose sign
// assignments the randomization test enumerates (2^20, about a million).
const ExactLimit = 20

// randomizationP is the two-sided p-value of the paired randomization test
// on per-query differences.
func randomizationP(diffs []float64) float64 {
	var nz []float64
	for _, d := range diffs {
		if d != 0 {
			nz = append(nz, d)
		}
	}
	if len(nz) == 0 {
		return 1
	}
	// Sums, not means: the query count is the same in every assignment. A
	// tiny tolerance keeps the observed assignment itself counted despite
	// summation-order rounding.
	observed := math.Abs(floats.Sum(nz)) - 1e-12
	if observed <= 0 {
		return 1
	}
	if len(nz) <= ExactLimit {
		extreme := 0
		total := 1 << len(nz)
		for mask := 0; mask < total; mask++ {
			s := 0.0
			for j, d := range nz {
				if mask&(1<<j) != 0 {
					s -= d
				} else {
					s += d
				}
			}
			if math.Abs(s) >= observed {
				extreme++
			}
		}
		return float64(extreme) / float64(total)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	extreme := 0
	for i := 0; i < Permutations; i++ {
		s := 0.0
		for _, d := range nz {
			if rng.IntN(2) == 0 {
				s += d
			} else {
				s -= d
			}
		}
		if math.Abs(s) >= observed {
			extreme++
		}
	}
	// The observed assignment counts as one of the draws, so p is never 0.
	return float64(extreme+1) / float64(Permutations+1)
}
