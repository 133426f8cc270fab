package sweep

import (
	"hash/fnv"
	"math/rand/v2"
	"sort"
)

// AssignFolds deals a dataset's queries into k folds of near-equal size, in
// an order shuffled by seed and the dataset's name: the same seed gives the
// same folds on every run and machine, whatever order the queries were read
// in (they are sorted by id first), and each dataset gets its own shuffle.
// It returns the fold (0..k-1) of each query, in the order of ids.
func AssignFolds(dataset string, ids []string, k int, seed uint64) []int {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ids[order[a]] < ids[order[b]] })
	h := fnv.New64a()
	h.Write([]byte(dataset))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	folds := make([]int, len(ids))
	for pos, qi := range order {
		folds[qi] = pos % k
	}
	return folds
}

// CV is the outcome of cross-validating a choice among grid points.
type CV struct {
	// Chosen is the point picked on each fold's training queries.
	Chosen []int
	// Train is the chosen point's objective on each fold's training queries.
	Train []float64
	// HeldOut[f][d] is the chosen point's mean on fold f's queries of
	// dataset d (NaN-free: -1 when the fold holds none of its queries).
	HeldOut [][]float64
	// PerQuery[d][q] is each query's score under the point chosen without
	// it: what the cross-validated estimate averages.
	PerQuery [][]float64
	// Estimate[d] is dataset d's cross-validated mean; Macro their mean.
	Estimate []float64
	Macro    float64
}

// CrossValidate picks, for each fold, the candidate with the best objective
// on the other folds' queries, and scores that candidate on the fold's own
// queries. scores[d][p][q] is query q of dataset d under point p; folds[d][q]
// the query's fold; candidates the points allowed to win (nil: all). The
// objective is the macro mean: the mean over datasets of each dataset's mean
// over its training queries, so a 225-query collection does not drown a
// 24-query vault. Ties go to the earlier point. A query's own score never
// enters the choice of the point it is scored with.
func CrossValidate(scores [][][]float64, folds [][]int, k int, candidates []int) CV {
	return CrossValidateRule(scores, folds, k, candidates, AllDecide(len(scores)))
}

// AllDecide is the selection in which every dataset decides and none only
// guards: the plain macro mean.
func AllDecide(n int) Selection {
	s := Selection{Decides: make([]bool, n), Base: make([]float64, n)}
	for d := range s.Decides {
		s.Decides[d] = true
	}
	return s
}

// CrossValidateRule is CrossValidate choosing each fold's point by a
// selection rule (Selection.Choose) over the training queries.
func CrossValidateRule(scores [][][]float64, folds [][]int, k int, candidates []int, sel Selection) CV {
	if candidates == nil && len(scores) > 0 {
		for p := range scores[0] {
			candidates = append(candidates, p)
		}
	}
	cv := CV{Chosen: make([]int, k), Train: make([]float64, k), HeldOut: make([][]float64, k), PerQuery: make([][]float64, len(scores)), Estimate: make([]float64, len(scores))}
	for d := range scores {
		cv.PerQuery[d] = make([]float64, len(folds[d]))
	}
	for f := 0; f < k; f++ {
		train := func(d, q int) bool { return folds[d][q] != f }
		best := sel.Choose(scores, candidates, train)
		bestScore := 0.0
		if best >= 0 {
			bestScore, _ = sel.decisive(scores, best, train)
		}
		cv.Chosen[f], cv.Train[f] = best, bestScore
		cv.HeldOut[f] = make([]float64, len(scores))
		for d := range scores {
			sum, n := 0.0, 0
			for q, fq := range folds[d] {
				if fq != f {
					continue
				}
				v := sel.fallback(d, q)
				if best >= 0 {
					v = scores[d][best][q]
				}
				cv.PerQuery[d][q] = v
				sum += v
				n++
			}
			cv.HeldOut[f][d] = -1
			if n > 0 {
				cv.HeldOut[f][d] = sum / float64(n)
			}
		}
	}
	for d := range scores {
		sum := 0.0
		for _, v := range cv.PerQuery[d] {
			sum += v
		}
		if n := len(cv.PerQuery[d]); n > 0 {
			cv.Estimate[d] = sum / float64(n)
		}
		cv.Macro += cv.Estimate[d]
	}
	if len(scores) > 0 {
		cv.Macro /= float64(len(scores))
	}
	return cv
}

// Objective is point p's macro mean over the queries in: the mean over the
// datasets with at least one such query of their mean. ok is false when no
// dataset has one.
func Objective(scores [][][]float64, p int, in func(d, q int) bool) (float64, bool) {
	total, nd := 0.0, 0
	for d := range scores {
		sum, n := 0.0, 0
		for q, v := range scores[d][p] {
			if in(d, q) {
				sum += v
				n++
			}
		}
		if n > 0 {
			total += sum / float64(n)
			nd++
		}
	}
	if nd == 0 {
		return 0, false
	}
	return total / float64(nd), true
}

