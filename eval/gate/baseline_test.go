package gate

import (
	"path/filepath"
	"slices"
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
		want   func([]Finding) bool // accepts the changes
	}{
		{"metric and rank moved", func(r *eval.DatasetRun) {
			// keyword now finds nothing for query c.
			q := &r.Configs[1].Queries[2]
			q.Ranked, q.RelevantRanks, q.Score = nil, nil, eval.Score(nil, r.Dataset.Queries[2].Relevant)
			r.Configs[1].Mean = eval.Mean([]eval.Scores{r.Configs[1].Queries[0].Score, r.Configs[1].Queries[1].Score, q.Score})
		}, func(fs []Finding) bool {
			return has(fs, func(m MeasureMoved) bool {
				return m == MeasureMoved{Config: "keyword", Measure: "mrr@10", Old: "0.6667", Cur: "0.3333"}
			}) &&
				has(fs, func(q QueryMoved) bool {
					return q.Config == "keyword" && q.Query == "c" && slices.Equal(q.OldRanks, []int{1}) && len(q.CurRanks) == 0
				})
		}},
		{"configuration added and removed", func(r *eval.DatasetRun) {
			r.Configs[0].Name = "hybrid"
		}, func(fs []Finding) bool {
			return has(fs, func(c ConfigAdded) bool { return c == ConfigAdded{Config: "hybrid", Status: "ok"} }) &&
				has(fs, func(c ConfigNotRun) bool { return c == ConfigNotRun{Config: "vector"} })
		}},
		{"status changed", func(r *eval.DatasetRun) {
			r.Configs[2].Skipped = ""
			r.Configs[2].Queries = r.Configs[0].Queries
			r.Configs[2].Mean = r.Configs[0].Mean
		}, func(fs []Finding) bool {
			return has(fs, func(c StatusChanged) bool {
				return c == StatusChanged{Config: "rerank", Old: "skipped: model not installed: cross-encoder", Cur: "ok"}
			})
		}},
		{"index stamp", func(r *eval.DatasetRun) { r.Stamp = "stamp-two-0123456789" }, func(fs []Finding) bool {
			return has(fs, func(c StampChanged) bool {
				return c == StampChanged{Old: "stamp-one-0123456789", Cur: "stamp-two-0123456789"}
			})
		}},
		{"dataset size", func(r *eval.DatasetRun) { r.Notes = 5 }, func(fs []Finding) bool {
			return has(fs, func(c DatasetChanged) bool {
				return c == DatasetChanged{Old: DatasetSize{Queries: 3, Notes: 3, Chunks: 4}, Cur: DatasetSize{Queries: 3, Notes: 5, Chunks: 4}}
			})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur := evaltest.SampleRun()
			c.change(cur)
			d := DiffBaseline(BaselineOf(evaltest.SampleRun()), BaselineOf(cur))
			if len(d.Flips) > 0 {
				t.Errorf("no near-ties in these runs, yet flips %+v", d.Flips)
			}
			if !c.want(d.Changes) {
				t.Errorf("the diff lacks the changes expected; got %+v", d.Changes)
			}
		})
	}
}
