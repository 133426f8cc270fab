package eval

import (
	"path/filepath"
	"strings"
	"testing"
)

// sampleRun is a two-configuration run over three queries.
func sampleRun() *DatasetRun {
	ds := &Dataset{Name: "tiny", Queries: []Query{
		{ID: "a", Kind: "vocabulary", Relevant: map[string]int{"x.md": 1}},
		{ID: "b", Kind: "paraphrase", Relevant: map[string]int{"y.md": 2}},
		{ID: "c", Kind: "paraphrase", Relevant: map[string]int{"z.md": 1}},
	}}
	mk := func(name string, ranked [][]string) *ConfigRun {
		cr := &ConfigRun{Name: name}
		var all []Scores
		byKind := map[string][]Scores{}
		for i, q := range ds.Queries {
			qr := QueryRun{ID: q.ID, Kind: q.Kind, Ranked: ranked[i], Score: Score(ranked[i], q.Relevant)}
			for r, p := range ranked[i] {
				if q.Relevant[p] > 0 {
					qr.RelevantRanks = append(qr.RelevantRanks, r+1)
				}
			}
			cr.Queries = append(cr.Queries, qr)
			all = append(all, qr.Score)
			byKind[q.Kind] = append(byKind[q.Kind], qr.Score)
		}
		cr.Mean = Mean(all)
		cr.ByKind = map[string]Scores{}
		for k, v := range byKind {
			cr.ByKind[k] = Mean(v)
		}
		return cr
	}
	return &DatasetRun{Dataset: ds, Stamp: "stamp-one-0123456789", Notes: 3, Chunks: 4, Configs: []*ConfigRun{
		mk("vector", [][]string{{"x.md", "y.md"}, {"y.md"}, {"q.md", "z.md"}}),
		mk("keyword", [][]string{{"y.md", "x.md"}, {"z.md", "y.md"}, {"z.md"}}),
		{Name: "rerank", Skipped: "model not installed: cross-encoder"},
	}}
}

func TestBaselineOf(t *testing.T) {
	b := BaselineOf(sampleRun())
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
	b := BaselineOf(sampleRun())
	path := filepath.Join(t.TempDir(), "baselines", "tiny.json")
	if err := WriteBaseline(path, b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(back, BaselineOf(sampleRun())); len(d.Changes)+len(d.Flips) > 0 {
		t.Errorf("a baseline read back differs from the run that wrote it: %v", d)
	}
	if _, err := ReadBaseline(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("reading a missing baseline succeeded")
	}
}

func TestDiff(t *testing.T) {
	cases := []struct {
		name   string
		change func(r *DatasetRun)
		want   []string // substrings, each in some line
	}{
		{"metric and rank moved", func(r *DatasetRun) {
			// keyword now finds nothing for query c.
			q := &r.Configs[1].Queries[2]
			q.Ranked, q.RelevantRanks, q.Score = nil, nil, Score(nil, r.Dataset.Queries[2].Relevant)
			r.Configs[1].Mean = Mean([]Scores{r.Configs[1].Queries[0].Score, r.Configs[1].Queries[1].Score, q.Score})
		}, []string{"keyword: mrr@10 0.6667 → 0.3333", "keyword: query c: relevant ranks [1] → []"}},
		{"configuration added and removed", func(r *DatasetRun) {
			r.Configs[0].Name = "hybrid"
		}, []string{"hybrid: new configuration (ok), not in the baseline", "vector: in the baseline but not run"}},
		{"status changed", func(r *DatasetRun) {
			r.Configs[2].Skipped = ""
			r.Configs[2].Queries = r.Configs[0].Queries
			r.Configs[2].Mean = r.Configs[0].Mean
		}, []string{`rerank: status "skipped: model not installed: cross-encoder" → "ok"`}},
		{"index stamp", func(r *DatasetRun) { r.Stamp = "stamp-two-0123456789" }, []string{"index stamp: stamp-one-01 → stamp-two-01"}},
		{"dataset size", func(r *DatasetRun) { r.Notes = 5 }, []string{"notes 3 → 5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur := sampleRun()
			c.change(cur)
			d := Diff(BaselineOf(sampleRun()), BaselineOf(cur))
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