// GuardLoss is the most a classic collection may lose to the base
// configuration, in mean nDCG@10, for a setting to be chosen: vault datasets
// decide which setting is best, and the classic collections (Cranfield,
// CACM: 1960s abstracts with formal queries) only guard against a setting
// that would break retrieval of another kind of text. Stated before any
// setting was measured against it (docs/evaluation.md, the selection rule).
const GuardLoss = 0.02

// Selection is what a selection rule needs to know of the datasets: which
// decide (vault datasets) and which only guard, and the base's mean on each.
type Selection struct {
	Decides []bool    // per dataset: a vault that decides; false: a guard
	Base    []float64 // per dataset: the base configuration's mean nDCG@10
	// BaseQueries, when set, is the base's score per query (in the order
	// of scores[d][p]): a guard then compares a point with the base over
	// the same queries (a fold's training queries, not all of them), and a
	// fold or a left-out dataset for which no point qualifies is scored
	// with the base — the configuration that would stay.
	BaseQueries [][]float64
}

// baseMeanIn is the base's mean over dataset d's queries in.
func (s Selection) baseMeanIn(d int, in func(d, q int) bool) float64 {
	if s.BaseQueries == nil {
		return s.Base[d]
	}
	sum, n := 0.0, 0
	for q, v := range s.BaseQueries[d] {
		if in(d, q) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return s.Base[d]
	}
	return sum / float64(n)
}

// fallback is query q of dataset d under the base, when no point qualifies;
// 0 without BaseQueries.
func (s Selection) fallback(d, q int) float64 {
	if s.BaseQueries == nil {
		return 0
	}
	return s.BaseQueries[d][q]
}

// meanIn is point p's mean over dataset d's queries in; ok is false when
// none is.
func meanIn(scores [][][]float64, d, p int, in func(d, q int) bool) (float64, bool) {
	sum, n := 0.0, 0
	for q, v := range scores[d][p] {
		if in(d, q) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// admissible says whether point p, over the queries in, loses at most
// GuardLoss to the base's mean on every guard dataset.
func (s Selection) admissible(scores [][][]float64, p int, in func(d, q int) bool) bool {
	for d := range scores {
		if s.Decides[d] {
			continue
		}
		v, ok := meanIn(scores, d, p, in)
		if !ok {
			continue
		}
		if v+1e-12 < s.baseMeanIn(d, in)-GuardLoss {
			return false
		}
	}
	return true
}

// decisive is point p's macro mean over the deciding datasets' queries in;
// ok is false when there is none.
func (s Selection) decisive(scores [][][]float64, p int, in func(d, q int) bool) (float64, bool) {
	total, n := 0.0, 0
	for d := range scores {
		if !s.Decides[d] {
			continue
		}
		if v, ok := meanIn(scores, d, p, in); ok {
			total += v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return total / float64(n), true
}

// Choose is the rule: among the candidates that respect every guard over the
// queries in, the best macro mean over the deciding datasets' queries in;
// ties go to the earlier point; -1 when none qualifies.
func (s Selection) Choose(scores [][][]float64, candidates []int, in func(d, q int) bool) int {
	best, bestScore := -1, 0.0
	for _, p := range candidates {
		if !s.admissible(scores, p, in) {
			continue
		}
		v, ok := s.decisive(scores, p, in)
		if ok && (best < 0 || v > bestScore) {
			best, bestScore = p, v
		}
	}
	return best
}

// LODO is leave-one-dataset-out cross-validation: what the selection rule,
// applied to all datasets but one, predicts for the one left out — the
// figure that says whether a setting transfers to a vault it has not seen.
type LODO struct {
	// Chosen[d] is the point chosen without dataset d (-1: none qualified,
	// and the base stays: its score is the estimate).
	Chosen []int
	// Estimate[d] is that point's mean nDCG@10 on dataset d.
	Estimate []float64
	// Macro is the mean of Estimate over the deciding datasets (over all
	// when none decides).
	Macro float64
}

// Mean is the mean of Estimate over every dataset, deciding or guarding
// (Macro is over the deciding ones): the summary's figure beside the
// per-dataset ones.
func (l LODO) Mean() float64 { return mean(l.Estimate) }

// LeaveOneDatasetOut chooses, for each dataset, a point by the selection rule
// on the other datasets and scores it on the one left out.
func LeaveOneDatasetOut(scores [][][]float64, candidates []int, sel Selection) LODO {
	out := LODO{Chosen: make([]int, len(scores)), Estimate: make([]float64, len(scores))}
	total, n := 0.0, 0
	anyDecides := false
	for _, d := range sel.Decides {
		anyDecides = anyDecides || d
	}
	for d := range scores {
		others := func(o, _ int) bool { return o != d }
		p := sel.Choose(scores, candidates, others)
		out.Chosen[d] = p
		switch {
		case p >= 0:
			out.Estimate[d] = mean(scores[d][p])
		case sel.BaseQueries != nil:
			out.Estimate[d] = mean(sel.BaseQueries[d])
		}
		if sel.Decides[d] || !anyDecides {
			total += out.Estimate[d]
			n++
		}
	}
	if n > 0 {
		out.Macro = total / float64(n)
	}
	return out
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
