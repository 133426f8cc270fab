package sweep

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/stages"
)

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

// writeRoot makes a project root with one base configuration.
func writeRoot(t *testing.T, base string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "configs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "configs", "hybrid.yaml"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

const hybridBase = `# the base's own comment
name: hybrid
description: BM25 and vector lists fused by reciprocal rank
stages:
  - keyword: {limit: 40}
  - vector:
      limit: 40
  - rrf:     {k: 60, limit: 30}
`

func TestParseSweepErrors(t *testing.T) {
	root := writeRoot(t, hybridBase)
	cases := []struct{ name, src, want string }{
		{"unknown key", "base: hybrid\ngrids:\n  rrf.k: [1]\n", "s.yaml:2: unknown key \"grids\""},
		{"duplicate key", "base: hybrid\nbase: hybrid\ngrid: {rrf.k: [1]}\n", "s.yaml:2: duplicate key \"base\""},
		{"no base", "grid: {rrf.k: [1]}\n", "s.yaml:1: base is missing"},
		{"a blank base", "base: \" \"\ngrid: {rrf.k: [1]}\n", "no base configuration: name one of configs/ or experiments/"},
		{"missing base file", "base: configs/none.yaml\ngrid: {rrf.k: [1]}\n", "s.yaml:1: base:"},
		{"no grid", "base: hybrid\n", "s.yaml:1: grid must be a non-empty mapping"},
		{"grid not a mapping", "base: hybrid\ngrid: [1, 2]\n", "s.yaml:2: grid must be"},
		{"values not a list", "base: hybrid\ngrid:\n  rrf.k: 20\n", "s.yaml:3: grid key \"rrf.k\": want a non-empty list"},
		{"empty list", "base: hybrid\ngrid:\n  rrf.k: []\n", "s.yaml:3: grid key \"rrf.k\": want a non-empty list"},
		{"stage not in base", "base: hybrid\ngrid:\n  hyde.limit: [10]\n", "s.yaml:3: grid key \"hyde.limit\": the base (hybrid.yaml) has no hyde stage"},
		{"occurrence not in base", "base: hybrid\ngrid:\n  rrf#2.k: [10]\n", "s.yaml:3: grid key \"rrf#2.k\": the base (hybrid.yaml) has 1 rrf stage(s), not 2"},
		{"no setting", "base: hybrid\ngrid:\n  rrf: [10]\n", "s.yaml:3: grid key \"rrf\": want STAGE.SETTING"},
		{"unknown setting", "base: hybrid\ngrid:\n  rrf.kk: [10]\n", "s.yaml:3: grid key \"rrf.kk\", value 10: stage rrf: unknown key \"kk\""},
		{"invalid value on its own line", "base: hybrid\ngrid:\n  rrf.k:\n    - 20\n    - -5\n", "s.yaml:5: grid key \"rrf.k\", value -5: stage rrf: k -5 must be positive"},
		{"wrong type", "base: hybrid\ngrid:\n  keyword.limit: [forty]\n", "s.yaml:3: grid key \"keyword.limit\", value forty: stage keyword: limit:"},
		{"same value twice", "base: hybrid\ngrid:\n  rrf.k: [20, 20]\n", "s.yaml:3: grid key \"rrf.k\": value 20 is listed twice"},
		{"same setting twice", "base: hybrid\ngrid:\n  rrf.k: [20]\n  rrf#1.k: [30]\n", "s.yaml:4: grid key \"rrf#1.k\": the setting is already swept"},
		{"folds", "base: hybrid\nfolds: 1\ngrid: {rrf.k: [1]}\n", "s.yaml:2: folds must be an integer of at least 2"},
		{"seed", "base: hybrid\nseed: -3\ngrid: {rrf.k: [1]}\n", "s.yaml:2: seed must be a non-negative integer"},
		{"name", "name: a/b\nbase: hybrid\ngrid: {rrf.k: [1]}\n", "s.yaml:1: name \"a/b\" cannot name the winner's configuration sweep-a/b"},
		// The winner must be a name serve --config and the MCP config parameter take.
		{"name with a dot", "name: x.v2\nbase: hybrid\ngrid: {rrf.k: [1]}\n", "s.yaml:1: name \"x.v2\" cannot name"},
		{"name too long for the winner", "name: " + strings.Repeat("n", 59) + "\nbase: hybrid\ngrid: {rrf.k: [1]}\n", "s.yaml:1: name \"nnn"},
		{"weight for a list the base lacks", "base: hybrid\ngrid:\n  rrf.weights.hyde: [2]\n", "s.yaml:3: grid key \"rrf.weights.hyde\", value 2: stage rrf: weights: no stage before it produces a list \"hyde\""},
		{"not a mapping", "- base\n", "s.yaml:1: a sweep is a mapping"},
		{"grid too large", "base: hybrid\ngrid:\n  rrf.k: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]\n  rrf.limit: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]\n  keyword.limit: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]\n", "s.yaml:5: the grid has more than 4096 points"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(c.src), root)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := Parse("s.yaml", []byte("{{{"), root); err == nil {
		t.Error("malformed YAML accepted")
	}
}

func TestSweepPoints(t *testing.T) {
	root := writeRoot(t, hybridBase)
	src := "name: depth\nbase: configs/hybrid.yaml\ngrid:\n  rrf.k: [20, 60]\n  vector.limit: [10, 100]\n  vector.ladder: [[50, 400]]\n"
	sw, err := Parse("s.yaml", []byte(src), root)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Folds != 5 || sw.Seed != 1 || sw.Name != "depth" || sw.Base.Name != "hybrid" {
		t.Errorf("defaults: folds %d seed %d name %q base %q", sw.Folds, sw.Seed, sw.Name, sw.Base.Name)
	}
	pts, err := sw.Points()
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, p := range pts {
		labels = append(labels, p.Label(sw))
		rrf := p.Config.Stages[2].(*stages.RRF)
		vec := p.Config.Stages[1].(*stages.Vector)
		if got := fmt.Sprintf("rrf.k=%d vector.limit=%d vector.ladder=%v", rrf.K, vec.Limit, vec.Ladder); got != strings.ReplaceAll(p.Label(sw), ", ", " ") {
			t.Errorf("point %d decodes to %s, labelled %s", p.Index, got, p.Label(sw))
		}
		if rrf.Limit != 30 || p.Config.Stages[0].(*stages.Keyword).Limit != 40 {
			t.Errorf("point %d changed a setting outside the grid", p.Index)
		}
	}
	want := []string{
		"rrf.k=20 vector.limit=10 vector.ladder=[50, 400]",
		"rrf.k=20 vector.limit=100 vector.ladder=[50, 400]",
		"rrf.k=60 vector.limit=10 vector.ladder=[50, 400]",
		"rrf.k=60 vector.limit=100 vector.ladder=[50, 400]",
	}
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("grid order %q, want %q", labels, want)
	}
	// A stage written without settings gets a mapping.
	root2 := writeRoot(t, "name: bare\nstages:\n  - keyword:\n  - vector:\n  - rrf:\n")
	sw2, err := Parse("s.yaml", []byte("base: hybrid\ngrid:\n  rrf.k: [7]\n"), root2)
	if err != nil {
		t.Fatal(err)
	}
	pts2, err := sw2.Points()
	if err != nil || pts2[0].Config.Stages[2].(*stages.RRF).K != 7 {
		t.Fatalf("setting a bare stage: %v", err)
	}
}

func TestAssignFoldsSeededAndDeterministic(t *testing.T) {
	ids := make([]string, 53)
	for i := range ids {
		ids[i] = fmt.Sprintf("q%02d", i)
	}
	a := AssignFolds("cranfield", ids, 5, 1)
	if b := AssignFolds("cranfield", ids, 5, 1); !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave other folds")
	}
	// Balanced: 53 queries into 5 folds are 11, 11, 11, 10, 10.
	size := map[int]int{}
	for _, f := range a {
		size[f]++
	}
	for f := 0; f < 5; f++ {
		if size[f] != 10 && size[f] != 11 {
			t.Errorf("fold %d holds %d queries, want 10 or 11", f, size[f])
		}
	}
	// The order the queries were read in does not matter.
	rev := make([]string, len(ids))
	for i, id := range ids {
		rev[len(ids)-1-i] = id
	}
	r := AssignFolds("cranfield", rev, 5, 1)
	for i := range ids {
		if a[i] != r[len(ids)-1-i] {
			t.Fatalf("query %s: fold %d read forwards, %d read backwards", ids[i], a[i], r[len(ids)-1-i])
		}
	}
	// Another seed, or another dataset, deals other folds.
	if reflect.DeepEqual(a, AssignFolds("cranfield", ids, 5, 2)) {
		t.Error("seed 2 dealt the folds of seed 1")
	}
	if reflect.DeepEqual(a, AssignFolds("demo", ids, 5, 1)) {
		t.Error("dataset demo dealt the folds of cranfield")
	}
}

