package stages

import (
	"context"
	"fmt"
	"math"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
)

// Keyword is BM25 over title and body, run on the index's own keyword postings
// with FTS5's tokenizer (porter stemming) and FTS5's bm25 to the bit (see
// index.Keyword). User text becomes quoted terms, never query syntax.
type Keyword struct {
	Limit int `yaml:"limit"` // notes to keep (default 40)
	// Stopwords is the list dropped from the query before the search:
	// "none" (default) or "english" (see analyze.go).
	Stopwords string `yaml:"stopwords"`
	// TitleWeight is bm25's weight for the title column, the body's being 1
	// (default 1: both count alike).
	TitleWeight float64 `yaml:"title_weight"`
	// Score is how a note is scored from its chunks: "chunk" (default, its best
	// chunk's bm25) or "note" (the sum over its matching chunks, see
	// keyword_note.go).
	Score string `yaml:"score"`
	// Text is which of the request's texts are searched, joined: query
	// (the default), keywords, answer (see SourceQuery).
	Text []string `yaml:"text"`
	// List names the list the stage produces, for fusion weights (default
	// KeywordName).
	List string `yaml:"list"`
	// Vet, when set, searches the client's texts only when they are about
	// the question: its answer at least as close to the question as the
	// question's Vet-th nearest note (State.ClientTrusted; needs the
	// embedder). 0 (default) takes them as sent.
	Vet int `yaml:"vet"`
	// MinMatch, above 0, keeps only the notes whose matching chunk holds at
	// least this share (0..1) of the query's rare terms, those in at most
	// CommonShare of the chunks (default index.DefaultCommonShare); see
	// index.KeywordQuery.MinMatch. 0 (default): any term matches, and
	// common_share is not read.
	MinMatch    float64 `yaml:"min_match"`
	CommonShare float64 `yaml:"common_share"`
	// Evidence weighs the list, for each query, by how much of the
	// question's rare-term weight (idf of its terms in at most CommonShare
	// of the chunks) its best match holds, 0..1 (index.DB.Evidence): fusion
	// multiplies the list's weight by it. A paraphrase whose best keyword
	// match shares only common words with it adds little to the fusion; a
	// query whose rare terms the match holds keeps its full weight. A query
	// without a rare term keeps weight 1, and so does a search of the
	// client's text (only the question's own words are judged). The rrf
	// stage reads the weight; convex fusion does not.
	Evidence bool `yaml:"evidence"`
	// EvidenceFloor is the least weight evidence gives the list (0..1):
	// the weight is floor + (1 − floor) × the share held.
	EvidenceFloor float64 `yaml:"evidence_floor"`
	// ClientTerms is which terms of the client's keywords and answer are
	// searched beside the question's: "all" (default); "rare", only those
	// in at most CommonShare of the chunks (index.KeywordQuery.Extra); or
	// "budget", the rarest while the postings they add stay within
	// ClientPostings (index.KeywordQuery.ExtraPostings). The question's own
	// terms are always searched, and so is a client term that is one of
	// them. A 60-word answer's common words ("the", "uses", "when") are most
	// of its terms and the longest posting lists of a large vault, and its
	// rare ones carry its subject.
	ClientTerms string `yaml:"client_terms"`
	// ClientPostings is client_terms budget's budget, in postings (default
	// DefaultClientPostings).
	ClientPostings int64 `yaml:"client_postings"`
}

// Which client terms a keyword stage searches (its client_terms setting).
const (
	ClientTermsAll    = "all"
	ClientTermsRare   = "rare"
	ClientTermsBudget = "budget"
)

// DefaultClientPostings is client_terms budget's default: the postings the
// client's terms may add to a keyword search. Every term of a 60-word answer
// fits on a vault of a few thousand chunks; at 137,000 chunks the commonest
// do not (docs/performance.md has what it costs).
const DefaultClientPostings = 30_000

// KeywordName is the keyword stage's configuration key and its list's
// default name.
const KeywordName = "keyword"

