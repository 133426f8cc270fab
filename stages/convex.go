package stages

import "context"

// Convex fuses every list so far by a convex combination of normalised scores
// (Bruch, Gai and Ingber, TOIS 2023): Σ w_list · norm(score). Unlike RRF it
// reads how far apart the scores are, not only their order. With CodeWeights
// set the weights adapt to the query's shape: a query holding a code-like
// token (lease_ttl_ms, file.mtime, --flag, FERR-4102, addRibbonIcon) is fused
// with CodeWeights, any other with Weights.
type Convex struct {
	Norm        string             `yaml:"norm"`         // minmax (default), zscore or rank
	Weights     map[string]float64 `yaml:"weights"`      // by list name (keyword, vector, hyde); default 1 each
	CodeWeights map[string]float64 `yaml:"code_weights"` // weights for a code-like query; empty: Weights always
	Depth       int                `yaml:"depth"`        // notes of each list that count (0: all)
	Limit       int                `yaml:"limit"`        // notes to keep (default 30)
}

// ConvexName is the convex stage's configuration key.
const ConvexName = "convex"

func init() { register(func() Stage { return &Convex{} }) }

// Name implements Stage.
func (*Convex) Name() string { return ConvexName }

// ListsNamed implements ListReader: the lists of both weights.
func (c *Convex) ListsNamed() []ListRef {
	return append(listRefs("weights", c.Weights), listRefs("code_weights", c.CodeWeights)...)
}

// Validate implements Stage.
func (c *Convex) Validate() error {
	switch c.Norm {
	case "":
		c.Norm = NormMinMax
	case NormMinMax, NormZScore, NormRank:
	default:
		return settingErrorf("norm", "norm %q is not %s, %s or %s", c.Norm, NormMinMax, NormZScore, NormRank)
	}
	if c.Limit == 0 {
		c.Limit = 30
	}
	if c.Limit < 1 || c.Limit > 10000 {
		return settingErrorf("limit", "limit %d is outside 1..10000", c.Limit)
	}
	if c.Depth < 0 || c.Depth > 10000 {
		return settingErrorf("depth", "depth %d is outside 0..10000", c.Depth)
	}
	if err := validateWeights("weights", c.Weights); err != nil {
		return err
	}
	return validateWeights("code_weights", c.CodeWeights)
}

// Run implements Stage.
func (c *Convex) Run(ctx context.Context, env *Env, st *State) error {
	if len(st.Lists) == 0 {
		return ErrNoRanking
	}
	w, info := c.Weights, ""
	if len(c.CodeWeights) > 0 && codeLike(st.Query.Text) {
		w, info = c.CodeWeights, "code-like query: code_weights"
	}
	st.rerank(c.Name(), fuseConvex(st.Lists, c.Limit, c.Norm, w, c.Depth), info)
	return nil
}
