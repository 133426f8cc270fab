package stages_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/vault-rag/vault-rag/stages"
)

// ranked builds a list whose items are the given notes in order; a note's chunk
// is note*100 + the list's index, so a test can tell which list a chunk came
// from. A zero note is a filler: a note of its own that no case looks at.
func ranked(li int, notes ...int64) stages.List {
	l := stages.List{Stage: "list"}
	for r, n := range notes {
		if n == 0 {
			n = int64(1000 + 100*li + r) // unique per slot
		}
		l.Items = append(l.Items, stages.Item{NoteID: n, ChunkID: n*100 + int64(li), Score: float64(100 - r)})
	}
	return l
}

func ids(items []stages.Item) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.NoteID
	}
	return out
}

func position(items []stages.Item, note int64) int {
	for i, it := range items {
		if it.NoteID == note {
			return i
		}
	}
	return -1
}

// rr is one reciprocal rank, computed at run time as Fuse does (a constant
// expression would be rounded once, from the exact rational).
func rr(k, rank int) float64 { return 1 / float64(k+rank) }

func TestFuseScores(t *testing.T) {
	tests := []struct {
		name   string
		lists  []stages.List
		k      int
		order  []int64 // these notes, in this relative order
		scores map[int64]float64
		count  int
	}{
		{
			name:   "one list keeps its order, 1/(k+rank)",
			lists:  []stages.List{ranked(0, 1, 2, 3)},
			k:      60,
			order:  []int64{1, 2, 3},
			scores: map[int64]float64{1: rr(60, 1), 2: rr(60, 2), 3: rr(60, 3)},
			count:  3,
		},
		{
			name:   "a note in two lists sums its reciprocal ranks",
			lists:  []stages.List{ranked(0, 1, 2), ranked(1, 2, 3)},
			k:      60,
			order:  []int64{2, 1, 3},
			scores: map[int64]float64{2: rr(60, 1) + rr(60, 2), 1: rr(60, 1), 3: rr(60, 2)},
			count:  3,
		},
		{
			name:   "large k: two fourth places beat one first place",
			lists:  []stages.List{ranked(0, 1, 0, 0, 3), ranked(1, 0, 0, 0, 3)},
			k:      60,
			order:  []int64{3, 1},
			scores: map[int64]float64{3: rr(60, 4) + rr(60, 4), 1: rr(60, 1)},
			count:  7,
		},
		{
			name:   "small k: one first place beats two fourth places",
			lists:  []stages.List{ranked(0, 1, 0, 0, 3), ranked(1, 0, 0, 0, 3)},
			k:      1,
			order:  []int64{1, 3},
			scores: map[int64]float64{3: rr(1, 4) + rr(1, 4), 1: rr(1, 1)},
			count:  7,
		},
		{
			name:  "no lists, nothing fused",
			lists: nil,
			k:     60,
		},
		{
			name:  "empty lists, nothing fused",
			lists: []stages.List{{Stage: "keyword"}, {Stage: "vector"}},
			k:     60,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := stages.Fuse(tc.lists, tc.k, 1000)
			if len(got) != tc.count {
				t.Errorf("fused %d notes, want %d", len(got), tc.count)
			}
			for i := 1; i < len(tc.order); i++ {
				a, b := position(got, tc.order[i-1]), position(got, tc.order[i])
				if a < 0 || b < 0 || a > b {
					t.Errorf("fused %v: want note %d before note %d", ids(got), tc.order[i-1], tc.order[i])
				}
			}
			for note, s := range tc.scores {
				p := position(got, note)
				if p < 0 {
					t.Errorf("note %d missing from %v", note, ids(got))
					continue
				}
				if got[p].Score != s {
					t.Errorf("note %d score %v, want %v", note, got[p].Score, s)
				}
			}
			for i := 1; i < len(got); i++ {
				if got[i].Score > got[i-1].Score {
					t.Errorf("scores rise at %d: %v after %v", i, got[i].Score, got[i-1].Score)
				}
			}
		})
	}
}

// TestFuseTieBreaks gives two notes X and Y exactly equal fused scores (k=2
// makes every reciprocal rank a power of two, so sums are exact) and checks
// each tie-break in turn, with the later rules arranged to point the other way.
// The last rule, note id, is a guard for totality only: two notes with the same
// best rank in the same list would share one slot, which lists cannot hold.
func TestFuseTieBreaks(t *testing.T) {
	const X, Y = 7, 8
	tests := []struct {
		name  string
		k     int
		lists []stages.List
		first int64
	}{
		{
			// X: rank 2 once (1/4). Y: rank 6 twice (1/8 + 1/8). Count and list
			// order favour Y; the better best rank decides for X.
			name:  "best rank",
			k:     2,
			lists: []stages.List{ranked(0, 0, 0, 0, 0, 0, Y), ranked(1, 0, X, 0, 0, 0, Y)},
			first: X,
		},
		{
			// X: rank 2 in lists 0 and 1 (1/2). Y: rank 2 in list 2, rank 6 in
			// lists 0 and 1 (1/4 + 1/8 + 1/8). Equal best rank; list order and
			// note id favour X; Y is found by more lists.
			name: "count",
			k:    2,
			lists: []stages.List{
				ranked(0, 0, X, 0, 0, 0, Y),
				ranked(1, 0, X, 0, 0, 0, Y),
				ranked(2, 0, Y),
			},
			first: Y,
		},
		{
			// One list each at the same rank: the earlier list wins, though
			// X has the lower note id.
			name:  "list order",
			k:     2,
			lists: []stages.List{ranked(0, 0, Y), ranked(1, 0, X)},
			first: Y,
		},
		{
			// The same ranks {1, 2, 7} in different lists. Summed in list order
			// the two totals differ in the last bit (Y's comes out larger), so
			// rounding, not the tie-break, would order them.
			name: "equal ranks in other lists sum to exactly equal scores",
			k:    60,
			lists: []stages.List{
				ranked(0, X, 0, 0, 0, 0, 0, Y),
				ranked(1, 0, Y, 0, 0, 0, 0, X),
				ranked(2, Y, X),
			},
			first: X,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := stages.Fuse(tc.lists, tc.k, 1000)
			px, py := position(got, X), position(got, Y)
			if px < 0 || py < 0 {
				t.Fatalf("fused %v lacks X or Y", ids(got))
			}
			if got[px].Score != got[py].Score {
				t.Fatalf("X scores %v and Y %v: the case needs an exact tie", got[px].Score, got[py].Score)
			}
			second := int64(Y)
			if tc.first == Y {
				second = X
			}
			if p1, p2 := position(got, tc.first), position(got, second); p1 > p2 {
				t.Errorf("note %d at %d and note %d at %d: want %d first", tc.first, p1, second, p2, tc.first)
			}
		})
	}
}

