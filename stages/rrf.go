package stages

import "context"

// RRF fuses every list produced so far by reciprocal rank: a note scores
// Σ 1/(k + rank) over the lists it appears in, by position only, so lists with
// incomparable scores (bm25, cosine) combine fairly.
type RRF struct {
	K     int `yaml:"k"`     // rank constant (default 60)
	Limit int `yaml:"limit"` // notes to keep (default 30)
	// Weights scale each list's share by list name (default 1 each) and
	// Depth counts only each list's first notes (0: all); see fusion.go.
	Weights map[string]float64 `yaml:"weights"`
	Depth   int                `yaml:"depth"`
}

// RRFName is the rrf stage's configuration key.
const RRFName = "rrf"

func init() { register(func() Stage { return &RRF{} }) }

// Name implements Stage.
func (*RRF) Name() string { return RRFName }

// ListsNamed implements ListReader: the weights' lists.
func (r *RRF) ListsNamed() []ListRef { return listRefs("weights", r.Weights) }

// Validate implements Stage.
func (r *RRF) Validate() error {
	if r.K == 0 {
		r.K = 60
	}
	if r.Limit == 0 {
		r.Limit = 30
	}
	if r.K < 1 {
		return settingErrorf("k", "k %d must be positive", r.K)
	}
	if r.Limit < 1 || r.Limit > 10000 {
		return settingErrorf("limit", "limit %d is outside 1..10000", r.Limit)
	}
	if r.Depth < 0 || r.Depth > 10000 {
		return settingErrorf("depth", "depth %d is outside 0..10000", r.Depth)
	}
	return validateWeights("weights", r.Weights)
}

// Run implements Stage.
func (r *RRF) Run(ctx context.Context, env *Env, st *State) error {
	if len(st.Lists) == 0 {
		return ErrNoRanking
	}
	if len(r.Weights) > 0 || r.Depth > 0 || anyWeighted(st.Lists) {
		st.rerank(r.Name(), FuseWeighted(st.Lists, r.K, r.Limit, r.Weights, r.Depth), "")
		st.markSameOnEveryCPU() // a function of ranks alone
		return nil
	}
	st.rerank(r.Name(), Fuse(st.Lists, r.K, r.Limit), "")
	st.markSameOnEveryCPU() // a function of ranks alone
	return nil
}

// Fuse is reciprocal rank fusion. Ties in the fused score go to the note with
// the better best rank, then the one found by more lists, then the earlier
// list, then the lower note id: a total order, so the result never depends on
// map iteration or sort stability. A note's chunk is the one from the list
// where it ranked best.
func Fuse(lists []List, k, limit int) []Item {
	// Shares are summed largest first (fuseScored), i.e. in rank order, not
	// list order: floating-point addition is not associative, and notes
	// holding the same ranks in different lists must score exactly equal so
	// the tie-break, not rounding, orders them.
	return fuseScored(lists, limit, func(_, r int, _ Item) (float64, bool) { return 1 / float64(k+r), true }, nil)
}
