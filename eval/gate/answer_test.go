package gate

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/internal/evaltest"
)

// judged is evaltest.SampleRun with passage judgements measured for the
// vector configuration (Configs[0]): each query id given maps to its
// answer@1 and bytes; the other queries and configurations are unjudged.
// The means are computed again, as eval's runner computes them.
func judged(answers map[string][2]int) *eval.DatasetRun {
	r := evaltest.SampleRun()
	c := r.Configs[0]
	var all []eval.Scores
	byKind := map[string][]eval.Scores{}
	for i := range c.Queries {
		q := &c.Queries[i]
		if a, ok := answers[q.ID]; ok {
			q.Score.Answer, q.Score.Bytes, q.Score.Judged = float64(a[0]), float64(a[1]), 1
		}
		all = append(all, q.Score)
		byKind[q.Kind] = append(byKind[q.Kind], q.Score)
	}
	c.Mean = eval.Mean(all)
	for k, v := range byKind {
		c.ByKind[k] = eval.Mean(v)
	}
	return r
}

func configNamed(t *testing.T, b Baseline, name string) BaselineConfig {
	t.Helper()
	for _, c := range b.Configs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no configuration %s in %+v", name, b.Configs)
	return BaselineConfig{}
}

func TestBaselineOfAnswers(t *testing.T) {
	b := BaselineOf(judged(map[string][2]int{"a": {1, 500}, "b": {0, 700}}))
	vec := configNamed(t, b, "vector")
	if want := map[string]int{"a": 1, "b": 0}; !reflect.DeepEqual(vec.Answer, want) {
		t.Errorf("vector answer %v, want %v (c is not judged)", vec.Answer, want)
	}
	if want := map[string]int{"a": 500, "b": 700}; !reflect.DeepEqual(vec.Bytes, want) {
		t.Errorf("vector bytes %v, want %v", vec.Bytes, want)
	}
	if m := vec.Metrics; m == nil || m.Answer1 == nil || m.Bytes == nil || *m.Answer1 != 0.5 || *m.Bytes != 600 {
		t.Errorf("vector metrics %+v, want answer@1 0.5 and bytes 600 over the two judged queries", m)
	}
	// By kind: a alone is vocabulary; b and c paraphrase, of which only b
	// is judged.
	if voc := vec.ByKind["vocabulary"]; voc.Answer1 == nil || *voc.Answer1 != 1 {
		t.Errorf("vector [vocabulary] %+v, want answer@1 1", voc)
	}
	if par := vec.ByKind["paraphrase"]; par.Answer1 == nil || *par.Answer1 != 0 || par.Bytes == nil || *par.Bytes != 700 {
		t.Errorf("vector [paraphrase] %+v, want answer@1 0 and bytes 700", par)
	}

	kw := configNamed(t, b, "keyword")
	if kw.Answer != nil || kw.Bytes != nil || kw.Metrics == nil || kw.Metrics.Answer1 != nil || kw.Metrics.Bytes != nil {
		t.Errorf("keyword, not judged: answer %v bytes %v metrics %+v, want none written", kw.Answer, kw.Bytes, kw.Metrics)
	}

	// As written: answer@1 and bytes only where something was judged.
	raw, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Configs []struct {
			Name    string                     `json:"name"`
			Metrics map[string]json.RawMessage `json:"metrics"`
			Answer  map[string]int             `json:"answer"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	for _, c := range file.Configs {
		_, hasAnswer := c.Metrics["answer@1"]
		_, hasBytes := c.Metrics["bytes"]
		switch c.Name {
		case "vector":
			if string(c.Metrics["answer@1"]) != "0.5000" || string(c.Metrics["bytes"]) != "600.0000" || len(c.Answer) != 2 {
				t.Errorf("vector written with metrics %s and answer %v", c.Metrics, c.Answer)
			}
		case "keyword":
			if hasAnswer || hasBytes || c.Answer != nil {
				t.Errorf("keyword written with answer@1 or bytes: %s", raw)
			}
		}
	}
	if strings.Count(string(raw), `"answer@1"`) != 3 { // vector's mean and its two kinds
		t.Errorf("answer@1 written %d times, want 3:\n%s", strings.Count(string(raw), `"answer@1"`), raw)
	}

	// Nothing judged anywhere: the file is as it was before passages.
	plain, err := BaselineOf(evaltest.SampleRun()).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "answer") || strings.Contains(string(plain), "bytes") {
		t.Errorf("an unjudged run writes answer or bytes:\n%s", plain)
	}
}

func TestBaselineAnswersRoundTrip(t *testing.T) {
	run := func() *eval.DatasetRun { return judged(map[string][2]int{"a": {1, 500}, "c": {0, 1234}}) }
	path := filepath.Join(t.TempDir(), "tiny.json")
	if err := WriteBaseline(path, BaselineOf(run())); err != nil {
		t.Fatal(err)
	}
	back, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if vec := configNamed(t, back, "vector"); vec.Answer["a"] != 1 || vec.Bytes["c"] != 1234 {
		t.Errorf("read back: answer %v bytes %v", vec.Answer, vec.Bytes)
	}
	if d := DiffBaseline(back, BaselineOf(run())); len(d.Changes)+len(d.Flips) > 0 || d.Failed() {
		t.Errorf("a judged baseline read back differs from its run: %+v", d)
	}
}

func TestDiffBaselineAnswerMoved(t *testing.T) {
	old := BaselineOf(judged(map[string][2]int{"a": {1, 500}, "b": {0, 700}}))
	// answerMoved accepts query a of vector, its ranks and nDCG@10 as they
	// were, its answer@1 and bytes moved as given.
	answerMoved := func(answer, bytes [2]int) func(QueryMoved) bool {
		return func(q QueryMoved) bool {
			return q.Config == "vector" && q.Query == "a" && slices.Equal(q.OldRanks, []int{1}) && slices.Equal(q.CurRanks, []int{1}) &&
				q.OldNDCG == 1 && q.CurNDCG == 1 && q.AnswerMoved &&
				[2]int{q.OldAnswer, q.CurAnswer} == answer && [2]int{q.OldBytes, q.CurBytes} == bytes
		}
	}
	cases := []struct {
		name    string
		answers map[string][2]int
		want    func([]Finding) bool // accepts the changes
	}{
		{"answer@1 only", map[string][2]int{"a": {0, 500}, "b": {0, 700}}, func(fs []Finding) bool {
			return has(fs, answerMoved([2]int{1, 0}, [2]int{500, 500})) &&
				has(fs, func(m MeasureMoved) bool {
					return m == MeasureMoved{Config: "vector", Measure: "answer@1", Old: "0.5000", Cur: "0.0000"}
				})
		}},
		{"bytes only", map[string][2]int{"a": {1, 640}, "b": {0, 700}}, func(fs []Finding) bool {
			return has(fs, answerMoved([2]int{1, 1}, [2]int{500, 640})) &&
				has(fs, func(m MeasureMoved) bool {
					return m == MeasureMoved{Config: "vector", Measure: "bytes", Old: "600.0000", Cur: "670.0000"}
				})
		}},
		{"judgements dropped for a query", map[string][2]int{"b": {0, 700}}, func(fs []Finding) bool {
			return has(fs, answerMoved([2]int{1, 0}, [2]int{500, 0}))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur := BaselineOf(judged(c.answers))
			// The ranks and nDCG did not move.
			if o, n := configNamed(t, old, "vector"), configNamed(t, cur, "vector"); !reflect.DeepEqual(o.Ranks, n.Ranks) || !reflect.DeepEqual(o.NDCG, n.NDCG) {
				t.Fatalf("the test moved the ranks: %v → %v", o.Ranks, n.Ranks)
			}
			d := DiffBaseline(old, cur)
			if len(d.Flips) > 0 {
				t.Errorf("no near-ties, yet flips %+v", d.Flips)
			}
			if !d.Failed() {
				t.Error("the gate passes a moved answer")
			}
			if !c.want(d.Changes) {
				t.Errorf("the changes lack those expected; got %+v", d.Changes)
			}
			for _, f := range d.Changes {
				q, isQuery := f.(QueryMoved)
				m, isMean := f.(MeasureMoved)
				if (isQuery && (q.Query != "a" || q.Config != "vector")) || (isMean && m.Config != "vector") {
					t.Errorf("a query or configuration that did not move is reported: %+v", f)
				}
			}
		})
	}
}

func TestDiffBaselineAnswerStill(t *testing.T) {
	answers := map[string][2]int{"a": {1, 500}, "b": {0, 700}}
	d := DiffBaseline(BaselineOf(judged(answers)), BaselineOf(judged(answers)))
	if len(d.Changes) > 0 || len(d.Flips) > 0 || d.Failed() {
		t.Errorf("nothing moved, yet %+v", d)
	}
	if d.Compared != 6 {
		t.Errorf("compared %d results, want 6 (two configurations × three queries)", d.Compared)
	}
}
