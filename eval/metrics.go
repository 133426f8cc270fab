package eval

import "math"

// cutoffs are the recall depths measured. They are not an option: the
// baselines (gate.Metrics), the reports and the gate read exactly these four.
var cutoffs = [...]int{1, 3, 5, 10}

// Cutoffs returns the recall depths measured, a new slice on every call.
func Cutoffs() []int { return append([]int(nil), cutoffs[:]...) }

// Scores are one query's (or a mean's) measures.
type Scores struct {
	Recall map[int]float64 // recall@k: fraction of the relevant notes in the top k
	MRR    float64         // reciprocal rank of the first relevant note within 10
	NDCG   float64         // nDCG@10 with linear gain (trec_eval's ndcg_cut_10)
	// Answer is answer@1: 1 when the first note's passages, at the default
	// detail, hold a sentence judged to answer the query in that note
	// (Dataset.Answers), else 0. Bytes is the size of the text a model
	// reads of vault_search's answer (SearchResult.Text) for the first
	// AnswerDepth notes at the default detail.
	// Judged counts the queries with passage judgements that they were
	// measured on (1 or 0 for one query); a mean averages both over those.
	Answer float64
	Bytes  float64
	Judged int
}

// Score measures one ranking (note paths, best first) against judgements.
func Score(ranked []string, rel map[string]int) Scores {
	s := Scores{Recall: map[int]float64{}}
	nrel := 0
	for _, g := range rel {
		if g > 0 {
			nrel++
		}
	}
	if nrel == 0 {
		return s
	}
	for _, k := range cutoffs {
		found := 0
		for _, p := range ranked[:min(k, len(ranked))] {
			if rel[p] > 0 {
				found++
			}
		}
		s.Recall[k] = float64(found) / float64(nrel)
	}
	for i, p := range ranked[:min(10, len(ranked))] {
		if rel[p] > 0 {
			s.MRR = 1 / float64(i+1)
			break
		}
	}
	s.NDCG = ndcg(ranked, rel, 10)
	return s
}

func ndcg(ranked []string, rel map[string]int, k int) float64 {
	dcg := 0.0
	for i, p := range ranked[:min(k, len(ranked))] {
		// A grade of 0 or below is judged non-relevant and gains nothing,
		// as in trec_eval (a negative grade must not subtract).
		if g := rel[p]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	var grades []int
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	// ideal: grades in descending order
	for i := 1; i < len(grades); i++ {
		for j := i; j > 0 && grades[j] > grades[j-1]; j-- {
			grades[j], grades[j-1] = grades[j-1], grades[j]
		}
	}
	idcg := 0.0
	for i, g := range grades[:min(k, len(grades))] {
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Mean averages scores.
func Mean(all []Scores) Scores {
	m := Scores{Recall: map[int]float64{}}
	if len(all) == 0 {
		return m
	}
	for _, s := range all {
		for _, k := range cutoffs {
			m.Recall[k] += s.Recall[k]
		}
		m.MRR += s.MRR
		m.NDCG += s.NDCG
		if s.Judged > 0 {
			m.Answer += s.Answer
			m.Bytes += s.Bytes
			m.Judged += s.Judged
		}
	}
	n := float64(len(all))
	for _, k := range cutoffs {
		m.Recall[k] /= n
	}
	m.MRR /= n
	m.NDCG /= n
	if m.Judged > 0 {
		m.Answer /= float64(m.Judged)
		m.Bytes /= float64(m.Judged)
	}
	return m
}
