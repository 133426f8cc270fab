package eval

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
		best, bestScore := -1, 0.0
		for _, p := range candidates {
			s, ok := Objective(scores, p, train)
			if ok && (best < 0 || s > bestScore) {
				best, bestScore = p, s
			}
		}
		cv.Chosen[f], cv.Train[f] = best, bestScore
		cv.HeldOut[f] = make([]float64, len(scores))
		for d := range scores {
			sum, n := 0.0, 0
			for q, fq := range folds[d] {
				if fq != f {
					continue
				}
				v := 0.0
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
