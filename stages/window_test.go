package stages_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

// recorder is a cross-encoder double that counts a token a word and records
// the passages it is asked to score.
type recorder struct{ got []string }

func (r *recorder) Score(_ context.Context, _ string, ps []string) ([]float32, error) {
	r.got = append(r.got, ps...)
	out := make([]float32, len(ps))
	for i := range ps {
		out[i] = float32(len(ps) - i)
	}
	return out, nil
}

func (r *recorder) CountTokens(text string) int { return len(strings.Fields(text)) }

type recorderModels struct {
	stagetest.Models
	r *recorder
}

func (m recorderModels) CrossEncoder(context.Context, string) (stages.PairScorer, error) {
	return m.r, nil
}

func words(prefix string, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = prefix
	}
	return strings.Join(w, " ")
}

func TestRerankWindowPassage(t *testing.T) {
	note := "# Long note\n\nintro " + words("alpha", 20) + "\n\n## One\n\n" + words("bravo", 30) +
		"\n\n## Two\n\nzeppelin " + words("charlie", 30) + "\n\n## Three\n\n" + words("delta", 30) +
		"\n\n## Four\n\n" + words("echo", 30) + "\n\n## Huge\n\n" + words("foxtrot", 300) + " yankee " + words("golf", 300) + "\n"
	db := stagetest.DB(t, stagetest.Env(t, map[string]string{"long.md": note}))
	for _, tc := range []struct {
		query, name string
		budget      int
		want        []string // in the passage
		not         []string // not in it
	}{
		// "Two" (31 words + heading) matched; 80 tokens take it, then Three
		// (next first), then One before it does not fit any more.
		{"zeppelin", "neighbours, next first", 80, []string{"Long note", "zeppelin", "delta"}, []string{"bravo", "echo", "alpha"}},
		{"zeppelin", "a wider window takes both sides", 120, []string{"zeppelin", "delta", "bravo"}, []string{"foxtrot"}},
		{"zeppelin", "too small for a neighbour", 40, []string{"zeppelin"}, []string{"delta", "bravo"}},
		// The huge section alone is over budget: its stretch holding the
		// query term is read, not its start.
		{"yankee", "inside a long chunk, the stretch with the query term", 64, []string{"Long note", "yankee"}, []string{"delta"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			env := stages.NewEnv(db, recorderModels{r: rec})
			kw := &stages.Keyword{}
			rr := &stages.Rerank{Passage: "window", WindowTokens: tc.budget}
			for _, s := range []stages.Stage{kw, rr} {
				if err := s.Validate(); err != nil {
					t.Fatal(err)
				}
			}
			st := stages.NewState(stages.Query{Text: tc.query})
			for _, s := range []stages.Stage{kw, rr} {
				if err := s.Run(context.Background(), env, st); err != nil {
					t.Fatalf("%s: %v", s.Name(), err)
				}
			}
			if len(rec.got) != 1 {
				t.Fatalf("scored %d passages, want the one note's", len(rec.got))
			}
			p := rec.got[0]
			if n := rec.CountTokens(p); n > tc.budget {
				t.Errorf("passage of %d tokens, budget %d: %q", n, tc.budget, p)
			}
			for _, w := range tc.want {
				if !strings.Contains(p, w) {
					t.Errorf("passage lacks %q: %q", w, p)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(p, w) {
					t.Errorf("passage holds %q: %q", w, p)
				}
			}
		})
	}
}

func TestRerankWindowValidate(t *testing.T) {
	for _, tc := range []struct {
		r    stages.Rerank
		want string
	}{
		{stages.Rerank{Passage: "window"}, ""},
		{stages.Rerank{Passage: "window", WindowTokens: 8}, "outside 16..512"},
		{stages.Rerank{Passage: "window", WindowTokens: 600}, "outside 16..512"},
		{stages.Rerank{Passage: "chunk", WindowTokens: 100}, "applies to passage: window"},
		{stages.Rerank{Passage: "paragraph"}, "snippet, chunk, note, window"},
	} {
		err := tc.r.Validate()
		switch {
		case tc.want == "" && (err != nil || tc.r.WindowTokens != stages.DefaultWindowTokens):
			t.Errorf("%+v: %v, want the default window", tc.r, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want %q", tc.r, err, tc.want)
		}
	}
}
