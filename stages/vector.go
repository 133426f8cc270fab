package stages

import (
	"context"
	"fmt"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
)

// Vector is nearest-neighbour search over chunk embeddings, run by the index
// (index.DB.Vector): each note's nearest chunk, from a binary first pass (one
// sign bit per dimension) rescored with the float vectors, or from an exact
// scan with sqlite-vec (search: exact).
//
// Structured filters apply after the KNN, and filtering a truncated top-K can
// leave nothing for a scope the vault does cover. So when a filter is set, the
// search escalates K along Ladder until enough in-scope notes survive, the
// index drains, or the ladder ends, and the stage says which: "nothing
// matched" and "stopped looking" are different answers.
type Vector struct {
	Limit      int    `yaml:"limit"`      // notes to keep (default 40)
	Model      string `yaml:"model"`      // embedder; must be the index's (the default)
	Ladder     []int  `yaml:"ladder"`     // chunk counts to try, ascending (default 4×limit, 16×, 64×, 4096)
	Search     string `yaml:"search"`     // binary (default) or exact; see searchMode
	Oversample int    `yaml:"oversample"` // binary: candidates rescored per chunk wanted (default 8)
	// Text is which of the request's texts are embedded, joined: query (the
	// default), keywords, answer (see SourceQuery); EmbedAs embeds them as a
	// query (the default, with the model's query instruction) or as a
	// passage.
	Text    []string `yaml:"text"`
	EmbedAs string   `yaml:"embed_as"`
	// List names the list the stage produces, for fusion weights (default
	// VectorName).
	List string `yaml:"list"`
	// Vet, when set, embeds the client's texts only when they are about the
	// question (see Keyword.Vet).
	Vet int `yaml:"vet"`
}

// VectorName is the vector stage's configuration key and its list's default
// name.
const VectorName = "vector"

func init() { register(func() Stage { return &Vector{} }) }

// The search setting: how a KNN runs (index.VectorMode). "binary" (the
// default) ranks every chunk by one sign bit per dimension (centred) and
// rescores the best oversample × k with the float vectors; "exact" scans
// every float vector (sqlite-vec). The exact path stays for measuring the
// binary one and for anyone who wants it: `vector: {search: exact}`.
const (
	searchBinary = "binary"
	searchExact  = "exact"
)

// searchMode is a validated search setting's index.VectorMode.
func searchMode(search string) index.VectorMode {
	if search == searchExact {
		return index.VectorExact
	}
	return index.VectorBinary
}

func validateSearch(mode *string, oversample *int) error {
	switch *mode {
	case "":
		*mode = searchBinary
	case searchBinary, searchExact:
	default:
		return settingErrorf("search", "search %q is neither binary nor exact", *mode)
	}
	if *mode == searchExact {
		if *oversample != 0 {
			return settingErrorf("oversample", "oversample applies to search: binary only")
		}
		return nil
	}
	if *oversample == 0 {
		*oversample = index.DefaultOversample
	}
	if *oversample < 1 || *oversample > 1000 {
		return settingErrorf("oversample", "oversample %d is outside 1..1000", *oversample)
	}
	return nil
}

// Name implements Stage.
func (*Vector) Name() string { return VectorName }

// Retrieves implements Retriever.
func (*Vector) Retrieves() {}

// Produces implements Producer.
func (v *Vector) Produces() []string { return []string{v.List} }

// Needs implements ModelUser: the index's embedder.
func (v *Vector) Needs() []ModelNeed { return []ModelNeed{{Role: models.RoleEmbedder, Name: v.Model}} }

// ModelRoles implements ModelUser.
func (*Vector) ModelRoles() []models.Role { return []models.Role{models.RoleEmbedder} }

// Validate implements Stage.
func (v *Vector) Validate() error {
	if v.Limit == 0 {
		v.Limit = 40
	}
	if v.Limit < 1 || v.Limit > 10000 {
		return settingErrorf("limit", "limit %d is outside 1..10000", v.Limit)
	}
	if err := validateSearch(&v.Search, &v.Oversample); err != nil {
		return err
	}
	if err := validateText(&v.Text); err != nil {
		return err
	}
	if err := validateEmbedAs(&v.EmbedAs); err != nil {
		return err
	}
	if err := validateVet(v.Vet, v.Text); err != nil {
		return err
	}
	if v.List == "" {
		v.List = v.Name()
	}
	return validateLadder(&v.Ladder, v.Limit)
}

// ReadsExpansions implements ExpansionReader.
func (v *Vector) ReadsExpansions() bool { return readsExpansions(v.Text) }

func validateLadder(l *[]int, limit int) error {
	if len(*l) == 0 {
		*l = index.DefaultLadder(limit)
	}
	prev := 0
	for _, k := range *l {
		if k <= prev {
			return settingErrorf("ladder", "ladder %v must rise", *l)
		}
		prev = k
	}
	for i := range *l {
		(*l)[i] = min((*l)[i], index.MaxKNN)
	}
	return nil
}

// Run implements Stage.
func (v *Vector) Run(ctx context.Context, env *Env, st *State) error {
	emb, err := env.IndexEmbedder(ctx, v.Model)
	if err != nil {
		return err
	}
	text, vetInfo, err := st.text(ctx, env, v.Text, v.Vet)
	if err != nil {
		return err
	}
	if text == "" && readsExpansions(v.Text) { // the client sent none of them
		st.produceStep(Step{Stage: v.List, Info: joinInfo(vetInfo, noText(v.Text))})
		return nil
	}
	qv, err := st.TextVector(ctx, emb, text, v.EmbedAs)
	if err != nil {
		return err
	}
	step, err := vectorStep(ctx, env, index.VectorQuery{Vector: qv, Mode: searchMode(v.Search), Oversample: v.Oversample, Limit: v.Limit, Ladder: v.Ladder, Filter: st.Query.Filter})
	if err != nil {
		return err
	}
	step.Stage = v.List
	step.Info = joinInfo(vetInfo, step.Info)
	st.produceStep(step)
	return nil
}

// vectorStep runs a note search (q.Limit notes, index.VectorQuery) and
// returns it as a step (without its stage name): the items, the best note
// left out (nil when the examined chunks held no other note), and how the
// search ended, as an index.ScopeOutcome and as a line for people.
func vectorStep(ctx context.Context, env *Env, q index.VectorQuery) (Step, error) {
	db, err := env.Index()
	if err != nil {
		return Step{}, err
	}
	res, err := db.Vector(ctx, q)
	if err != nil {
		return Step{}, err
	}
	step := Step{Items: itemsOf(res.Hits), Outcome: res.Outcome}
	if h := res.Next; h != nil {
		cut := itemOf(*h)
		step.Cut = &cut
	}
	n := len(step.Items)
	switch res.Outcome {
	case index.ScopeFilled:
		step.Info = fmt.Sprintf("%s: %d notes from the nearest %d of %d chunks", res.Outcome, n, min(res.K, res.Chunks), res.Chunks)
	case index.ScopeDrained:
		step.Info = fmt.Sprintf("%s: all %d chunks examined, %d notes in scope found", res.Outcome, res.Chunks, n)
		if res.Want == 0 {
			step.Info = fmt.Sprintf("%s: no note matches the filters (k=0 of %d chunks)", res.Outcome, res.Chunks)
		}
	case index.ScopeLadderEnd:
		step.Info = fmt.Sprintf("%s: stopped after the nearest %d of %d chunks with %d of %d wanted notes; more may exist", res.Outcome, res.K, res.Chunks, n, res.Want)
	}
	return step, nil
}
