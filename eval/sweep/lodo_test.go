package sweep

import (
	"math"
	"testing"
)

// lodoScores: three datasets (two vaults, one guard collection), three
// points. Point 0 is the base; point 1 wins on vault A only; point 2 wins on
// both vaults but loses 0.05 on the guard; every query of a dataset scores
// alike, so a dataset's mean is its value.
func lodoScores() ([][][]float64, Selection) {
	v := func(x float64) []float64 { return []float64{x, x, x, x} }
	scores := [][][]float64{
		{v(0.50), v(0.70), v(0.65)}, // vault A
		{v(0.50), v(0.45), v(0.60)}, // vault B
		{v(0.40), v(0.40), v(0.35)}, // guard collection
	}
	sel := Selection{Decides: []bool{true, true, false}, Base: []float64{0.50, 0.50, 0.40}}
	return scores, sel
}

func TestSelectionChoose(t *testing.T) {
	scores, sel := lodoScores()
	all := func(d, q int) bool { return true }
	// Point 2 has the best vault mean (0.625) but breaks the guard (0.35 <
	// 0.40 − 0.02): point 1 (0.575) is chosen.
	if got := sel.Choose(scores, []int{0, 1, 2}, all); got != 1 {
		t.Errorf("Choose = %d, want 1", got)
	}
	// When every dataset decides (macro over all three: p0 0.4667, p1
	// 0.5167, p2 0.5333), point 2.
	if got := AllDecide(3).Choose(scores, []int{0, 1, 2}, all); got != 2 {
		t.Errorf("AllDecide Choose = %d, want 2", got)
	}
	// A guard loss of exactly GuardLoss is allowed.
	scores[2][2] = []float64{0.38, 0.38, 0.38, 0.38}
	if got := sel.Choose(scores, []int{0, 1, 2}, all); got != 2 {
		t.Errorf("with the guard met exactly: Choose = %d, want 2", got)
	}
}

func TestLeaveOneDatasetOut(t *testing.T) {
	scores, sel := lodoScores()
	got := LeaveOneDatasetOut(scores, []int{0, 1, 2}, sel)
	// Without A: B decides alone, the guard rules out 2 → best on B among
	// {0, 1} is 0 (0.50 > 0.45); scored on A: 0.50.
	// Without B: A decides, 2 ruled out → 1 (0.70); scored on B: 0.45.
	// Without the guard: A and B decide, no guard → 2 (0.625); on it: 0.35.
	wantChosen := []int{0, 1, 2}
	wantEst := []float64{0.50, 0.45, 0.35}
	for d := range wantChosen {
		if got.Chosen[d] != wantChosen[d] || math.Abs(got.Estimate[d]-wantEst[d]) > 1e-12 {
			t.Errorf("left out %d: chose %d (%.4f), want %d (%.4f)", d, got.Chosen[d], got.Estimate[d], wantChosen[d], wantEst[d])
		}
	}
	// The macro estimate is over the deciding datasets: (0.50 + 0.45) / 2.
	if math.Abs(got.Macro-0.475) > 1e-12 {
		t.Errorf("macro %.4f, want 0.4750", got.Macro)
	}
}

// TestCrossValidateRuleGuards: the k-fold choice applies the same rule.
func TestCrossValidateRuleGuards(t *testing.T) {
	scores, sel := lodoScores()
	folds := [][]int{{0, 1, 0, 1}, {0, 1, 0, 1}, {0, 1, 0, 1}}
	cv := CrossValidateRule(scores, folds, 2, nil, sel)
	for f, p := range cv.Chosen {
		if p != 1 {
			t.Errorf("fold %d chose %d, want 1 (2 breaks the guard)", f, p)
		}
	}
	if plain := CrossValidate(scores, folds, 2, nil); plain.Chosen[0] != 2 {
		t.Errorf("without the rule fold 0 chose %d, want 2", plain.Chosen[0])
	}
}

// TestGuardOnTheSameQueries: the guard compares a point with the base over
// the queries the choice sees (a fold's training queries), and where no
// point qualifies the base is what is scored.
func TestGuardOnTheSameQueries(t *testing.T) {
	// One vault, one guard collection of four queries; the base's guard
	// queries are 0.6, 0.6, 0.2, 0.2 (mean 0.4). Point 0 equals the base;
	// point 1 is the base +0.1 on the vault and the base −0.03 on the guard.
	base := [][]float64{{0.5, 0.5, 0.5, 0.5}, {0.6, 0.6, 0.2, 0.2}}
	scores := [][][]float64{
		{base[0], {0.6, 0.6, 0.6, 0.6}},
		{base[1], {0.57, 0.57, 0.17, 0.17}},
	}
	sel := Selection{Decides: []bool{true, false}, Base: []float64{0.5, 0.4}, BaseQueries: base}
	// Training on the two low guard queries only: point 0's mean there is
	// 0.2, below the base's overall 0.4 − 0.02 — it is still the base, and
	// must stay admissible.
	low := func(d, q int) bool { return d == 0 || q >= 2 }
	if got := sel.Choose(scores, []int{0}, low); got != 0 {
		t.Errorf("the base's own point on a subset: Choose = %d, want 0", got)
	}
	// Point 1 loses 0.03 to the base on the same queries: out.
	if got := sel.Choose(scores, []int{1}, low); got != -1 {
		t.Errorf("a point losing 0.03 on the guard: Choose = %d, want -1", got)
	}
	// Cross-validated with only point 1 to choose from: no fold qualifies,
	// and every query is scored with the base, not with 0.
	folds := [][]int{{0, 1, 0, 1}, {0, 1, 0, 1}}
	cv := CrossValidateRule(scores, folds, 2, []int{1}, sel)
	if math.Abs(cv.Estimate[0]-0.5) > 1e-12 || math.Abs(cv.Estimate[1]-0.4) > 1e-12 {
		t.Errorf("CV estimates %v, want the base's 0.5 and 0.4", cv.Estimate)
	}
	// Left out the vault, nothing decides: no point is chosen and the base
	// is the estimate (0.5). Left out the guard, the vault chooses point 1,
	// which scores 0.37 there.
	lodo := LeaveOneDatasetOut(scores, []int{1}, sel)
	if lodo.Chosen[0] != -1 || math.Abs(lodo.Estimate[0]-0.5) > 1e-12 || lodo.Chosen[1] != 1 || math.Abs(lodo.Estimate[1]-0.37) > 1e-12 {
		t.Errorf("LODO %+v, want chosen [-1 1], estimates [0.5 0.37]", lodo)
	}
}
