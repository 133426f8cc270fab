package stages_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

// frozenNow is the clock every recency test reads: never the wall clock.
var frozenNow = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestRecencyBoost(t *testing.T) {
	r := &stages.Recency{Weight: 0.3, HalfLifeDays: 180}
	tests := []struct {
		name string
		r    *stages.Recency
		date time.Time
		want float64
	}{
		{"dated now: the full weight", r, frozenNow, 0.3},
		{"one half-life old: half", r, frozenNow.AddDate(0, 0, -180), 0.15},
		{"two half-lives old: a quarter", r, frozenNow.AddDate(0, 0, -360), 0.075},
		{"half a day old", r, frozenNow.Add(-12 * time.Hour), 0.3 * math.Exp2(-0.5/180)},
		{"dated in the future: counts as now", r, frozenNow.AddDate(1, 0, 0), 0.3},
		{"no date: no boost", r, time.Time{}, 0},
		{"a shorter half-life decays faster", &stages.Recency{Weight: 1, HalfLifeDays: 30}, frozenNow.AddDate(0, 0, -90), 0.125},
		{"zero weight: no boost", &stages.Recency{Weight: 0, HalfLifeDays: 30}, frozenNow, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Boost(frozenNow, tc.date); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Boost = %v, want %v", got, tc.want)
			}
		})
	}
	// Older is never boosted more than newer.
	prev := math.Inf(1)
	for d := 0; d <= 3650; d += 7 {
		b := r.Boost(frozenNow, frozenNow.AddDate(0, 0, -d))
		if b > prev {
			t.Fatalf("boost rises with age at %d days: %v > %v", d, b, prev)
		}
		prev = b
	}
}

func TestRecencyValidate(t *testing.T) {
	tests := []struct {
		r       stages.Recency
		wantErr bool
	}{
		{stages.Recency{}, false},
		{stages.Recency{Weight: 0.005, HalfLifeDays: 1}, false},
		{stages.Recency{Weight: -0.1}, true},
		{stages.Recency{Weight: math.NaN()}, true},
		{stages.Recency{Weight: math.Inf(1)}, true},
		{stages.Recency{HalfLifeDays: -1}, true},
		{stages.Recency{HalfLifeDays: math.Inf(1)}, true},
	}
	for _, tc := range tests {
		r := tc.r
		err := r.Validate()
		if (err != nil) != tc.wantErr {
			t.Errorf("%+v: error %v, want error %v", tc.r, err, tc.wantErr)
		}
	}
	r := stages.Recency{}
	_ = r.Validate()
	if r.Weight != 0.3 || r.HalfLifeDays != 180 {
		t.Errorf("defaults %+v, want weight 0.3, half-life 180", r)
	}
}

func TestRecencyRun(t *testing.T) {
	env := stagetest.Env(t, map[string]string{
		"new.md":    "---\ndate: 2026-03-01\n---\n# New\n\nalpha\n",
		"half.md":   "---\ndate: 2025-09-02\n---\n# Half\n\nalpha\n", // 180 days before frozenNow
		"old.md":    "---\ndate: 2016-03-01\n---\n# Old\n\nalpha\n",
		"future.md": "---\ndate: 2027-01-01\n---\n# Future\n\nalpha\n",
	})
	id := noteIDs(t, stagetest.DB(t, env))
	dates := map[int64]time.Time{id["new.md"]: day("2026-03-01"), id["half.md"]: day("2025-09-02"), id["old.md"]: day("2016-03-01"), id["future.md"]: day("2027-01-01")}
	item := func(path string, score float64) stages.Item {
		return stages.Item{NoteID: id[path], ChunkID: id[path] << 16, Score: score}
	}
	rec := &stages.Recency{Weight: 0.3, HalfLifeDays: 180}
	tests := []struct {
		name    string
		ranking []stages.Item
		want    []string
	}{
		{
			name:    "equal scores: newest first, ties keep their order",
			ranking: []stages.Item{item("old.md", 1), item("half.md", 1), item("future.md", 1), item("new.md", 1)},
			want:    []string{"future.md", "new.md", "half.md", "old.md"},
		},
		{
			name:    "the boost is added: a much better old note stays first",
			ranking: []stages.Item{item("old.md", 2), item("new.md", 1)},
			want:    []string{"old.md", "new.md"},
		},
		{
			name:    "the boost is added: a slightly better old note falls behind",
			ranking: []stages.Item{item("old.md", 1.1), item("new.md", 1)},
			want:    []string{"new.md", "old.md"},
		},
		{
			name:    "negative scores (reranker logits) are lifted, not scaled",
			ranking: []stages.Item{item("half.md", -2), item("new.md", -2.1)},
			want:    []string{"new.md", "half.md"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := stages.NewState(stages.Query{Text: "alpha", Now: frozenNow})
			st.Ranking = append([]stages.Item(nil), tc.ranking...)
			before := append([]stages.Item(nil), tc.ranking...)
			if err := rec.Run(context.Background(), env, st); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range st.Ranking {
				for p, n := range id {
					if n == it.NoteID {
						got = append(got, p)
					}
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
			for _, it := range st.Ranking {
				var base float64
				for _, b := range before {
					if b.NoteID == it.NoteID {
						base = b.Score
					}
				}
				if want := base + rec.Boost(frozenNow, dates[it.NoteID]); math.Abs(it.Score-want) > 1e-12 {
					t.Errorf("note %d score %v, want %v + boost = %v", it.NoteID, it.Score, base, want)
				}
			}
			if n := len(st.Steps); n != 1 || st.Steps[0].Stage != "recency" {
				t.Errorf("steps %+v, want one recency step", st.Steps)
			}
		})
	}

	t.Run("same clock, same order", func(t *testing.T) {
		var first []stages.Item
		for i := 0; i < 20; i++ {
			st := stages.NewState(stages.Query{Text: "alpha", Now: frozenNow})
			st.Ranking = []stages.Item{item("old.md", 1), item("half.md", 1), item("future.md", 1), item("new.md", 1)}
			if err := rec.Run(context.Background(), env, st); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = st.Ranking
			} else if !reflect.DeepEqual(st.Ranking, first) {
				t.Fatalf("run %d: %v, first %v", i, st.Ranking, first)
			}
		}
	})

	t.Run("another clock, another order", func(t *testing.T) {
		// Seen from 2016, the 2016 note is the newest and the others lie in
		// the future (counted as now): the clock is the query's, not the wall's.
		st := stages.NewState(stages.Query{Text: "alpha", Now: day("2016-03-01")})
		st.Ranking = []stages.Item{item("new.md", 1), item("old.md", 1.01)}
		if err := rec.Run(context.Background(), env, st); err != nil {
			t.Fatal(err)
		}
		if st.Ranking[0].NoteID != id["old.md"] {
			t.Errorf("from 2016 the 2016 note should lead, got %v", st.Ranking)
		}
	})

	t.Run("no clock", func(t *testing.T) {
		st := stages.NewState(stages.Query{Text: "alpha"})
		st.Ranking = []stages.Item{item("new.md", 1)}
		if err := rec.Run(context.Background(), env, st); !errors.Is(err, stages.ErrNoClock) {
			t.Errorf("err %v, want ErrNoClock", err)
		}
	})

	t.Run("no ranking", func(t *testing.T) {
		st := stages.NewState(stages.Query{Text: "alpha", Now: frozenNow})
		if err := rec.Run(context.Background(), env, st); !errors.Is(err, stages.ErrNoRanking) {
			t.Errorf("err %v, want ErrNoRanking", err)
		}
	})
}
