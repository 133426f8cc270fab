package gate

import (
	"math"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
)

func TestQualityBound(t *testing.T) {
	for _, tc := range []struct {
		sd   float64
		n    int
		want float64
	}{
		{0.065, 24, 3 * 0.065 / math.Sqrt(24)}, // 0.0398
		{0.065, 225, 0.013},
		{0.065, 10000, 0.01}, // the floor
		{0.065, 0, math.Inf(1)},
	} {
		if got := QualityBound(tc.sd, tc.n); math.Abs(got-tc.want) > 1e-12 && !(math.IsInf(got, 1) && math.IsInf(tc.want, 1)) {
			t.Errorf("QualityBound(%g, %d) = %g, want %g", tc.sd, tc.n, got, tc.want)
		}
	}
}

// qrun is a dataset run of one configuration whose queries score the given
// nDCG@10 values.
func qrun(embedder string, ndcg ...float64) *eval.DatasetRun {
	ds := &eval.Dataset{Name: "t"}
	c := &eval.ConfigRun{Name: "shipping"}
	var all []eval.Scores
	for i, v := range ndcg {
		id := string(rune('a' + i))
		ds.Queries = append(ds.Queries, eval.Query{ID: id})
		s := eval.Scores{NDCG: v}
		c.Queries = append(c.Queries, eval.QueryRun{ID: id, Score: s})
		all = append(all, s)
	}
	c.Mean = eval.Mean(all)
	skipped := &eval.ConfigRun{Name: "hybrid-rerank", Skipped: "model not installed"}
	return &eval.DatasetRun{Dataset: ds, Embedder: embedder, Configs: []*eval.ConfigRun{c, skipped}}
}

func TestCheckQuality(t *testing.T) {
	ref := qrun("fp32", 1, 0.5, 0.5, 0.0)
	for _, tc := range []struct {
		name string
		run  *eval.DatasetRun
		ok   bool
	}{
		{"the same figures", qrun("int8", 1, 0.5, 0.5, 0.0), true},
		{"a small difference", qrun("int8", 1, 0.5, 0.45, 0.0), true},      // Δ −0.0125, bound 3·0.05/2 = 0.075
		{"a loss past the bound", qrun("int8", 0.5, 0.2, 0.3, 0.0), false}, // Δ −0.25
		{"a gain past the bound", qrun("int8", 1, 1, 1, 0.5), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qs := CheckQuality(ref, tc.run, 0.05)
			if len(qs) != 1 {
				t.Fatalf("%d rows, want 1 (the skipped configuration is left out): %+v", len(qs), qs)
			}
			q := qs[0]
			if q.Model != "int8" || q.Reference != "fp32" || q.Config != "shipping" || math.Abs(q.Bound-0.075) > 1e-12 {
				t.Fatalf("row %+v", q)
			}
			if q.OK() != tc.ok {
				t.Errorf("Δ %+.4f within ±%.4f: %v, want %v", q.Delta(), q.Bound, q.OK(), tc.ok)
			}
		})
	}
}
