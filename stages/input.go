package stages

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vault-rag/vault-rag/index"
)

// The texts of a request a retrieval stage can read (its `text` setting).
// The caller of vault_search is a language model: besides the user's
// question it may send the words a note that answers would contain
// (keywords) and a passage written as that note (answer). It has never seen
// the notes; what it writes comes from its general knowledge.
const (
	SourceQuery    = "query"    // the user's question, always present
	SourceKeywords = "keywords" // the client's keyword query, optional
	SourceAnswer   = "answer"   // the client's hypothetical answer, optional
)

var sources = []string{SourceQuery, SourceKeywords, SourceAnswer}

// Embedding modes of a vector stage's text (its `embed_as` setting): as a
// query, with the model's query instruction, or as a passage, the way notes
// were embedded (a hypothetical answer is passage-shaped: HyDE).
const (
	EmbedAsQuery   = "query"
	EmbedAsPassage = "passage"
)

// validateText checks a stage's text sources, defaulting to the query alone.
func validateText(text *[]string) error {
	if len(*text) == 0 {
		*text = []string{SourceQuery}
		return nil
	}
	seen := map[string]bool{}
	for _, s := range *text {
		if !slices.Contains(sources, s) {
			return settingErrorf("text", "text %q is not one of %s", s, strings.Join(sources, ", "))
		}
		if seen[s] {
			return settingErrorf("text", "text %q is named twice", s)
		}
		seen[s] = true
	}
	return nil
}

func validateEmbedAs(mode *string) error {
	switch *mode {
	case "":
		*mode = EmbedAsQuery
	case EmbedAsQuery, EmbedAsPassage:
	default:
		return settingErrorf("embed_as", "embed_as %q is neither %s nor %s", *mode, EmbedAsQuery, EmbedAsPassage)
	}
	return nil
}

// readsExpansions says whether a stage's text names any of the client's
// texts.
func readsExpansions(text []string) bool {
	return slices.ContainsFunc(text, func(s string) bool { return s != SourceQuery })
}

// Source is one of the request's texts by name, "" when the client did not
// send it.
func (q Query) Source(name string) string {
	switch name {
	case SourceQuery:
		return q.Text
	case SourceKeywords:
		return q.Keywords
	case SourceAnswer:
		return q.Answer
	}
	return ""
}

// Compose joins the named texts the client sent, in the order named, one per
// line; "" when it sent none of them.
func (q Query) Compose(names []string) string {
	var parts []string
	for _, n := range names {
		if s := q.Source(n); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// Expanded says whether the client sent any text beyond the query.
func (q Query) Expanded() bool { return q.Keywords != "" || q.Answer != "" }

// noText is a retrieval stage's info line when the client sent none of the
// texts it reads.
func noText(text []string) string {
	return fmt.Sprintf("no %s sent: nothing to search", strings.Join(text, " or "))
}

// ExpansionReader is a stage whose settings make it read the client's texts
// (keywords, answer): the eval harness runs the configurations holding one
// with the datasets' client expansions too.
type ExpansionReader interface {
	Stage
	ReadsExpansions() bool
}

// MaxVet bounds a stage's vet rank.
const MaxVet = 1000

// validateVet checks a stage's vet setting: 0 (trust the client's texts as
// sent) or the rank of the question's nearest note the client's text is held
// against (see State.ClientTrusted).
func validateVet(vet int, text []string) error {
	if vet < 0 || vet > MaxVet {
		return settingErrorf("vet", "vet %d is outside 0..%d", vet, MaxVet)
	}
	if vet > 0 && !readsExpansions(text) {
		return settingErrorf("vet", "vet %d needs a text that reads the client's keywords or answer", vet)
	}
	return nil
}

// verdict is a vetting decision, per rank, for one request.
type verdict struct {
	trusted bool
	info    string
}

// ClientTrusted says whether the client's texts are about the question, by
// the embedder the index was built with: its answer (else its keywords),
// embedded as a query, must be at least as close to the question as the
// question's rank-th nearest note in the vault. A client that wrote about
// something else — another question's answer, a misunderstanding — falls
// below the notes the question itself finds, and is set aside: the stages
// then read the question alone. What that costs an honest client and saves
// against one that answered another question is in the client-vet rows of
// docs/results.md (+client, +mismatched; `make eval`).
//
// The decision is made once per request and rank, however many stages ask
// (they may ask at once). Without client texts it is true and costs nothing.
func (s *State) ClientTrusted(ctx context.Context, env *Env, rank int) (bool, string, error) {
	probe := s.Query.Answer
	if probe == "" {
		probe = s.Query.Keywords
	}
	if probe == "" || rank == 0 {
		return true, "", nil
	}
	m := s.memo
	m.vetMu.Lock()
	defer m.vetMu.Unlock()
	if v, ok := m.vet[rank]; ok {
		return v.trusted, v.info, nil
	}
	emb, err := env.IndexEmbedder(ctx, "")
	if err != nil {
		return false, "", err
	}
	qv, err := s.QueryVector(ctx, emb)
	if err != nil {
		return false, "", err
	}
	pv, err := s.TextVector(ctx, emb, probe, EmbedAsQuery)
	if err != nil {
		return false, "", err
	}
	// The default search (binary, the default ladder), unscoped.
	step, err := vectorStep(ctx, env, index.VectorQuery{Vector: qv, Limit: rank})
	if err != nil {
		return false, "", err
	}
	cos := dot(qv, pv)
	v := verdict{trusted: true, info: fmt.Sprintf("the client's text kept: cosine %.3f to the question", cos)}
	if n := len(step.Items); n > 0 {
		bar := step.Items[n-1].Score
		v.trusted = cos >= bar
		word := "kept"
		if !v.trusted {
			word = "set aside"
		}
		v.info = fmt.Sprintf("the client's text %s: cosine %.3f to the question, its note #%d %.3f", word, cos, n, bar)
	}
	if m.vet == nil {
		m.vet = map[int]verdict{}
	}
	m.vet[rank] = v
	return v.trusted, v.info, nil
}

// text is what a retrieval stage searches: the request's texts it names;
// the question alone when vetting finds the client's off it (info says so).
func (s *State) text(ctx context.Context, env *Env, sources []string, vet int) (string, string, error) {
	if !readsExpansions(sources) || !s.Query.Expanded() {
		return s.Query.Compose(sources), "", nil
	}
	if vet == 0 {
		return s.Query.Compose(sources), s.Query.readInfo(sources), nil
	}
	ok, info, err := s.ClientTrusted(ctx, env, vet)
	if err != nil {
		return "", "", err
	}
	if ok {
		return s.Query.Compose(sources), info, nil
	}
	return s.Query.Text, info, nil
}

// readInfo is the info line of a stage that reads the client's texts
// unvetted: which of them it searched with the question.
func (q Query) readInfo(sources []string) string {
	var sent []string
	for _, src := range sources {
		if src != SourceQuery && q.Source(src) != "" {
			sent = append(sent, src)
		}
	}
	if len(sent) == 0 {
		return ""
	}
	return fmt.Sprintf("the client's %s read as sent (not vetted)", strings.Join(sent, " and "))
}

// dot is the inner product of two vectors (a cosine for unit vectors).
func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// joinInfo joins a stage's info lines, leaving out empty ones.
func joinInfo(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "; ")
}
