package gate

import (
	"reflect"
	"testing"

	"github.com/vault-rag/vault-rag/pipeline"
)

// tol is the pipeline's score tolerance, as the frozen fixtures use it.
const tol = pipeline.ScoreTolerance

func TestCompareRanked(t *testing.T) {
	list := func(entries ...any) []Scored {
		var out []Scored
		for i := 0; i < len(entries); i += 2 {
			out = append(out, Scored{Path: entries[i].(string), Score: entries[i+1].(float64)})
		}
		return out
	}
	base := list("a", 0.90, "b", 0.85, "c", 0.80, "d", 0.75)
	for _, tc := range []struct {
		name        string
		got         []Scored
		tied        []string
		wantChanges bool
		wantFlips   int
		wantDrift   float64
		want        []Finding // the changes, then the flips, when set
	}{
		{name: "identical", got: base},
		{name: "drift below tolerance", got: list("a", 0.90+tol/2, "b", 0.85, "c", 0.80-tol/4, "d", 0.75), wantDrift: tol / 2},
		{name: "drift above tolerance", got: list("a", 0.90, "b", 0.85+3*tol, "c", 0.80, "d", 0.75), wantChanges: true, wantDrift: 3 * tol,
			want: []Finding{ScoreMoved{Path: "b", Want: 0.85, Got: 0.85 + 3*tol, Tolerance: tol}}},
		{name: "flip inside a near-tie", got: list("a", 0.90, "c", 0.80, "b", 0.85, "d", 0.75), tied: []string{"c", "b"}, wantFlips: 2,
			want: []Finding{TiedMoved{Path: "b", From: 2, To: 3}, TiedMoved{Path: "c", From: 3, To: 2}}},
		{name: "flip outside any near-tie", got: list("a", 0.90, "c", 0.80, "b", 0.85, "d", 0.75), wantChanges: true,
			want: []Finding{OrderChanged{Got: "c", Want: "b"}}},
		{name: "a near-tied note may pass one that is not", got: list("a", 0.90, "c", 0.86, "b", 0.85, "d", 0.75), tied: []string{"c"}, wantFlips: 1},
		{name: "two notes that are not near-tied swap beside one that is", got: list("a", 0.90, "d", 0.75, "c", 0.80, "b", 0.85), tied: []string{"c"}, wantChanges: true},
		// A flip upstream moves a fused score by a whole rank: the tied note
		// jumps far, the others keep their order and scores.
		{name: "near-tied note jumps", got: list("d", 0.95, "a", 0.90, "b", 0.85, "c", 0.80), tied: []string{"d"}, wantFlips: 1,
			want: []Finding{TiedMoved{Path: "d", From: 4, To: 1}}},
		{name: "near-tied note enters at the top and pushes one out of the cut", got: list("e", 0.95, "a", 0.90, "b", 0.85, "c", 0.80), tied: []string{"e"}, wantFlips: 2,
			want: []Finding{CutFlip{Path: "d"}, TiedMoved{Path: "e", To: 1}}},
		{name: "a note leaves with no near-tie", got: list("a", 0.90, "b", 0.85, "c", 0.80, "e", 0.70), wantChanges: true,
			want: []Finding{OrderChanged{Got: "e", Want: "d"}}},
		{name: "list got shorter", got: list("a", 0.90, "b", 0.85, "c", 0.80), wantChanges: true,
			want: []Finding{LengthChanged{Want: 4, Got: 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareRanked(base, tc.got, tc.tied, tol)
			if (len(c.Changes) > 0) != tc.wantChanges {
				t.Errorf("changes %+v, want changes: %v", c.Changes, tc.wantChanges)
			}
			if !tc.wantChanges && len(c.Flips) != tc.wantFlips {
				t.Errorf("flips %+v, want %d", c.Flips, tc.wantFlips)
			}
			if d := c.Drift - tc.wantDrift; d > 1e-12 || d < -1e-12 {
				t.Errorf("drift %g, want %g", c.Drift, tc.wantDrift)
			}
			if tc.want != nil && !reflect.DeepEqual(append(c.Changes, c.Flips...), tc.want) {
				t.Errorf("findings %+v, want %+v", append(c.Changes, c.Flips...), tc.want)
			}
		})
	}
}
