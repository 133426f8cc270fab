package stages_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

// An Env without an index or models refuses, naming what it lacks, in every
// stage that reads them: a zero Env, NewEnv's before WithDB, and nil.
func TestEnvWithoutPartsRefuses(t *testing.T) {
	ctx := context.Background()
	full := stagetest.Env(t, map[string]string{"a.md": "# A\n\nwrites stalled during compaction\n"})
	ranked := func(t *testing.T) *stages.State {
		st := stages.NewState(stages.Query{Text: "compaction", Now: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)})
		if err := validated(t, &stages.Keyword{}).Run(ctx, full, st); err != nil || len(st.Ranking) != 1 {
			t.Fatalf("keyword on the full env: %v, ranking %v", err, st.Ranking)
		}
		return st
	}
	for name, env := range map[string]*stages.Env{
		"zero":              {},
		"nil":               nil,
		"NewEnv without db": stages.NewEnv(nil, stagetest.Models{}),
	} {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				stage  stages.Stage
				ranked bool // the stage reorders a ranking: give it one
			}{
				{&stages.Keyword{}, false},
				{&stages.Vector{}, false},
				{&stages.Hyde{}, false},
				{&stages.Recency{Weight: 0.1, HalfLifeDays: 30}, true},
				{&stages.Rerank{Scorer: "bi-encoder"}, true},
				{&stages.Feedback{RM3: true}, true},
			} {
				st := stages.NewState(stages.Query{Text: "compaction"})
				if tc.ranked {
					st = ranked(t)
				}
				err := validated(t, tc.stage).Run(ctx, env, st)
				if !errors.Is(err, stages.ErrNoIndex) {
					t.Errorf("%s: error %v, want ErrNoIndex", tc.stage.Name(), err)
				}
			}
			if _, err := env.IndexEmbedder(ctx, ""); !errors.Is(err, stages.ErrNoIndex) {
				t.Errorf("IndexEmbedder: error %v, want ErrNoIndex", err)
			}
		})
	}
	for name, env := range map[string]*stages.Env{"zero": {}, "nil": nil, "NewEnv without models": stages.NewEnv(stagetest.DB(t, full), nil)} {
		if _, err := env.Embedder(ctx, ""); !errors.Is(err, stages.ErrNoModels) {
			t.Errorf("%s: Embedder: error %v, want ErrNoModels", name, err)
		}
		if _, err := env.CrossEncoder(ctx, ""); !errors.Is(err, stages.ErrNoModels) {
			t.Errorf("%s: CrossEncoder: error %v, want ErrNoModels", name, err)
		}
	}
	if _, err := stages.NewEnv(nil, stagetest.Models{}).WithDB(stagetest.DB(t, full)).Index(); err != nil {
		t.Errorf("WithDB: %v", err)
	}
}

// The bi-encoder scorer embeds a passage once per Env from NewEnv, and a
// derived Env shares its cache (WithDB); WithoutPassageCache embeds it every
// time.
func TestEnvPassageCache(t *testing.T) {
	ctx := context.Background()
	base := stagetest.Env(t, map[string]string{"a.md": "# A\n\nwrites stalled during compaction\n", "b.md": "# B\n\ncompaction of the log\n"})
	db := stagetest.DB(t, base)
	counted := &countingModels{}
	rerank := func(env *stages.Env) int64 {
		before := counted.passages.Load()
		st := stages.NewState(stages.Query{Text: "compaction"})
		for _, s := range []stages.Stage{&stages.Keyword{}, &stages.Rerank{Scorer: "bi-encoder"}} {
			if err := validated(t, s).Run(ctx, env, st); err != nil {
				t.Fatal(err)
			}
		}
		if len(st.Ranking) != 2 {
			t.Fatalf("ranking %v, want both notes", st.Ranking)
		}
		return counted.passages.Load() - before
	}
	cached := stages.NewEnv(db, counted)
	for i, tc := range []struct {
		env  *stages.Env
		want int64
	}{
		{cached, 2},
		{cached, 0},
		{cached.WithDB(db), 0},
		{cached.WithoutPassageCache(), 2},
		{cached.WithoutPassageCache(), 2},
	} {
		if got := rerank(tc.env); got != tc.want {
			t.Errorf("run %d: embedded %d passages, want %d", i, got, tc.want)
		}
	}
}

func validated(t *testing.T, s stages.Stage) stages.Stage {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}