func TestFuseChunkFromBestRankedList(t *testing.T) {
	tests := []struct {
		name      string
		lists     []stages.List
		wantChunk int64
	}{
		{"the better rank's list", []stages.List{ranked(0, 0, 0, 5), ranked(1, 5)}, 501},
		{"equal ranks: the earlier list", []stages.List{ranked(0, 5), ranked(1, 5)}, 500},
		{"the better rank even in a later list", []stages.List{ranked(0, 0, 5), ranked(1, 0, 0, 0, 5), ranked(2, 5)}, 502},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := stages.Fuse(tc.lists, 60, 100)
			p := position(got, 5)
			if p < 0 {
				t.Fatalf("note 5 missing from %v", ids(got))
			}
			if got[p].ChunkID != tc.wantChunk {
				t.Errorf("chunk %d, want %d", got[p].ChunkID, tc.wantChunk)
			}
		})
	}
}

func TestFuseLimit(t *testing.T) {
	lists := []stages.List{ranked(0, 1, 2, 3, 4, 5), ranked(1, 5, 4, 3, 2, 1)}
	all := stages.Fuse(lists, 60, 100)
	if len(all) != 5 {
		t.Fatalf("fused %d notes, want 5", len(all))
	}
	for _, limit := range []int{0, 1, 2, 5, 6, 100} {
		got := stages.Fuse(lists, 60, limit)
		want := all[:min(limit, len(all))]
		if !reflect.DeepEqual(got, want) {
			t.Errorf("limit %d: %v, want the first %d of %v", limit, ids(got), min(limit, len(all)), ids(all))
		}
	}
}

// TestFuseDeterministic fuses lists full of ties many times: the order must
// never depend on map iteration.
func TestFuseDeterministic(t *testing.T) {
	var lists []stages.List
	for li := 0; li < 4; li++ {
		var notes []int64
		for r := 0; r < 30; r++ {
			notes = append(notes, int64((r+li*7)%30+1)) // rotations: many equal rank sets
		}
		lists = append(lists, ranked(li, notes...))
	}
	first := stages.Fuse(lists, 60, 30)
	for i := 0; i < 50; i++ {
		if got := stages.Fuse(lists, 60, 30); !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d: %v, first run %v", i, ids(got), ids(first))
		}
	}
}

func TestRRFRun(t *testing.T) {
	r := &stages.RRF{}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.K != 60 || r.Limit != 30 {
		t.Errorf("defaults k=%d limit=%d, want 60 and 30", r.K, r.Limit)
	}
	st := stages.NewState(stages.Query{Text: "q"})
	if err := r.Run(context.Background(), &stages.Env{}, st); !errors.Is(err, stages.ErrNoRanking) {
		t.Errorf("rrf with no lists: %v, want ErrNoRanking", err)
	}
	st.Lists = []stages.List{ranked(0, 1, 2), ranked(1, 2, 3)}
	if err := r.Run(context.Background(), &stages.Env{}, st); err != nil {
		t.Fatal(err)
	}
	if want := stages.Fuse(st.Lists, 60, 30); !reflect.DeepEqual(st.Ranking, want) {
		t.Errorf("ranking %v, want %v", ids(st.Ranking), ids(want))
	}
	if len(st.Steps) != 1 || st.Steps[0].Stage != "rrf" {
		t.Errorf("steps %+v, want one rrf step", st.Steps)
	}
	if len(st.Lists) != 2 {
		t.Errorf("rrf added a list: it reorders, it does not retrieve")
	}
}

func TestRRFValidate(t *testing.T) {
	tests := []struct {
		r       stages.RRF
		wantErr bool
	}{
		{stages.RRF{}, false},
		{stages.RRF{K: 1, Limit: 1}, false},
		{stages.RRF{K: -1}, true},
		{stages.RRF{Limit: -5}, true},
		{stages.RRF{Limit: 10001}, true},
	}
	for _, tc := range tests {
		r := tc.r
		if err := r.Validate(); (err != nil) != tc.wantErr {
			t.Errorf("%+v: error %v, want error %v", tc.r, err, tc.wantErr)
		}
	}
}
