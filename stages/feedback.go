package stages

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
)

// Feedback is a second retrieval round after fusion (pseudo-relevance
// feedback): the current ranking's first Docs notes are taken as relevant, and
//   - RM3 rewrites the keyword list: the query's terms (each repeated
//     OrigRepeat times: in an OR query bm25 sums over terms, so repetition is
//     weight) plus the Terms words most probable in the feedback notes' best
//     chunks (RM1: Σ_d w_d · tf(t,d)/|d|, w_d falling linearly with rank),
//   - Rocchio rewrites the vector list: the query vector moved towards the
//     centroid of the feedback notes' stored chunk vectors,
//     q' = (1−Beta)·q + Beta·centroid, renormalised.
//
// The new lists replace the lists named KeywordName and VectorName (the
// keyword and vector stages' default list names; a list of another name is
// kept and the new one added); a fusion stage after this one fuses them
// again.
type Feedback struct {
	Docs        int     `yaml:"docs"`         // feedback notes (default 5)
	RM3         bool    `yaml:"rm3"`          // re-run the keyword list with expansion terms
	Terms       int     `yaml:"terms"`        // RM3 expansion terms (default 10)
	OrigRepeat  int     `yaml:"orig_repeat"`  // RM3: times each query term is repeated (default 2)
	Rocchio     bool    `yaml:"rocchio"`      // re-run the vector list from a moved query vector
	Beta        float64 `yaml:"beta"`         // Rocchio: weight of the feedback centroid (default 0.3)
	Limit       int     `yaml:"limit"`        // notes per new list (default 40)
	Stopwords   string  `yaml:"stopwords"`    // for the query's own terms (expansion terms are always filtered)
	TitleWeight float64 `yaml:"title_weight"` // bm25 title weight of the new keyword list (default 1)
}

// FeedbackName is the feedback stage's configuration key.
const FeedbackName = "feedback"

func init() { register(func() Stage { return &Feedback{} }) }

// Name implements Stage.
func (*Feedback) Name() string { return FeedbackName }

// Produces implements Producer: the lists the second round replaces.
func (f *Feedback) Produces() []string {
	var out []string
	if f.RM3 {
		out = append(out, KeywordName)
	}
	if f.Rocchio {
		out = append(out, VectorName)
	}
	return out
}

// Validate implements Stage.
func (f *Feedback) Validate() error {
	if !f.RM3 && !f.Rocchio {
		return settingErrorf("rm3", "rm3 and rocchio are both off: the stage would do nothing")
	}
	if f.Docs == 0 {
		f.Docs = 5
	}
	if f.Terms == 0 {
		f.Terms = 10
	}
	if f.OrigRepeat == 0 {
		f.OrigRepeat = 2
	}
	if f.Beta == 0 {
		f.Beta = 0.3
	}
	if f.Limit == 0 {
		f.Limit = 40
	}
	switch {
	case f.Docs < 1 || f.Docs > 100:
		return settingErrorf("docs", "docs %d is outside 1..100", f.Docs)
	case f.Terms < 1 || f.Terms > 100:
		return settingErrorf("terms", "terms %d is outside 1..100", f.Terms)
	case f.OrigRepeat < 1 || f.OrigRepeat > 10:
		return settingErrorf("orig_repeat", "orig_repeat %d is outside 1..10", f.OrigRepeat)
	case math.IsNaN(f.Beta) || f.Beta <= 0 || f.Beta >= 1:
		return settingErrorf("beta", "beta %v is outside (0, 1)", f.Beta)
	case f.Limit < 1 || f.Limit > 10000:
		return settingErrorf("limit", "limit %d is outside 1..10000", f.Limit)
	}
	if f.TitleWeight == 0 {
		f.TitleWeight = 1
	}
	if math.IsNaN(f.TitleWeight) || f.TitleWeight < 0 || f.TitleWeight > 100 {
		return settingErrorf("title_weight", "title_weight %v is outside 0..100", f.TitleWeight)
	}
	return validateStopwords(&f.Stopwords)
}

