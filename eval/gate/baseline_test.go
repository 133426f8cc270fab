package gate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/internal/evaltest"
)

func TestBaselineOf(t *testing.T) {
	b := BaselineOf(evaltest.SampleRun())
	if b.Dataset != "tiny" || b.Queries != 3 || b.Notes != 3 || b.Chunks != 4 {
		t.Fatalf("header %+v", b)
	}
	var names []string
	for _, c := range b.Configs {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "keyword,rerank,vector" {
		t.Errorf("configurations in order %s, want sorted by name", got)
	}
	kw := b.Configs[0]
	if kw.Status != "ok" || kw.Metrics == nil {
		t.Fatalf("keyword: status %q metrics %v", kw.Status, kw.Metrics)
	}
	// keyword: x at 2 (MRR 1/2), y at 2, z at 1 → MRR (0.5+0.5+1)/3
	if got, want := float64(kw.Metrics.MRR10), 2.0/3; got != want {
		t.Errorf("keyword MRR@10 %v, want %v", got, want)
	}
	if got := kw.Ranks; len(got) != 3 || got["a"][0] != 2 || got["b"][0] != 2 || got["c"][0] != 1 {
		t.Errorf("keyword ranks %v", got)
	}
	if rr := b.Configs[1]; rr.Status != "skipped: model not installed: cross-encoder" || rr.Metrics != nil || rr.Ranks != nil {
		t.Errorf("skipped configuration written as %+v", rr)
	}
	if _, ok := b.Configs[2].ByKind["paraphrase"]; !ok {
		t.Errorf("vector by kind %v lacks paraphrase", b.Configs[2].ByKind)
	}
}

func TestBaselineRoundTripAndNoDiff(t *testing.T) {
	b := BaselineOf(evaltest.SampleRun())
	path := filepath.Join(t.TempDir(), "baselines", "tiny.json")
	if err := WriteBaseline(path, b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := DiffBaseline(back, BaselineOf(evaltest.SampleRun())); len(d.Changes)+len(d.Flips) > 0 {
		t.Errorf("a baseline read back differs from the run that wrote it: %v", d)
	}
	if _, err := ReadBaseline(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("reading a missing baseline succeeded")
	}
}

func TestDiff(t *testing.T) {
	cases := []struct {
		name   string
		change func(r *eval.DatasetRun)
		want   []string // substrings, each in some line
	}{
		{"metric and rank moved", func(r *eval.DatasetRun) {
			// keyword now finds nothing for query c.
			q := &r.Configs[1].Queries[2]
			q.Ranked, q.RelevantRanks, q.Score = nil, nil, eval.Score(nil, r.Dataset.Queries[2].Relevant)
			r.Configs[1].Mean = eval.Mean([]eval.Scores{r.Configs[1].Queries[0].Score, r.Configs[1].Queries[1].Score, q.Score})
		}, []string{"keyword: mrr@10 0.6667 → 0.3333", "keyword: query c: relevant ranks [1] → []"}},
		{"configuration added and removed", func(r *eval.DatasetRun) {
			r.Configs[0].Name = "hybrid"
		}, []string{"hybrid: new configuration (ok), not in the baseline", "vector: in the baseline but not run"}},
		{"status changed", func(r *eval.DatasetRun) {
			r.Configs[2].Skipped = ""
			r.Configs[2].Queries = r.Configs[0].Queries
			r.Configs[2].Mean = r.Configs[0].Mean
		}, []string{`rerank: status "skipped: model not installed: cross-encoder" → "ok"`}},
		{"index stamp", func(r *eval.DatasetRun) { r.Stamp = "stamp-two-0123456789" }, []string{"index stamp: stamp-one-01 → stamp-two-01"}},
		{"dataset size", func(r *eval.DatasetRun) { r.Notes = 5 }, []string{"notes 3 → 5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur := evaltest.SampleRun()
			c.change(cur)
			d := DiffBaseline(BaselineOf(evaltest.SampleRun()), BaselineOf(cur))
			if len(d.Flips) > 0 {
				t.Errorf("no near-ties in these runs, yet flips %q", d.Flips)
			}
			all := strings.Join(d.Changes, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("diff lacks %q; got:\n%s", w, all)
				}
			}
		})
	}
}