func init() { register(func() Stage { return &Keyword{} }) }

// Keyword note scores.
const (
	ScoreChunk = "chunk"
	ScoreNote  = "note"
)

// Name implements Stage.
func (*Keyword) Name() string { return KeywordName }

// Retrieves implements Retriever.
func (*Keyword) Retrieves() {}

// Produces implements Producer.
func (k *Keyword) Produces() []string { return []string{k.List} }

// Validate implements Stage.
func (k *Keyword) Validate() error {
	if k.Limit == 0 {
		k.Limit = 40
	}
	if k.Limit < 1 || k.Limit > 10000 {
		return settingErrorf("limit", "limit %d is outside 1..10000", k.Limit)
	}
	if k.TitleWeight == 0 {
		k.TitleWeight = 1
	}
	if math.IsNaN(k.TitleWeight) || k.TitleWeight < 0 || k.TitleWeight > 100 {
		return settingErrorf("title_weight", "title_weight %v is outside 0..100", k.TitleWeight)
	}
	switch k.Score {
	case "":
		k.Score = ScoreChunk
	case ScoreChunk, ScoreNote:
	default:
		return settingErrorf("score", "score %q is not %s or %s", k.Score, ScoreChunk, ScoreNote)
	}
	if math.IsNaN(k.MinMatch) || k.MinMatch < 0 || k.MinMatch > 1 {
		return settingErrorf("min_match", "min_match %v is outside 0..1", k.MinMatch)
	}
	if math.IsNaN(k.EvidenceFloor) || k.EvidenceFloor < 0 || k.EvidenceFloor > 1 {
		return settingErrorf("evidence_floor", "evidence_floor %v is outside 0..1", k.EvidenceFloor)
	}
	if math.IsNaN(k.CommonShare) || k.CommonShare < 0 || k.CommonShare > 1 {
		return settingErrorf("common_share", "common_share %v is outside 0..1", k.CommonShare)
	}
	if err := validateText(&k.Text); err != nil {
		return err
	}
	if err := validateVet(k.Vet, k.Text); err != nil {
		return err
	}
	switch k.ClientTerms {
	case "":
		k.ClientTerms = ClientTermsAll
	case ClientTermsAll:
	case ClientTermsRare, ClientTermsBudget:
		if !readsExpansions(k.Text) {
			return settingErrorf("client_terms", "client_terms %s needs a text that reads the client's keywords or answer", k.ClientTerms)
		}
	default:
		return settingErrorf("client_terms", "client_terms %q is not %s, %s or %s", k.ClientTerms, ClientTermsAll, ClientTermsRare, ClientTermsBudget)
	}
	switch {
	case k.ClientPostings < 0:
		return settingErrorf("client_postings", "client_postings %d is below 0", k.ClientPostings)
	case k.ClientPostings > 0 && k.ClientTerms != ClientTermsBudget:
		return settingErrorf("client_postings", "client_postings is client_terms budget's budget; client_terms is %s", k.ClientTerms)
	case k.ClientPostings == 0 && k.ClientTerms == ClientTermsBudget:
		k.ClientPostings = DefaultClientPostings
	}
	if k.List == "" {
		k.List = k.Name()
	}
	return validateStopwords(&k.Stopwords)
}

// ReadsExpansions implements ExpansionReader.
func (k *Keyword) ReadsExpansions() bool { return readsExpansions(k.Text) }

// Needs implements ModelUser: the index's embedder when the stage vets the
// client's texts, nothing otherwise.
func (k *Keyword) Needs() []ModelNeed {
	if k.Vet == 0 {
		return nil
	}
	return []ModelNeed{{Role: models.RoleEmbedder}}
}

// ModelRoles implements ModelUser.
func (*Keyword) ModelRoles() []models.Role { return []models.Role{models.RoleEmbedder} }

