package stages_test

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/vault-rag/vault-rag/stages"
)

func items(ids ...int64) []stages.Item {
	out := make([]stages.Item, len(ids))
	for i, id := range ids {
		out[i] = stages.Item{NoteID: id, ChunkID: id * 10, Score: float64(len(ids) - i)}
	}
	return out
}

func scored(pairs ...float64) []stages.Item {
	var out []stages.Item
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, stages.Item{NoteID: int64(pairs[i]), ChunkID: int64(pairs[i]) * 10, Score: pairs[i+1]})
	}
	return out
}

func noteOrder(its []stages.Item) []int64 {
	out := make([]int64, len(its))
	for i, it := range its {
		out[i] = it.NoteID
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestFuseWeightedKnownAnswer(t *testing.T) {
	lists := []stages.List{{Stage: "keyword", Items: items(1, 2, 3)}, {Stage: "vector", Items: items(3, 4, 1)}}
	// k = 1, keyword weight 2: note 1 = 2/2 + 1/4, 3 = 2/4 + 1/2, 2 = 2/3, 4 = 1/3.
	got := stages.FuseWeighted(lists, 1, 10, map[string]float64{"keyword": 2}, 0)
	if want := []int64{1, 3, 2, 4}; !reflect.DeepEqual(noteOrder(got), want) {
		t.Fatalf("order %v, want %v", noteOrder(got), want)
	}
	for i, want := range []float64{1.25, 1, 2.0 / 3, 1.0 / 3} {
		if !near(got[i].Score, want) {
			t.Errorf("note %d score %v, want %v", got[i].NoteID, got[i].Score, want)
		}
	}
	// Depth 1 counts only each list's first note.
	got = stages.FuseWeighted(lists, 1, 10, nil, 1)
	if want := []int64{1, 3}; !reflect.DeepEqual(noteOrder(got), want) {
		t.Errorf("depth 1: %v, want %v (ties by list order)", noteOrder(got), want)
	}
	// Unit weights and no depth equal plain Fuse.
	if a, b := stages.FuseWeighted(lists, 60, 10, nil, 0), stages.Fuse(lists, 60, 10); !reflect.DeepEqual(a, b) {
		t.Errorf("FuseWeighted with unit weights %v differs from Fuse %v", a, b)
	}
	// Weight 0 silences a list, leaving its notes' order to the tie-breaks.
	got = stages.FuseWeighted(lists, 1, 10, map[string]float64{"vector": 0}, 0)
	if want := []int64{1, 2, 3, 4}; !reflect.DeepEqual(noteOrder(got), want) {
		t.Errorf("vector weight 0: %v, want %v", noteOrder(got), want)
	}
}

// TestFuseListWeight: a list's own weight (Keyword.Evidence) multiplies the
// configuration's; a weighted list of weight 1 fuses as an unweighted one.
func TestFuseListWeight(t *testing.T) {
	lists := []stages.List{{Stage: "keyword", Items: items(1, 2, 3), Weighted: true, Weight: 0.5}, {Stage: "vector", Items: items(3, 4, 1)}}
	// k = 1, keyword weight 2 × 0.5: note 1 = 1/2 + 1/4, 3 = 1/4 + 1/2, 2 = 1/3, 4 = 1/3.
	got := stages.FuseWeighted(lists, 1, 10, map[string]float64{"keyword": 2}, 0)
	for i, want := range []float64{0.75, 0.75, 1.0 / 3, 1.0 / 3} {
		if !near(got[i].Score, want) {
			t.Errorf("note %d score %v, want %v", got[i].NoteID, got[i].Score, want)
		}
	}
	lists[0].Weight = 1
	if a, b := stages.FuseWeighted(lists, 60, 10, nil, 0), stages.Fuse(lists, 60, 10); !reflect.DeepEqual(a, b) {
		t.Errorf("a list of weight 1 %v differs from Fuse %v", a, b)
	}
	lists[0].Weight = 0
	if got := noteOrder(stages.FuseWeighted(lists, 1, 10, nil, 0)); !reflect.DeepEqual(got[:2], []int64{3, 4}) {
		t.Errorf("keyword list of weight 0: %v, want the vector list's order first", got)
	}
}

func TestNormalize(t *testing.T) {
	in := scored(1, 10, 2, 6, 3, 2)
	mm, absent := stages.Normalize(in, stages.NormMinMax)
	if want := []float64{1, 0.5, 0}; !reflect.DeepEqual(mm, want) || absent != 0 {
		t.Errorf("minmax %v absent %v, want %v 0", mm, absent, want)
	}
	z, absent := stages.Normalize(in, stages.NormZScore)
	// mean 6, population sd sqrt(32/3)
	sd := math.Sqrt(32.0 / 3)
	for i, want := range []float64{4 / sd, 0, -4 / sd} {
		if !near(z[i], want) {
			t.Errorf("zscore[%d] = %v, want %v", i, z[i], want)
		}
	}
	if !near(absent, -4/sd) {
		t.Errorf("zscore absent %v, want the lowest z %v", absent, -4/sd)
	}
	r, _ := stages.Normalize(in, stages.NormRank)
	for i, want := range []float64{1, 2.0 / 3, 1.0 / 3} {
		if !near(r[i], want) {
			t.Errorf("rank[%d] = %v, want %v", i, r[i], want)
		}
	}
	// Equal scores: no division by zero.
	flat := scored(1, 3, 2, 3)
	if v, _ := stages.Normalize(flat, stages.NormMinMax); !reflect.DeepEqual(v, []float64{1, 1}) {
		t.Errorf("flat minmax %v", v)
	}
	if v, _ := stages.Normalize(flat, stages.NormZScore); !reflect.DeepEqual(v, []float64{0, 0}) {
		t.Errorf("flat zscore %v", v)
	}
	if v, a := stages.Normalize(nil, stages.NormMinMax); len(v) != 0 || a != 0 {
		t.Errorf("empty: %v %v", v, a)
	}
}

func TestFuseConvexKnownAnswer(t *testing.T) {
	kw := stages.List{Stage: "keyword", Items: scored(1, 12, 2, 8, 3, 4)}      // minmax 1, .5, 0
	vec := stages.List{Stage: "vector", Items: scored(2, 0.9, 4, 0.8, 1, 0.5)} // minmax 1, .75, 0
	// weights keyword 0.4, vector 0.6:
	// 1: .4·1 + .6·0 = .4; 2: .4·.5 + .6·1 = .8; 3: .4·0 + absent 0 = 0; 4: 0 + .6·.75 = .45
	got := stages.FuseConvex([]stages.List{kw, vec}, 10, stages.NormMinMax, map[string]float64{"keyword": 0.4, "vector": 0.6}, 0)
	if want := []int64{2, 4, 1, 3}; !reflect.DeepEqual(noteOrder(got), want) {
		t.Fatalf("order %v, want %v", noteOrder(got), want)
	}
	for i, want := range []float64{0.8, 0.45, 0.4, 0} {
		if !near(got[i].Score, want) {
			t.Errorf("note %d: %v, want %v", got[i].NoteID, got[i].Score, want)
		}
	}
	// The chunk comes from the list where the note ranked best.
	if got[0].ChunkID != 20 {
		t.Errorf("chunk %d, want 20", got[0].ChunkID)
	}
	// Depth 2 drops each list's third note, and renormalises over two.
	got = stages.FuseConvex([]stages.List{kw, vec}, 10, stages.NormMinMax, nil, 2)
	// keyword 1→1, 2→0; vector 2→1, 4→0: 1 = 1, 2 = 1, 4 = 0
	if want := []int64{2, 1, 4}; !reflect.DeepEqual(noteOrder(got), want) {
		t.Errorf("depth 2: %v, want %v (1 and 2 tie at 1, both best rank 1; 2 is in more lists)", noteOrder(got), want)
	}
	// z-score: an absent note gets the list's lowest z, not zero.
	got = stages.FuseConvex([]stages.List{kw, vec}, 10, stages.NormZScore, nil, 0)
	if len(got) != 4 {
		t.Fatalf("zscore: %v", got)
	}
	if got[0].NoteID != 2 {
		t.Errorf("zscore first %d, want 2 (high in both)", got[0].NoteID)
	}
	if got := stages.FuseConvex([]stages.List{kw, vec}, 2, stages.NormRank, nil, 0); len(got) != 2 {
		t.Errorf("limit 2: %v", got)
	}
}

func TestCodeLike(t *testing.T) {
	for _, q := range []string{"FERR-4102 after deploy", "where is lease_ttl_ms", "sort by file.mtime", "--icon-size",
		"what does addRibbonIcon return", "on('file-open') fires twice"} {
		if !stages.CodeLike(q) {
			t.Errorf("CodeLike(%q) = false", q)
		}
	}
	for _, q := range []string{"how do I save settings", "TypeScript types for the API", "why is it slow?", "version 1.5 changes", "a well-known thing", "", "-"} {
		if stages.CodeLike(q) {
			t.Errorf("CodeLike(%q) = true", q)
		}
	}
}

func TestConvexStage(t *testing.T) {
	c := &stages.Convex{Weights: map[string]float64{"keyword": 1, "vector": 0}, CodeWeights: map[string]float64{"keyword": 0, "vector": 1}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	kw := stages.List{Stage: "keyword", Items: scored(1, 3, 2, 1)}
	vec := stages.List{Stage: "vector", Items: scored(2, 0.9, 1, 0.1)}
	for _, tc := range []struct {
		q     string
		first int64
	}{{"how does it work", 1}, {"where is lease_ttl_ms", 2}} {
		st := stages.NewState(stages.Query{Text: tc.q})
		st.Lists = []stages.List{kw, vec}
		if err := c.Run(context.Background(), nil, st); err != nil {
			t.Fatal(err)
		}
		if st.Ranking[0].NoteID != tc.first {
			t.Errorf("%q: first %d, want %d", tc.q, st.Ranking[0].NoteID, tc.first)
		}
	}
	if err := c.Run(context.Background(), nil, stages.NewState(stages.Query{Text: "x"})); err == nil {
		t.Error("convex with no lists ran")
	}
	for _, bad := range []*stages.Convex{{Norm: "softmax"}, {Limit: -1}, {Depth: -2}, {Weights: map[string]float64{"vector": -1}},
		{CodeWeights: map[string]float64{"keyword": math.NaN()}}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", *bad)
		}
	}
	r := &stages.RRF{Depth: -1}
	if err := r.Validate(); err == nil {
		t.Error("rrf depth -1 validated")
	}
}
