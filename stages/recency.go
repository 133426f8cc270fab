package stages

import (
	"context"
	"errors"
	"math"
	"time"
)

// Recency adds a boost that halves every HalfLifeDays of a note's age, measured
// from the query's Now to the note's date (frontmatter, else file name, else
// file time). It is additive: the reranker's scores are signed logits, and a
// multiplier would make a poor match's negative score worse the newer it is.
type Recency struct {
	Weight       float64 `yaml:"weight"`         // boost for a note dated now (default 0.3)
	HalfLifeDays float64 `yaml:"half_life_days"` // default 180
}

// RecencyName is the recency stage's configuration key.
const RecencyName = "recency"

func init() { register(func() Stage { return &Recency{} }) }

// Name implements Stage.
func (*Recency) Name() string { return RecencyName }

// Validate implements Stage.
func (r *Recency) Validate() error {
	if r.Weight == 0 {
		r.Weight = 0.3
	}
	if r.HalfLifeDays == 0 {
		r.HalfLifeDays = 180
	}
	if r.Weight < 0 || math.IsNaN(r.Weight) || math.IsInf(r.Weight, 0) {
		return settingErrorf("weight", "weight %v must be a non-negative number", r.Weight)
	}
	if r.HalfLifeDays <= 0 || math.IsNaN(r.HalfLifeDays) || math.IsInf(r.HalfLifeDays, 0) {
		return settingErrorf("half_life_days", "half_life_days %v must be positive", r.HalfLifeDays)
	}
	return nil
}

// ErrNoClock says a query reached the recency stage without a clock.
var ErrNoClock = errors.New("recency needs the query's now (stages never read the wall clock)")

// Run implements Stage.
func (r *Recency) Run(ctx context.Context, env *Env, st *State) error {
	if st.Ranking == nil && len(st.Steps) == 0 {
		return ErrNoRanking
	}
	if st.Query.Now.IsZero() {
		return ErrNoClock
	}
	db, err := env.Index()
	if err != nil {
		return err
	}
	notes, err := st.Notes(ctx, db, st.Ranking)
	if err != nil {
		return err
	}
	out := make([]Item, len(st.Ranking))
	for i, it := range st.Ranking {
		date, _ := time.Parse("2006-01-02", notes[it.NoteID].Date)
		it.Score += r.Boost(st.Query.Now, date)
		out[i] = it
	}
	sortByScore(out)
	exact := st.rankingSameOnEveryCPU()
	st.rerank(r.Name(), out, "")
	if exact {
		st.markSameOnEveryCPU() // a date-derived boost added to exact scores
	}
	return nil
}

// Boost is the additive boost for a note dated date, seen at now. A note dated
// in the future counts as dated now.
func (r *Recency) Boost(now, date time.Time) float64 {
	if date.IsZero() {
		return 0
	}
	age := now.Sub(date).Hours() / 24
	if age < 0 {
		age = 0
	}
	return r.Weight * math.Exp2(-age/r.HalfLifeDays)
}