// Run implements Stage.
func (k *Keyword) Run(ctx context.Context, env *Env, st *State) error {
	text, vetInfo, err := st.text(ctx, env, k.Text, k.Vet)
	if err != nil {
		return err
	}
	if text == "" && readsExpansions(k.Text) { // the client sent none of them
		st.produce(k.List, nil, noText(k.Text))
		st.markSameOnEveryCPU()
		return nil
	}
	terms, extra := k.terms(st.Query, text)
	items, info, err := k.list(ctx, env, st.Query.Filter, terms, extra)
	if err != nil {
		return err
	}
	weight, weighted := 1.0, false
	// Evidence judges the question's own words: when the client's keywords
	// or answer were searched too, they are the evidence, and the list keeps
	// its weight (weighing them cost CACM and gained the vaults nothing:
	// docs/evaluation.md, the keyword list's evidence).
	if k.Evidence && len(items) > 0 && text == st.Query.Text {
		db, err := env.Index()
		if err != nil {
			return err
		}
		held, total, err := db.Evidence(ctx, index.KeywordQuery{Terms: terms, CommonShare: k.CommonShare}, items[0].ChunkID)
		if err != nil {
			return err
		}
		if total > 0 {
			weight, weighted = k.EvidenceFloor+(1-k.EvidenceFloor)*held/total, true
			info = joinInfo(info, fmt.Sprintf("evidence: the best match holds %.2f of the question's rare-term weight; the list weighs %.2f", held/total, weight))
		}
	}
	info = joinInfo(vetInfo, info)
	st.produce(k.List, items, info)
	if weighted {
		st.Lists[len(st.Lists)-1].Weighted, st.Lists[len(st.Lists)-1].Weight = true, weight
	}
	st.markSameOnEveryCPU() // bm25 as FTS5's C computes it: the same on every CPU
	return nil
}

// terms analyses the text the stage searches: every term of it, or, with
// client_terms rare or budget and the client's texts in it, the question's
// terms and apart from them the client's, searched only when rare or within
// the budget. The question comes first, as in a composed text whose sources
// name it first.
func (k *Keyword) terms(q Query, text string) (terms, extra []string) {
	if k.ClientTerms == ClientTermsAll || text == q.Text {
		return AnalyzeTerms(text, k.Stopwords), nil
	}
	var client []string
	for _, src := range k.Text {
		if src == SourceQuery {
			terms = AnalyzeTerms(q.Text, k.Stopwords)
		} else {
			client = append(client, src)
		}
	}
	extra = AnalyzeTerms(q.Compose(client), k.Stopwords)
	return terms, extra[:min(len(extra), max(MaxQueryTerms-len(terms), 0))]
}

// list runs the keyword search for already analysed terms; extra terms
// count only when rare (index.KeywordQuery.Extra).
func (k *Keyword) list(ctx context.Context, env *Env, f index.Filter, terms, extra []string) ([]Item, string, error) {
	if len(terms) == 0 && len(extra) == 0 {
		return nil, "no searchable terms in the query", nil
	}
	db, err := env.Index()
	if err != nil {
		return nil, "", err
	}
	q := index.KeywordQuery{Terms: terms, Extra: extra, TitleWeight: k.TitleWeight, Limit: k.Limit, Filter: f, MinMatch: k.MinMatch, CommonShare: k.CommonShare}
	if k.ClientTerms == ClientTermsBudget {
		q.ExtraPostings = k.ClientPostings
	}
	if k.Score == ScoreChunk {
		hits, err := db.Keyword(ctx, q)
		if err != nil {
			return nil, "", err
		}
		return itemsOf(hits), "", nil
	}
	// score: note. Chunk-level hits, deep enough that a note's chunks below
	// its best one are seen and enough distinct notes survive.
	q.Limit, q.PerChunk = k.Limit*noteScoreDepth, true
	hits, err := db.Keyword(ctx, q)
	if err != nil {
		return nil, "", err
	}
	return sumByNote(hits, k.Limit), "", nil
}

// noteScoreDepth is how many chunks per wanted note the chunk-level search
// reads.
const noteScoreDepth = 8
