package stages

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
)

// Rerank rescores the shortlist with a model that reads the query and each
// candidate passage, in one batched pass. It reorders; it cannot recall: notes
// past Candidates are dropped, since their scores would be on another scale.
type Rerank struct {
	Model      string `yaml:"model"`      // the scoring model (default per scorer)
	Candidates int    `yaml:"candidates"` // shortlist size (default 30)
	// Passage is what the model reads for a note (default PassageSnippet).
	Passage Passage `yaml:"passage"`
	// WindowTokens bounds the "window" passage (default DefaultWindowTokens).
	WindowTokens int `yaml:"window_tokens"`
	// Scorer is how a passage is scored (default ScorerCrossEncoder); the
	// bi-encoder measures the passage question without the cross-encoder.
	Scorer Scorer `yaml:"scorer"`
}

// Passage is what a rerank model reads for a note: its passage setting.
type Passage string

// The passages a rerank stage reads.
const (
	// PassageSnippet is the title and at most SnippetChars of the best chunk.
	PassageSnippet Passage = "snippet"
	// PassageChunk is the title and the whole best chunk.
	PassageChunk Passage = "chunk"
	// PassageNote is the note's text, as much as the model's window holds.
	PassageNote Passage = "note"
	// PassageWindow is the best-matching window of the note: the matched
	// chunk and its neighbours, at most WindowTokens tokens.
	PassageWindow Passage = "window"
)

var passages = []Passage{PassageSnippet, PassageChunk, PassageNote, PassageWindow}

// UnmarshalYAML refuses a passage that is none of the four, naming them.
func (p *Passage) UnmarshalYAML(n *yaml.Node) error { return decodeChoice(n, "passage", p, passages) }

// Scorer is how a rerank stage scores a passage: its scorer setting.
type Scorer string

// The rerank scorers.
const (
	// ScorerCrossEncoder reads the query and the passage together: a logit
	// per pair.
	ScorerCrossEncoder Scorer = "cross-encoder"
	// ScorerBiEncoder is the cosine between the query's and the passage's
	// embeddings from the embedder.
	ScorerBiEncoder Scorer = "bi-encoder"
)

var scorers = []Scorer{ScorerCrossEncoder, ScorerBiEncoder}

// UnmarshalYAML refuses a scorer that is neither, naming both.
func (s *Scorer) UnmarshalYAML(n *yaml.Node) error { return decodeChoice(n, "scorer", s, scorers) }

// SnippetChars is the snippet passage's length.
const SnippetChars = 240

// noteChars bounds the "note" passage before the tokenizer's window cuts it:
// 512 tokens are about 2,500 characters of English.
const noteChars = 4000

// RerankName is the rerank stage's configuration key.
const RerankName = "rerank"

func init() { register(func() Stage { return &Rerank{} }) }

// Name implements Stage.
func (*Rerank) Name() string { return RerankName }

// Needs implements ModelUser: the cross-encoder, or for the bi-encoder
// scorer an embedder (the index's unless Model names one).
func (r *Rerank) Needs() []ModelNeed {
	if r.Scorer == ScorerBiEncoder {
		return []ModelNeed{{Role: models.RoleEmbedder, Name: r.Model}}
	}
	return []ModelNeed{{Role: models.RoleCrossEncoder, Name: cmp.Or(r.Model, models.DefaultCrossEncoder)}}
}

// ModelRoles implements ModelUser.
func (*Rerank) ModelRoles() []models.Role {
	return []models.Role{models.RoleCrossEncoder, models.RoleEmbedder}
}

// Validate implements Stage.
func (r *Rerank) Validate() error {
	if r.Candidates == 0 {
		r.Candidates = 30
	}
	if r.Passage == "" {
		r.Passage = PassageSnippet
	}
	if r.Scorer == "" {
		r.Scorer = ScorerCrossEncoder
	}
	if r.Candidates < 1 || r.Candidates > 200 {
		return settingErrorf("candidates", "candidates %d is outside 1..200", r.Candidates)
	}
	if err := checkChoice("passage", r.Passage, passages); err != nil {
		return err
	}
	if r.Passage != PassageWindow && r.WindowTokens != 0 {
		return settingErrorf("window_tokens", "window_tokens applies to passage: window, not %s", r.Passage)
	}
	if r.Passage == PassageWindow {
		if r.WindowTokens == 0 {
			r.WindowTokens = DefaultWindowTokens
		}
		if r.WindowTokens < 16 || r.WindowTokens > 512 {
			return settingErrorf("window_tokens", "window_tokens %d is outside 16..512", r.WindowTokens)
		}
	}
	if err := checkChoice("scorer", r.Scorer, scorers); err != nil {
		return err
	}
	// A bi-encoder's empty model means the index's embedder, resolved at
	// run time.
	if r.Scorer == ScorerCrossEncoder && r.Model == "" {
		r.Model = models.DefaultCrossEncoder
	}
	return nil
}

