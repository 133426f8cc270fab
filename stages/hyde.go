package stages

import (
	"context"
	"fmt"
	"strings"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
)

// Hyde is template HyDE: no language model writes a hypothetical answer;
// instead a fixed template pads the query into answer-shaped text, which is
// embedded as a passage (no query instruction) and searched like the vector
// stage, contributing a list of its own. Off by default.
type Hyde struct {
	Limit      int    `yaml:"limit"` // notes to keep (default 40)
	Model      string `yaml:"model"` // embedder; must be the index's (the default)
	Ladder     []int  `yaml:"ladder"`
	Search     string `yaml:"search"`     // binary (default) or exact; see searchMode
	Oversample int    `yaml:"oversample"` // binary: candidates rescored per chunk wanted (default 8)
}

// HydeName is the hyde stage's configuration key and its list's name.
const HydeName = "hyde"

func init() { register(func() Stage { return &Hyde{} }) }

// Name implements Stage.
func (*Hyde) Name() string { return HydeName }

// Retrieves implements Retriever.
func (*Hyde) Retrieves() {}

// Produces implements Producer.
func (*Hyde) Produces() []string { return []string{HydeName} }

// Needs implements ModelUser: the index's embedder.
func (h *Hyde) Needs() []ModelNeed { return []ModelNeed{{Role: models.RoleEmbedder, Name: h.Model}} }

// ModelRoles implements ModelUser.
func (*Hyde) ModelRoles() []models.Role { return []models.Role{models.RoleEmbedder} }

// Validate implements Stage.
func (h *Hyde) Validate() error {
	if h.Limit == 0 {
		h.Limit = 40
	}
	if h.Limit < 1 || h.Limit > 10000 {
		return settingErrorf("limit", "limit %d is outside 1..10000", h.Limit)
	}
	if err := validateSearch(&h.Search, &h.Oversample); err != nil {
		return err
	}
	return validateLadder(&h.Ladder, h.Limit)
}

// Run implements Stage.
func (h *Hyde) Run(ctx context.Context, env *Env, st *State) error {
	emb, err := env.IndexEmbedder(ctx, h.Model)
	if err != nil {
		return err
	}
	doc := Expand(st.Query.Text)
	vecs, err := emb.EmbedPassages(ctx, []string{doc})
	if err != nil {
		return fmt.Errorf("embed hyde expansion: %w", err)
	}
	step, err := vectorStep(ctx, env, index.VectorQuery{Vector: vecs[0], Mode: searchMode(h.Search), Oversample: h.Oversample, Limit: h.Limit, Ladder: h.Ladder, Filter: st.Query.Filter})
	if err != nil {
		return err
	}
	step.Stage = HydeName
	st.produceStep(step)
	return nil
}

// Expand pads a query into the shape of a note that answers it. The template
// is chosen by the question word, so "why" reads like a postmortem's cause
// section and "how" like a runbook's steps. It is deterministic.
func Expand(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	subject := strings.TrimRight(q, "?.! ")
	lower := strings.ToLower(subject)
	first, rest, _ := strings.Cut(lower, " ")
	switch first {
	case "why":
		return fmt.Sprintf("%s\n\nWhat happened and why: %s. The root cause, the symptoms we saw, the timeline, and the fix we applied so it does not happen again.", q, rest)
	case "how":
		return fmt.Sprintf("%s\n\nHow to do it: %s. The steps, the settings and commands involved, an example, and the pitfalls to avoid.", q, rest)
	case "what", "which", "who", "when", "where":
		return fmt.Sprintf("%s\n\nReference: %s. A definition, the relevant details and defaults, and an example.", q, rest)
	default:
		return fmt.Sprintf("%s\n\nNotes on %s: background, how it works, what went wrong, and what we do about it.", q, lower)
	}
}
