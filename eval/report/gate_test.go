package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval/gate"
)

// TestPrintBaselineDiff: the lines of eval --check for a dataset that
// matches, one with flips within the allowance, one with too many and one
// with a real change.
func TestPrintBaselineDiff(t *testing.T) {
	for _, tc := range []struct {
		name string
		diff gate.BaselineDiff
		want []string
		not  []string
	}{
		{"matches", gate.BaselineDiff{Compared: 300},
			[]string{"eval --check: t: 300 per-query results compared, 0 waved through as near-tie flips (at most 3, 1 %)\n", "eval --check: t matches baselines/t.json\n"},
			[]string{"differs", "near-tie flips (notes"}},
		{"flips within the allowance", gate.BaselineDiff{Compared: 300, Flipped: 3, Flips: []string{"q1 moved"}},
			[]string{"3 waved through", "near-tie flips (notes within the tolerance of each other in both runs):\n  q1 moved\n", "t matches baselines/t.json"},
			[]string{"that is a change"}},
		{"too many flips", gate.BaselineDiff{Compared: 50, Flipped: 1, Flips: []string{"q1 moved"}},
			[]string{"(at most 0, 1 %)", "1 near-tie flips are more than 1 % of 50 results: that is a change, not noise\n"},
			[]string{"matches"}},
		{"a real change", gate.BaselineDiff{Compared: 10, Changes: []string{"hybrid: query q1 moved"}},
			[]string{"eval --check: t differs from baselines/t.json in 1 places:\n  hybrid: query q1 moved\n"},
			[]string{"matches"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			PrintBaselineDiff(&b, tc.diff, "t", "baselines/t.json")
			for _, s := range tc.want {
				if !strings.Contains(b.String(), s) {
					t.Errorf("lacks %q:\n%s", s, b.String())
				}
			}
			for _, s := range tc.not {
				if strings.Contains(b.String(), s) {
					t.Errorf("says %q:\n%s", s, b.String())
				}
			}
		})
	}
}

// TestQualityReport: the quality table says which configuration is outside
// its bound, and quality.md carries it under its title.
func TestQualityReport(t *testing.T) {
	qs := []gate.Quality{
		{Dataset: "demo", Config: "shipping", Model: "int8", Reference: "fp32", ModelNDCG: 0.8545, ReferenceNDCG: 0.8604, Bound: 0.0398, P: 0.5625},
		{Dataset: "demo", Config: "hybrid", Model: "int8", Reference: "fp32", ModelNDCG: 0.78, ReferenceNDCG: 0.84, Bound: 0.0398, P: 0.01},
	}
	var b strings.Builder
	if err := PrintQuality(&b, qs, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\nint8 (users' default) against fp32 (the gate's), same machine:\n", "| shipping", "-0.0059", "±0.0398", "within", "OUTSIDE", "0.5625"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the quality table lacks %q:\n%s", s, b.String())
		}
	}
	var none strings.Builder
	if err := PrintQuality(&none, nil, false); err != nil || none.Len() != 0 {
		t.Errorf("no quality rows printed %q, %v", none.String(), err)
	}
	dir := t.TempDir()
	if err := WriteQualityReport(dir, qs); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "quality.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "# int8 against fp32\n") || !strings.HasSuffix(string(raw), b.String()) {
		t.Errorf("quality.md:\n%s", raw)
	}
}
