package stages

import (
	"context"
	"fmt"
)

// Keyword is BM25 over title and body with SQLite FTS5 (porter stemming). User
// text reaches FTS5 only as quoted terms, never as query syntax.
type Keyword struct {
	Limit int `yaml:"limit"` // notes to keep (default 40)
}

// Name implements Stage.
func (*Keyword) Name() string { return "keyword" }

// Retrieves implements Retriever.
func (*Keyword) Retrieves() {}

// Validate implements Stage.
func (k *Keyword) Validate() error {
	if k.Limit == 0 {
		k.Limit = 40
	}
	if k.Limit < 1 || k.Limit > 10000 {
		return fmt.Errorf("limit %d is outside 1..10000", k.Limit)
	}
	return nil
}

// Run implements Stage.
func (k *Keyword) Run(ctx context.Context, env *Env, st *State) error {
	match := MatchExpr(st.Query.Text)
	if match == "" {
		st.produce(k.Name(), nil, "no searchable terms in the query", "")
		st.markExact()
		return nil
	}
	hits, err := env.DB.Keyword(ctx, match, k.Limit, st.Query.Filter)
	if err != nil {
		return err
	}
	st.produce(k.Name(), notesFromHits(hits, k.Limit), "", "")
	st.markExact() // bm25 from SQLite: the same on every CPU
	return nil
}