func TestCrossValidateKnownAnswer(t *testing.T) {
	// One dataset, 10 queries, 2 folds (even queries fold 0, odd fold 1).
	// Point 0 is perfect on fold 0 and useless on fold 1; point 1 is 0.6
	// everywhere. In-sample point 1 wins (0.6 against 0.5). Held out:
	// fold 0 is scored with the choice made on fold 1 (point 1: 0.6), fold 1
	// with the choice made on fold 0 (point 0: 0). CV = (5·0.6 + 5·0)/10 = 0.3.
	// An estimate that let a query choose its own setting would say 0.6 or
	// more.
	folds := [][]int{{0, 1, 0, 1, 0, 1, 0, 1, 0, 1}}
	p0 := []float64{1, 0, 1, 0, 1, 0, 1, 0, 1, 0}
	p1 := []float64{0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6}
	scores := [][][]float64{{p0, p1}}
	cv := CrossValidate(scores, folds, 2, nil)
	if !reflect.DeepEqual(cv.Chosen, []int{1, 0}) {
		t.Errorf("chosen per fold %v, want [1 0]", cv.Chosen)
	}
	if !near(cv.Estimate[0], 0.3) || !near(cv.Macro, 0.3) {
		t.Errorf("CV estimate %v (macro %v), want 0.3", cv.Estimate[0], cv.Macro)
	}
	if !near(cv.Train[0], 0.6) || !near(cv.Train[1], 1) {
		t.Errorf("training objectives %v, want [0.6 1]", cv.Train)
	}
	if !near(cv.HeldOut[0][0], 0.6) || !near(cv.HeldOut[1][0], 0) {
		t.Errorf("held-out scores %v, want [[0.6] [0]]", cv.HeldOut)
	}
	all := func(d, q int) bool { return true }
	if s, _ := Objective(scores, 1, all); !near(s, 0.6) {
		t.Errorf("in-sample point 1 = %v, want 0.6", s)
	}
}

