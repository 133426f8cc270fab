package stages_test

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

func TestExpansionTerms(t *testing.T) {
	docs := [][]string{
		{"lease", "renewal", "timer", "renewal"}, // weight 1, |d| 4
		{"renewal", "writer"},                    // weight 1/2, |d| 2
	}
	// renewal: 1·2/4 + .5·1/2 = .75; timer: 1/4; writer: .5/2 = .25; lease is the query's.
	got := stages.ExpansionTerms([]string{"lease"}, docs, 2)
	if want := []string{"renewal", "timer"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ExpansionTerms = %q, want %q (timer and writer tie at .25: alphabetical)", got, want)
	}
	// Stopwords, short words and numbers never expand a query.
	got = stages.ExpansionTerms(nil, [][]string{{"the", "of", "ab", "2024", "cache"}}, 10)
	if want := []string{"cache"}; !reflect.DeepEqual(got, want) {
		t.Errorf("filtered: %q, want %q", got, want)
	}
	if got := stages.ExpansionTerms(nil, [][]string{{}}, 5); len(got) != 0 {
		t.Errorf("empty doc: %q", got)
	}
}

func TestRocchio(t *testing.T) {
	q := []float32{1, 0}
	// centroid of (0,1) and (0,1) is (0,1): .5·(1,0) + .5·(0,1), renormalised.
	got := stages.Rocchio(q, [][]float32{{0, 1}, {0, 1}}, 0.5)
	s := float32(1 / math.Sqrt2)
	if math.Abs(float64(got[0]-s)) > 1e-6 || math.Abs(float64(got[1]-s)) > 1e-6 {
		t.Errorf("Rocchio = %v, want [%v %v]", got, s, s)
	}
	if got := stages.Rocchio(q, nil, 0.5); !reflect.DeepEqual(got, q) {
		t.Errorf("no feedback: %v, want q", got)
	}
	if got := stages.Rocchio(q, [][]float32{{1, 2, 3}}, 0.5); !reflect.DeepEqual(got, q) {
		t.Errorf("wrong dimension: %v, want q", got)
	}
}

func TestFeedbackValidate(t *testing.T) {
	if err := (&stages.Feedback{}).Validate(); err == nil {
		t.Error("feedback with rm3 and rocchio off validated")
	}
	f := &stages.Feedback{RM3: true}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	if f.Docs != 5 || f.Terms != 10 || f.OrigRepeat != 2 || f.Limit != 40 {
		t.Errorf("defaults %+v", *f)
	}
	for _, bad := range []*stages.Feedback{{RM3: true, Docs: 500}, {Rocchio: true, Beta: 1}, {RM3: true, Terms: -1}, {RM3: true, Stopwords: "x"}, {RM3: true, TitleWeight: -1}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", *bad)
		}
	}
}

func TestFeedbackRun(t *testing.T) {
	env := stagetest.Env(t, map[string]string{
		"a.md": "# Lease renewal\nThe lease renewal timer fires every second.\n",
		"b.md": "# Renewal timer\nThe renewal timer drifts under load.\n",
		"c.md": "# Cooking\nPasta and sauce.\n",
	})
	ids := noteIDs(t, stagetest.DB(t, env))
	ctx := context.Background()
	k := &stages.Keyword{}
	v := &stages.Vector{}
	r := &stages.RRF{}
	f := &stages.Feedback{RM3: true, Rocchio: true, Docs: 1, Terms: 1}
	for _, s := range []stages.Stage{k, v, r, f} {
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	st := stages.NewState(stages.Query{Text: "lease"})
	for _, s := range []stages.Stage{k, v, r, f} {
		if err := s.Run(ctx, env, st); err != nil {
			t.Fatal(err)
		}
	}
	// Before feedback only a.md says "lease"; RM3 adds its most frequent
	// other word, "renewal", so the new keyword list finds b.md too.
	var kw []stages.Item
	for _, l := range st.Lists {
		if l.Stage == "keyword" {
			kw = l.Items
		}
	}
	if len(st.Lists) != 2 {
		t.Fatalf("%d lists after feedback, want 2 (replaced, not added)", len(st.Lists))
	}
	found := map[int64]bool{}
	for _, it := range kw {
		found[it.NoteID] = true
	}
	if !found[ids["a.md"]] || !found[ids["b.md"]] || found[ids["c.md"]] {
		t.Errorf("keyword list after RM3 = %v, want a.md and b.md only (%v)", kw, ids)
	}
	info := st.Steps[len(st.Steps)-1].Info
	if !strings.Contains(info, "rm3 +renewal") || !strings.Contains(info, "rocchio from 1 vectors") {
		t.Errorf("info %q", info)
	}
	if err := (&stages.Feedback{RM3: true}).Run(ctx, env, stages.NewState(stages.Query{Text: "x"})); err == nil {
		t.Error("feedback with no lists ran")
	}
}
