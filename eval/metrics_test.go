package eval

import (
	"fmt"
	"math"
	"testing"
)

// Every expected value below is worked out by hand from the definitions
// (trec_eval's recall_k, recip_rank cut at 10, ndcg_cut_10 with linear gain);
// the log2 terms are written out so the arithmetic can be checked.

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

var (
	d2 = 1 / math.Log2(3) // discount at rank 2 (0.6309)
	d3 = 0.5              // rank 3: 1/log2(4)
	d4 = 1 / math.Log2(5) // rank 4 (0.4307)
)

func TestScore(t *testing.T) {
	twelve := map[string]int{}
	var twelveRanked []string
	for i := 0; i < 12; i++ {
		p := fmt.Sprintf("r%02d", i)
		twelve[p] = 1
		twelveRanked = append(twelveRanked, p)
	}
	cases := []struct {
		name   string
		ranked []string
		rel    map[string]int
		recall map[int]float64
		mrr    float64
		ndcg   float64
	}{
		{
			name:   "binary: relevant at 2 and 4 of 3 relevant",
			ranked: []string{"x", "a", "y", "b", "z"},
			rel:    map[string]int{"a": 1, "b": 1, "c": 1},
			recall: map[int]float64{1: 0, 3: 1.0 / 3, 5: 2.0 / 3, 10: 2.0 / 3},
			mrr:    0.5,
			// DCG 1/log2(3) + 1/log2(5); IDCG 1 + 1/log2(3) + 1/log2(4) → 0.4982
			ndcg: (d2 + d4) / (1 + d2 + d3),
		},
		{
			name:   "graded, linear gain (not 2^g-1)",
			ranked: []string{"b", "a", "z", "c"},
			rel:    map[string]int{"a": 3, "b": 1, "c": 2},
			recall: map[int]float64{1: 1.0 / 3, 3: 2.0 / 3, 5: 1, 10: 1},
			mrr:    1,
			// DCG 1 + 3/log2(3) + 2/log2(5); IDCG 3 + 2/log2(3) + 1/2 → 0.7884
			ndcg: (1 + 3*d2 + 2*d4) / (3 + 2*d2 + d3),
		},
		{
			name:   "graded, ideal order",
			ranked: []string{"a", "c", "b"},
			rel:    map[string]int{"a": 3, "b": 1, "c": 2},
			recall: map[int]float64{1: 1.0 / 3, 3: 1, 5: 1, 10: 1},
			mrr:    1,
			ndcg:   1,
		},
		{
			name:   "tied grades: any order of equals is ideal",
			ranked: []string{"c", "a", "b"},
			rel:    map[string]int{"a": 2, "b": 2, "c": 2},
			recall: map[int]float64{1: 1.0 / 3, 3: 1, 5: 1, 10: 1},
			mrr:    1,
			ndcg:   1,
		},
		{
			name:   "tied grades with a gap",
			ranked: []string{"b", "x", "a"},
			rel:    map[string]int{"a": 2, "b": 2},
			recall: map[int]float64{1: 0.5, 3: 1, 5: 1, 10: 1},
			mrr:    1,
			// DCG 2 + 2/2; IDCG 2 + 2/log2(3) → 0.9197
			ndcg: (2 + 2*d3) / (2 + 2*d2),
		},
		{
			name:   "no relevant note judged: every measure 0",
			ranked: []string{"a", "b"},
			rel:    map[string]int{},
			recall: map[int]float64{1: 0, 3: 0, 5: 0, 10: 0},
		},
		{
			name:   "only non-positive grades count as non-relevant",
			ranked: []string{"a", "b"},
			rel:    map[string]int{"a": 0, "b": -1},
			recall: map[int]float64{1: 0, 3: 0, 5: 0, 10: 0},
		},
		{
			name:   "a negative grade gains nothing (it must not subtract)",
			ranked: []string{"n", "a"},
			rel:    map[string]int{"n": -1, "a": 1},
			recall: map[int]float64{1: 0, 3: 1, 5: 1, 10: 1},
			mrr:    0.5,
			ndcg:   d2 / 1,
		},
		{
			name:   "fewer than k results",
			ranked: []string{"a"},
			rel:    map[string]int{"a": 1, "b": 1},
			recall: map[int]float64{1: 0.5, 3: 0.5, 5: 0.5, 10: 0.5},
			mrr:    1,
			// DCG 1; IDCG 1 + 1/log2(3) → 0.6131
			ndcg: 1 / (1 + d2),
		},
		{
			name:   "empty ranking",
			ranked: nil,
			rel:    map[string]int{"a": 1},
			recall: map[int]float64{1: 0, 3: 0, 5: 0, 10: 0},
		},
		{
			name:   "first relevant at 11: outside every cutoff",
			ranked: []string{"x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "a"},
			rel:    map[string]int{"a": 3},
			recall: map[int]float64{1: 0, 3: 0, 5: 0, 10: 0},
		},
		{
			name:   "more relevant than k: the ideal is cut at 10 too",
			ranked: twelveRanked,
			rel:    twelve,
			recall: map[int]float64{1: 1.0 / 12, 3: 3.0 / 12, 5: 5.0 / 12, 10: 10.0 / 12},
			mrr:    1,
			ndcg:   1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Score(c.ranked, c.rel)
			for _, k := range Cutoffs() {
				if !near(s.Recall[k], c.recall[k]) {
					t.Errorf("recall@%d = %.6f, want %.6f", k, s.Recall[k], c.recall[k])
				}
			}
			if !near(s.MRR, c.mrr) {
				t.Errorf("MRR@10 = %.6f, want %.6f", s.MRR, c.mrr)
			}
			if !near(s.NDCG, c.ndcg) {
				t.Errorf("nDCG@10 = %.6f, want %.6f", s.NDCG, c.ndcg)
			}
		})
	}
}

func TestScoreDecimals(t *testing.T) {
	// The two headline cases once more as decimals, computed independently
	// (Python: (1/log2(3)+1/log2(5))/(1+1/log2(3)+0.5) etc.).
	s := Score([]string{"x", "a", "y", "b", "z"}, map[string]int{"a": 1, "b": 1, "c": 1})
	if math.Abs(s.NDCG-0.49818925746641285) > 1e-12 {
		t.Errorf("binary nDCG@10 = %.17f", s.NDCG)
	}
	s = Score([]string{"b", "a", "z", "c"}, map[string]int{"a": 3, "b": 1, "c": 2})
	if math.Abs(s.NDCG-0.7883773914853737) > 1e-12 {
		t.Errorf("graded nDCG@10 = %.17f", s.NDCG)
	}
}

func TestMean(t *testing.T) {
	a := Scores{Recall: map[int]float64{1: 1, 3: 1, 5: 1, 10: 1}, MRR: 1, NDCG: 0.8}
	b := Scores{Recall: map[int]float64{1: 0, 3: 0.5, 5: 0.5, 10: 1}, MRR: 0.25, NDCG: 0.2}
	m := Mean([]Scores{a, b})
	want := map[int]float64{1: 0.5, 3: 0.75, 5: 0.75, 10: 1}
	for k, w := range want {
		if !near(m.Recall[k], w) {
			t.Errorf("mean recall@%d = %v, want %v", k, m.Recall[k], w)
		}
	}
	if !near(m.MRR, 0.625) || !near(m.NDCG, 0.5) {
		t.Errorf("mean MRR %v nDCG %v, want 0.625 and 0.5", m.MRR, m.NDCG)
	}
	if e := Mean(nil); e.MRR != 0 || e.NDCG != 0 || e.Recall[10] != 0 {
		t.Errorf("mean of nothing = %+v, want zeros", e)
	}
}