// Run implements Stage.
func (f *Feedback) Run(ctx context.Context, env *Env, st *State) error {
	if len(st.Lists) == 0 {
		return ErrNoRanking
	}
	fb := st.Ranking[:min(f.Docs, len(st.Ranking))]
	if len(fb) == 0 {
		st.rerank(f.Name(), st.Ranking, "no feedback notes")
		return nil
	}
	ids := make([]int64, len(fb))
	for i, it := range fb {
		ids[i] = it.ChunkID
	}
	var info []string
	var side []Step
	if f.RM3 {
		db, err := env.Index()
		if err != nil {
			return err
		}
		chunks, err := db.Chunks(ctx, ids)
		if err != nil {
			return err
		}
		notes, err := st.Notes(ctx, db, fb)
		if err != nil {
			return err
		}
		docs := make([][]string, len(fb))
		for i, it := range fb {
			c := chunks[it.ChunkID]
			docs[i] = Terms(notes[it.NoteID].Title + " " + c.Heading + " " + c.Body)
		}
		query := AnalyzeTerms(st.Query.Text, f.Stopwords)
		exp := ExpansionTerms(query, docs, f.Terms)
		terms := make([]string, 0, len(query)*f.OrigRepeat+len(exp))
		for r := 0; r < f.OrigRepeat; r++ {
			terms = append(terms, query...)
		}
		terms = append(terms, exp...)
		k := &Keyword{Limit: f.Limit, Stopwords: f.Stopwords, TitleWeight: f.TitleWeight, Score: ScoreChunk}
		items, _, err := k.list(ctx, env, st.Query.Filter, terms, nil)
		if err != nil {
			return err
		}
		replaceList(st, KeywordName, items)
		info = append(info, "rm3 +"+strings.Join(exp, " "))
	}
	if f.Rocchio {
		emb, err := env.IndexEmbedder(ctx, "")
		if err != nil {
			return err
		}
		qv, err := st.QueryVector(ctx, emb)
		if err != nil {
			return err
		}
		db, err := env.Index()
		if err != nil {
			return err
		}
		vecs, err := db.Vectors(ctx, ids)
		if err != nil {
			return err
		}
		var fbv [][]float32
		for _, id := range ids {
			if v, ok := vecs[id]; ok {
				fbv = append(fbv, v)
			}
		}
		moved := Rocchio(qv, fbv, f.Beta)
		// The default search: binary, the default oversampling and ladder.
		step, err := vectorStep(ctx, env, index.VectorQuery{Vector: moved, Limit: f.Limit, Filter: st.Query.Filter})
		if err != nil {
			return err
		}
		replaceList(st, VectorName, step.Items)
		step.Stage = FeedbackName + "/rocchio"
		side = append(side, step)
		info = append(info, fmt.Sprintf("rocchio from %d vectors", len(fbv)))
	}
	exact := st.rankingSameOnEveryCPU()
	st.rerank(f.Name(), st.Ranking, strings.Join(info, "; "))
	st.Steps[len(st.Steps)-1].Side = side
	st.Steps[len(st.Steps)-1].SameOnEveryCPU = exact // the ranking is passed on as it was
	return nil
}

// replaceList puts items in place of the list a stage produced; the list is
// appended when no stage of that name ran.
func replaceList(st *State, stage string, items []Item) {
	for i := range st.Lists {
		if st.Lists[i].Stage == stage {
			st.Lists[i].Items = items
			return
		}
	}
	st.Lists = append(st.Lists, List{Stage: stage, Items: items})
}

// ExpansionTerms picks RM3's expansion terms: the n terms of highest RM1
// weight Σ_d w_d · tf(t,d)/|d| over the feedback documents (best first, w_d =
// 1 − i/len(docs)), leaving out the query's own terms, English stopwords,
// words shorter than three letters (NLTK's list) and pure numbers. Ties go alphabetically.
func ExpansionTerms(query []string, docs [][]string, n int) []string {
	inQuery := map[string]bool{}
	for _, t := range query {
		inQuery[t] = true
	}
	weight := map[string]float64{}
	for i, d := range docs {
		if len(d) == 0 {
			continue
		}
		wd := 1 - float64(i)/float64(len(docs))
		for _, t := range d {
			if inQuery[t] || nltkStopwords[t] || len([]rune(t)) < 3 || isNumber(t) {
				continue
			}
			weight[t] += wd / float64(len(d))
		}
	}
	terms := make([]string, 0, len(weight))
	for t := range weight {
		terms = append(terms, t)
	}
	sort.Slice(terms, func(i, j int) bool {
		if weight[terms[i]] != weight[terms[j]] {
			return weight[terms[i]] > weight[terms[j]]
		}
		return terms[i] < terms[j]
	})
	return terms[:min(n, len(terms))]
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Rocchio moves q towards the centroid of the feedback vectors:
// (1−beta)·q + beta·centroid/|centroid|, renormalised to unit length. With no
// feedback vector, or vectors of another dimension, q is returned unchanged.
func Rocchio(q []float32, fb [][]float32, beta float64) []float32 {
	c := make([]float64, len(q))
	used := 0
	for _, v := range fb {
		if len(v) != len(q) {
			continue
		}
		for i, x := range v {
			c[i] += float64(x)
		}
		used++
	}
	if used == 0 {
		return q
	}
	cn := 0.0
	for _, x := range c {
		cn += x * x
	}
	cn = math.Sqrt(cn)
	out := make([]float64, len(q))
	n := 0.0
	for i := range q {
		out[i] = (1 - beta) * float64(q[i])
		if cn > 0 {
			out[i] += beta * c[i] / cn
		}
		n += out[i] * out[i]
	}
	n = math.Sqrt(n)
	res := make([]float32, len(q))
	for i := range out {
		if n > 0 {
			res[i] = float32(out[i] / n)
		}
	}
	return res
}

// Needs implements ModelUser: Rocchio embeds nothing new but searches the
// index's vectors with its query vector, so it needs the index's embedder.
func (f *Feedback) Needs() []ModelNeed {
	if !f.Rocchio {
		return nil
	}
	return []ModelNeed{{Role: models.RoleEmbedder}}
}

// ModelRoles implements ModelUser.
func (*Feedback) ModelRoles() []models.Role { return []models.Role{models.RoleEmbedder} }