// Run implements Stage.
func (r *Rerank) Run(ctx context.Context, env *Env, st *State) error {
	if st.Ranking == nil && len(st.Steps) == 0 {
		return ErrNoRanking
	}
	db, err := env.Index()
	if err != nil {
		return err
	}
	// Load the model before anything else: a missing model fails the stage
	// even when there is nothing to rerank, so it never passes as a no-op.
	var score func([]string) ([]float32, error)
	model := r.Model
	count := approxTokens
	note := ""
	switch r.Scorer {
	case ScorerCrossEncoder:
		ce, err := env.CrossEncoder(ctx, r.Model)
		if err != nil {
			return err
		}
		score = func(ps []string) ([]float32, error) { return ce.Score(ctx, st.Query.Text, ps) }
		if tc, ok := ce.(tokenCounter); ok {
			count = tc.CountTokens
		}
		if s, ok := ce.(interface{ StandInFor() string }); ok && s.StandInFor() != "" {
			note = " (a cost stand-in for " + s.StandInFor() + ": the order means nothing)"
		}
	case ScorerBiEncoder:
		model = cmp.Or(r.Model, db.Embedder())
		emb, err := env.Embedder(ctx, model)
		if err != nil {
			return err
		}
		score = func(ps []string) ([]float32, error) { return biEncode(ctx, env, st, emb, ps) }
		if tc, ok := emb.(tokenCounter); ok {
			count = tc.CountTokens
		}
	}
	cands := st.Ranking[:min(r.Candidates, len(st.Ranking))]
	if len(cands) == 0 {
		st.rerank(r.Name(), nil, "")
		return nil
	}
	passages, err := r.passages(ctx, db, st, cands, count)
	if err != nil {
		return err
	}
	if r.Scorer == ScorerBiEncoder && r.Passage == PassageChunk && db.Embedder() == model {
		// The chunk passage is the text the indexer embedded with this very
		// model: its stored vector is the passage embedding.
		score = func(ps []string) ([]float32, error) { return storedCosine(ctx, env, db, st, model, cands, ps) }
	}
	scores, err := score(passages)
	if err != nil {
		return fmt.Errorf("rerank: %w", err)
	}
	out := make([]Item, len(cands))
	for i, it := range cands {
		it.Score = float64(scores[i])
		out[i] = it
	}
	sortByScore(out) // equal scores keep the fused order
	st.rerank(r.Name(), out, fmt.Sprintf("%s over %d %s passages%s", model, len(cands), r.Passage, note))
	return nil
}

func (r *Rerank) passages(ctx context.Context, db *index.DB, st *State, items []Item, count func(string) int) ([]string, error) {
	notes, err := st.Notes(ctx, db, items)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.ChunkID
	}
	chunks, err := db.Chunks(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, it := range items {
		n, c := notes[it.NoteID], chunks[it.ChunkID]
		switch r.Passage {
		case PassageSnippet:
			out[i] = n.Title + "\n" + Prefix(sectionText(c), SnippetChars)
		case PassageChunk:
			out[i] = n.Title + "\n" + sectionText(c)
		case PassageNote:
			text, err := NoteText(ctx, db, n)
			if err != nil {
				return nil, err
			}
			out[i] = text
		case PassageWindow:
			text, err := windowPassage(ctx, db, n, it.ChunkID, Terms(st.Query.Text), r.WindowTokens, count)
			if err != nil {
				return nil, err
			}
			out[i] = text
		}
	}
	return out, nil
}

// sectionText is a chunk's heading and body.
func sectionText(c index.ChunkRow) string {
	if c.Heading == "" {
		return c.Body
	}
	return c.Heading + "\n" + c.Body
}

// NoteText rebuilds a note's text from its chunks, title first, cut at
// noteChars: the model's window cuts it again at 512 tokens.
func NoteText(ctx context.Context, db *index.DB, n index.NoteRow) (string, error) {
	cs, err := db.NoteChunks(ctx, n.ID)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(n.Title)
	for _, c := range cs {
		if b.Len() >= noteChars {
			break
		}
		b.WriteString("\n")
		if c.Heading != "" && c.Part <= 1 {
			b.WriteString(c.Heading + "\n")
		}
		b.WriteString(c.Body)
	}
	return truncateRunes(b.String(), noteChars), nil
}

// biEncode scores passages by cosine with the query embedding, embedding each
// passage text once per process (env.passages caches them).
func biEncode(ctx context.Context, env *Env, st *State, emb Embedder, passages []string) ([]float32, error) {
	qv, err := st.QueryVector(ctx, emb)
	if err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(passages))
	var todo []string
	var at []int
	for i, p := range passages {
		if v, ok := env.passages.get(emb.Name(), p); ok {
			vecs[i] = v
			continue
		}
		todo = append(todo, p)
		at = append(at, i)
	}
	if len(todo) > 0 {
		got, err := emb.EmbedPassages(ctx, todo)
		if err != nil {
			return nil, err
		}
		for k, v := range got {
			vecs[at[k]] = v
			env.passages.put(emb.Name(), todo[k], v)
		}
	}
	out := make([]float32, len(passages))
	for i, v := range vecs {
		out[i] = float32(models.Cosine(qv, v))
	}
	return out, nil
}

// storedCosine scores candidates by the cosine between the query embedding and
// their chunks' stored embeddings. A chunk with none (a first build still
// embedding, a note too long to embed) has its passage, of passages,
// embedded here instead, as biEncode does.
func storedCosine(ctx context.Context, env *Env, db *index.DB, st *State, model string, items []Item, passages []string) ([]float32, error) {
	emb, err := env.Embedder(ctx, model)
	if err != nil {
		return nil, err
	}
	qv, err := st.QueryVector(ctx, emb)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.ChunkID
	}
	vecs, err := db.Vectors(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(items))
	var missing []int
	var texts []string
	for i, it := range items {
		v, ok := vecs[it.ChunkID]
		if !ok {
			missing, texts = append(missing, i), append(texts, passages[i])
			continue
		}
		out[i] = float32(models.Cosine(qv, v))
	}
	if len(missing) > 0 {
		got, err := biEncode(ctx, env, st, emb, texts)
		if err != nil {
			return nil, err
		}
		for k, i := range missing {
			out[i] = got[k]
		}
	}
	return out, nil
}
