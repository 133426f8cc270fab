package gate

import (
	"math"

	"github.com/vault-rag/vault-rag/eval"
)

// Quality is one configuration's mean nDCG@10 on one dataset with a model and
// with its reference (models.Spec.Reference): the int8 embedder users run
// against the fp32 original the gate records with. Both runs are made on the
// same machine, so the difference is the model's, not the CPU's: a property
// that holds on every CPU, where the int8 figures themselves do not.
type Quality struct {
	Dataset, Config  string
	Model, Reference string
	ModelNDCG        float64
	ReferenceNDCG    float64
	Bound            float64 // the largest |Δ| allowed (QualityBound)
	// P is the paired randomization test's p for the difference.
	P float64
}

// Delta is the model's mean nDCG@10 less the reference's.
func (q Quality) Delta() float64 { return q.ModelNDCG - q.ReferenceNDCG }

// OK says whether the difference is within the bound.
func (q Quality) OK() bool { return math.Abs(q.Delta()) <= q.Bound }

// QualityBound is the largest difference in mean nDCG@10 allowed between a
// model and its reference over n queries: three standard errors of a mean of
// per-query differences whose standard deviation is sd (models.Spec
// QualitySD, measured), and never less than 0.01. Three standard errors: a
// model that differs from its reference only by quantization noise stays
// within it 997 times in 1,000.
func QualityBound(sd float64, n int) float64 {
	if n == 0 {
		return math.Inf(1)
	}
	return math.Max(0.01, 3*sd/math.Sqrt(float64(n)))
}

// CheckQuality compares a run with a model against a run of the same dataset
// with its reference, for every configuration both ran (skipped ones are left
// out), each within QualityBound(sd, queries).
func CheckQuality(ref, run *eval.DatasetRun, sd float64) []Quality {
	bound := QualityBound(sd, len(run.Dataset.Queries))
	byName := map[string]*eval.ConfigRun{}
	for _, c := range ref.Configs {
		byName[c.Name] = c
	}
	var out []Quality
	for _, c := range run.Configs {
		r := byName[c.Name]
		if r == nil || r.Skipped != "" || c.Skipped != "" {
			continue
		}
		cmp := ComparePaired(r, c)
		out = append(out, Quality{
			Dataset: run.Dataset.Name, Config: c.Name, Model: run.Embedder, Reference: ref.Embedder,
			ModelNDCG: c.Mean.NDCG, ReferenceNDCG: r.Mean.NDCG, Bound: bound, P: cmp.P,
		})
	}
	return out
}