func TestCrossValidateMacroObjective(t *testing.T) {
	// Two datasets of different sizes: the objective averages their means,
	// so dataset 1's two queries weigh as much as dataset 0's six.
	// Point 0: dataset 0 mean 0.5, dataset 1 mean 0.1 → 0.3.
	// Point 1: dataset 0 mean 0.4, dataset 1 mean 0.3 → 0.35 (wins, though
	// its mean over all 8 queries, 0.375, is below point 0's 0.4).
	scores := [][][]float64{
		{{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, {0.4, 0.4, 0.4, 0.4, 0.4, 0.4}},
		{{0.1, 0.1}, {0.3, 0.3}},
	}
	all := func(d, q int) bool { return true }
	s0, _ := Objective(scores, 0, all)
	s1, _ := Objective(scores, 1, all)
	if !near(s0, 0.3) || !near(s1, 0.35) {
		t.Errorf("objectives %v %v, want 0.3 and 0.35", s0, s1)
	}
	if _, ok := Objective(scores, 0, func(d, q int) bool { return false }); ok {
		t.Error("an objective over no query reported ok")
	}
}

// TestCrossValidateNeverUsesHeldOut changes, fold by fold, the held-out
// queries' scores in every way that would change a leaky choice (the worst
// point made perfect on them, the best made useless) and requires the choice
// for that fold, and every training objective, to stay.
func TestCrossValidateNeverUsesHeldOut(t *testing.T) {
	const k = 3
	scores := [][][]float64{make([][]float64, 4), make([][]float64, 4)}
	sizes := []int{13, 7}
	for d := range scores {
		for p := range scores[d] {
			scores[d][p] = make([]float64, sizes[d])
			for q := range scores[d][p] {
				scores[d][p][q] = float64((p*7+q*3+d*5)%11) / 10
			}
		}
	}
	folds := [][]int{AssignFolds("a", idsN(13), k, 9), AssignFolds("b", idsN(7), k, 9)}
	base := CrossValidate(scores, folds, k, nil)
	for f := 0; f < k; f++ {
		for p := 0; p < 4; p++ {
			for _, v := range []float64{0, 1} {
				mod := cloneScores(scores)
				for d := range mod {
					for q := range mod[d][p] {
						if folds[d][q] == f {
							mod[d][p][q] = v
						}
					}
				}
				got := CrossValidate(mod, folds, k, nil)
				if got.Chosen[f] != base.Chosen[f] || got.Train[f] != base.Train[f] {
					t.Errorf("fold %d: setting point %d's held-out scores to %v changed the choice %d → %d", f, p, v, base.Chosen[f], got.Chosen[f])
				}
				// And every held-out query is scored by its fold's choice.
				for d := range mod {
					for q, fq := range folds[d] {
						if got.PerQuery[d][q] != mod[d][got.Chosen[fq]][q] {
							t.Fatalf("query %d/%d scored %v, not by its fold's choice", d, q, got.PerQuery[d][q])
						}
					}
				}
			}
		}
	}
}

func idsN(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("q%d", i)
	}
	return out
}

func cloneScores(s [][][]float64) [][][]float64 {
	out := make([][][]float64, len(s))
	for d := range s {
		out[d] = make([][]float64, len(s[d]))
		for p := range s[d] {
			out[d][p] = append([]float64(nil), s[d][p]...)
		}
	}
	return out
}
