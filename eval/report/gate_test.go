package report

import (
	"errors"
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
	flip := gate.QueryMoved{Config: "hybrid", Query: "q1", OldRanks: []int{2}, CurRanks: []int{1}, OldNDCG: 0.6, CurNDCG: 0.8, NearTied: []string{"a.md"}}
	const flipLine = "hybrid: query q1: relevant ranks [2] → [1], nDCG@10 0.6000 → 0.8000 (near-tie among a.md in both runs)"
	for _, tc := range []struct {
		name string
		diff gate.BaselineDiff
		want []string
		not  []string
	}{
		{"matches", gate.BaselineDiff{Compared: 300},
			[]string{"eval --check: t: 300 per-query results compared, 0 waved through as near-tie flips (at most 3, 1 %)\n", "eval --check: t matches baselines/t.json\n"},
			[]string{"differs", "near-tie flips (notes"}},
		{"flips within the allowance", gate.BaselineDiff{Compared: 300, Flipped: 3, Flips: []gate.Finding{flip}},
			[]string{"3 waved through", "near-tie flips (notes within the tolerance of each other in both runs):\n  " + flipLine + "\n", "t matches baselines/t.json"},
			[]string{"that is a change"}},
		{"too many flips", gate.BaselineDiff{Compared: 50, Flipped: 1, Flips: []gate.Finding{flip}},
			[]string{"(at most 0, 1 %)", "1 near-tie flips are more than 1 % of 50 results: that is a change, not noise\n"},
			[]string{"matches"}},
		{"a real change", gate.BaselineDiff{Compared: 10, Changes: []gate.Finding{gate.ConfigNotRun{Config: "hybrid"}}},
			[]string{"eval --check: t differs from baselines/t.json in 1 places:\n  hybrid: in the baseline but not run\n"},
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

// TestFindingLine: each kind of the gate's findings, worded.
func TestFindingLine(t *testing.T) {
	moved := func(q gate.QueryMoved) gate.QueryMoved {
		q.Config, q.Query, q.OldRanks, q.CurRanks, q.OldNDCG, q.CurNDCG = "keyword", "c", []int{1}, []int{}, 1, 0
		return q
	}
	const query = "keyword: query c: relevant ranks [1] → [], nDCG@10 1.0000 → 0.0000"
	half := gate.FourDecimals(0.5)
	for _, tc := range []struct {
		f    gate.Finding
		want string
	}{
		{gate.Unencodable{Err: errors.New("json: NaN")}, "the baseline cannot be written: json: NaN"},
		{gate.Unencodable{Run: true, Err: errors.New("json: NaN")}, "this run's baseline cannot be written: json: NaN"},
		{gate.DatasetChanged{Old: gate.DatasetSize{Queries: 3, Notes: 3, Chunks: 4}, Cur: gate.DatasetSize{Queries: 3, Notes: 5, Chunks: 4}},
			"dataset: queries 3 → 3, notes 3 → 5, chunks 4 → 4"},
		{gate.EmbedderChanged{Old: "bge-small-en-v1.5", Cur: "bge-small-en-v1.5-q"},
			"embedder: bge-small-en-v1.5 → bge-small-en-v1.5-q (the gate records with bge-small-en-v1.5)"},
		{gate.StampChanged{Old: "stamp-one-0123456789", Cur: "stamp-two-0123456789"},
			"index stamp: stamp-one-01 → stamp-two-01 (the vault, the embedder or the schema changed)"},
		{gate.ConfigAdded{Config: "hybrid", Status: "ok"}, "hybrid: new configuration (ok), not in the baseline"},
		{gate.ConfigNotRun{Config: "vector"}, "vector: in the baseline but not run"},
		{gate.StatusChanged{Config: "rerank", Old: "skipped: model not installed: cross-encoder", Cur: "ok"},
			`rerank: status "skipped: model not installed: cross-encoder" → "ok"`},
		{moved(gate.QueryMoved{}), query + " (no near-tie in both runs explains it)"},
		{moved(gate.QueryMoved{NearTied: []string{"b.md", "z.md"}}), query + " (near-tie among b.md, z.md in both runs)"},
		{moved(gate.QueryMoved{NearTied: []string{"b.md"}, Unexplained: &gate.NoteMoved{Path: "z.md", From: 1, NearTied: 1}}),
			query + " (z.md moved from rank 1 to 0, further than 1 near-tied notes can push it; 0 is outside the top 10)"},
		{gate.QueryMoved{Config: "vector", Query: "a", OldRanks: []int{1}, CurRanks: []int{1}, OldNDCG: 1, CurNDCG: 1,
			AnswerMoved: true, OldAnswer: 1, CurAnswer: 0, OldBytes: 500, CurBytes: 500},
			"vector: query a: relevant ranks [1] → [1], nDCG@10 1.0000 → 1.0000, answer@1 1 → 0, bytes 500 → 500 (no near-tie in both runs explains it)"},
		{gate.MeasureMoved{Config: "keyword", Measure: "mrr@10", Old: "0.6667", Cur: "0.3333"}, "keyword: mrr@10 0.6667 → 0.3333"},
		{gate.MeasureMoved{Config: "vector", Kind: "paraphrase", Measure: "bytes", Old: "600.0000", Cur: "670.0000", ByFlips: true},
			"vector [paraphrase]: bytes 600.0000 → 670.0000 (moved only by the near-tie flips above)"},
		{gate.MeasuresUnreadable{Config: "hybrid", Kind: "vocabulary", Old: gate.Metrics{NDCG10: 0.5}, Cur: gate.Metrics{NDCG10: half}, Err: errors.New("NaN")},
			"hybrid [vocabulary]: measures {Recall1:0 Recall3:0 Recall5:0 Recall10:0 MRR10:0 NDCG10:0.5 Answer1:<nil> Bytes:<nil>} → {Recall1:0 Recall3:0 Recall5:0 Recall10:0 MRR10:0 NDCG10:0.5 Answer1:<nil> Bytes:<nil>} (NaN)"},
		{gate.FormatOnly{}, "the baseline file differs from what this run would write (formatting or order)"},
		{gate.OrderChanged{Got: "c.md", Want: "b.md"}, "order: c.md where b.md was (no near-tie explains it)"},
		{gate.ScoreMoved{Path: "b.md", Want: 0.85, Got: 0.8503, Tolerance: 1e-4}, "score: b.md 0.850000 → 0.850300 (moved 0.0003, tolerance 0.0001)"},
		{gate.LengthChanged{Want: 4, Got: 3}, "length: 4 notes → 3"},
		{gate.CutFlip{Path: "d.md"}, "d.md dropped at the cut (pushed by a near-tied note)"},
		{gate.CutFlip{Path: "e.md", Added: true}, "e.md added at the cut (pushed by a near-tied note)"},
		{gate.TiedMoved{Path: "b.md", From: 2, To: 3}, "b.md rank 2 → 3 (near-tie)"},
		{gate.TiedMoved{Path: "b.md", From: 2}, "b.md left the list (near-tie)"},
		{gate.TiedMoved{Path: "e.md", To: 1}, "e.md entered the list at rank 1 (near-tie)"},
	} {
		if got := FindingLine(tc.f); got != tc.want {
			t.Errorf("%T worded\n  %s\nwant\n  %s", tc.f, got, tc.want)
		}
	}
}

// TestPrintQualityFailure: eval --check's line for a model outside its bound.
func TestPrintQualityFailure(t *testing.T) {
	var b strings.Builder
	PrintQualityFailure(&b, gate.Quality{Dataset: "demo", Config: "hybrid", Model: "int8", Reference: "fp32", ModelNDCG: 0.78, ReferenceNDCG: 0.84, Bound: 0.0398})
	if want := "eval --check: demo / hybrid: int8's mean nDCG@10 is -0.0600 from fp32's, outside ±0.040\n"; b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
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
