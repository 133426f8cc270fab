// Package stages holds the retrieval stages a pipeline is built from: keyword,
// vector and hyde retrieve; rrf and convex fuse; feedback retrieves a second
// round; rerank and recency reorder. Each is a plain struct decoded from a
// configuration file, with a Run method over a shared State.
//
// A stage describes itself; nothing outside its file switches on its name.
// Each file registers its stage under an exported name constant (KeywordName,
// RRFName, ...), which is the stage's configuration key, and New and Names
// are what the pipeline reads. Besides Stage a stage implements the optional
// interfaces that apply:
//
//   - Producer: it puts named lists in State.Lists (keyword, vector and hyde
//     their own; feedback replaces the keyword and vector lists), the names
//     fusion weights refer to.
//   - Retriever: a producer whose list comes from the request and the index
//     alone, never from State.Lists (keyword, vector, hyde). A configuration
//     must start with one, and retrievers in a row run concurrently.
//   - ListReader: its settings name lists (rrf's and convex's weights); a
//     configuration is refused when a named list is not produced before it.
//   - ModelUser: it loads models. Needs says which for its settings (what
//     `vault-rag models`, the server's config check and /health report) and
//     ModelRoles which roles it can need at all (what a missing model
//     disables, in /health).
//   - ExpansionReader: its settings make it read the client's texts
//     (keywords, hypothetical answer); the eval harness also runs the
//     configurations holding one with the datasets' client expansions.
//
// Validate reports a bad setting as a *SettingError naming its key, so a
// configuration error can point at the key's line.
//
// A stage that reports how a scoped search ended sets Step.Outcome (see
// index.ScopeOutcome); the server reads it from there, never from the Info
// text.
//
// Adding a stage is one new file here: the struct with its yaml tags, its
// name constant, Name, Validate, Run, the optional interfaces, and an init
// function that registers it.
package stages

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/choice"
	"github.com/vault-rag/vault-rag/models"
)

// Stage is one step of a pipeline.
type Stage interface {
	// Name is the stage's configuration key ("keyword", "rrf", ...).
	Name() string
	// Validate checks the stage's settings, filling in defaults.
	Validate() error
	// Run reads and extends the state.
	Run(ctx context.Context, env *Env, st *State) error
}

// registry maps a stage's configuration key to a fresh stage. Each stage's
// file fills it from an init function (as bleve's analyzers register
// themselves); it is written only while the package initialises and read
// only afterwards.
var registry = map[string]func() Stage{}

// register adds a stage under its Name. A name registered twice is a
// programming error.
func register(mk func() Stage) {
	name := mk().Name()
	if _, dup := registry[name]; dup {
		panic("stages: stage " + name + " registered twice")
	}
	registry[name] = mk
}

// New returns a fresh stage of the given configuration key, its settings
// zero (Validate fills in the defaults); false when no stage has that name.
func New(name string) (Stage, bool) {
	mk, ok := registry[name]
	if !ok {
		return nil, false
	}
	return mk(), true
}

// Names lists the registered stages' configuration keys, sorted.
func Names() []string { return slices.Sorted(maps.Keys(registry)) }

// Producer is a stage that puts named lists in State.Lists: what fusion
// combines, and what fusion weights name.
type Producer interface {
	Stage
	// Produces names the lists the stage adds or replaces, with its
	// settings (after Validate).
	Produces() []string
}

// Retriever is a producer whose Run reads only the request (State.Query)
// and the index, never the lists or steps other stages left in the State.
// Retrieves has no behaviour: implementing it is the stage's promise of
// that, which the pipeline relies on twice. A configuration must start with
// a retriever, since every other stage works on a ranking one produced; and
// retrievers in a row run concurrently, each into a State of its own (see
// State.Fork and State.Merge), with the result of running them in turn.
// A stage that reads State.Lists (feedback, fusion) must not implement it,
// though it produces lists.
type Retriever interface {
	Producer
	Retrieves()
}

// ListReader is a stage whose settings name lists (fusion weights): a
// configuration is refused when a named list is not produced by a stage
// before it.
type ListReader interface {
	Stage
	// ListsNamed lists the list names the stage's settings hold, setting by
	// setting, in a fixed order.
	ListsNamed() []ListRef
}

// ListRef is a list named in a stage's setting.
type ListRef struct {
	Setting string // the setting's key ("weights")
	List    string // the list's name ("vector")
}

// SettingError is a stage setting refused by Validate. Key is the setting's
// configuration key, so the file's line can be found; Msg is the whole
// message, which names the key in its own words.
type SettingError struct {
	Key string
	Msg string
}

func (e *SettingError) Error() string { return e.Msg }

// settingErrorf makes a *SettingError for key.
func settingErrorf(key, format string, args ...any) error {
	return &SettingError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// checkChoice refuses, as a *SettingError for key, a value of a setting
// that takes one of allowed; "" (the default) passes.
func checkChoice[T ~string](key string, v T, allowed []T) error {
	if v == "" {
		return nil
	}
	if err := choice.Check(key, v, allowed); err != nil {
		return &SettingError{Key: key, Msg: err.Error()}
	}
	return nil
}

// decodeChoice decodes such a setting from its configuration node,
// refusing a value as Validate does, at decoding, so the refusal names the
// setting's line; a node that is no string (a list, a mapping) gets the
// decoder's message, as a string setting's would.
func decodeChoice[T ~string](n *yaml.Node, key string, dst *T, allowed []T) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	if err := checkChoice(key, T(s), allowed); err != nil {
		return err
	}
	*dst = T(s)
	return nil
}

// ModelNeed is one model a stage loads.
type ModelNeed struct {
	Role models.Role // models.RoleEmbedder or models.RoleCrossEncoder
	Name string      // the model; "" means the embedder the index was built with
}

// ModelUser is a stage that loads models.
type ModelUser interface {
	Stage
	// Needs lists the models the stage loads with its settings (after Validate).
	Needs() []ModelNeed
	// ModelRoles lists every role the stage can need under some settings:
	// what a missing model of that role disables.
	ModelRoles() []models.Role
}

// Embedder embeds queries and passages into one vector space.
type Embedder interface {
	Name() string
	EmbedQuery(ctx context.Context, q string) ([]float32, error)
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
}

// PairScorer scores (query, passage) pairs jointly: a cross-encoder.
type PairScorer interface {
	Score(ctx context.Context, query string, passages []string) ([]float32, error)
}

// Models gives stages their models. Implementations load each model once and
// return an error wrapping models.ErrNotInstalled when its files are absent.
type Models interface {
	Embedder(ctx context.Context, name string) (Embedder, error)
	CrossEncoder(ctx context.Context, name string) (PairScorer, error)
}

// Env is what stages run against: the index and the models, shared by every
// query of a process. NewEnv assembles one and WithDB and
// WithoutPassageCache derive others; its parts are reached through methods
// that say what is missing, so a zero Env refuses to run rather than crash.
type Env struct {
	db       *index.DB
	models   Models
	passages *vectorCache // passage embeddings for the bi-encoder scorer; nil disables caching
}

// PassageCacheSize is how many passage embeddings an Env from NewEnv keeps for
// the bi-encoder scorer: 20,000 vectors of 384 float32s is about 31 MB.
const PassageCacheSize = 20000

// NewEnv is the one assembly of an Env: the index, the models, and a passage
// cache of PassageCacheSize. A nil db makes an Env to derive others from
// (WithDB) once there is an index.
func NewEnv(db *index.DB, m Models) *Env {
	return &Env{db: db, models: m, passages: newVectorCache(PassageCacheSize)}
}

// WithDB is e reading another index with the same models and passage cache,
// as a server's environment after a rebuild replaced its index handle.
func (e *Env) WithDB(db *index.DB) *Env {
	c := *e
	c.db = db
	return &c
}

// WithoutPassageCache is e embedding every passage the bi-encoder scorer
// reads, as a benchmark of that cost needs.
func (e *Env) WithoutPassageCache() *Env {
	c := *e
	c.passages = nil
	return &c
}

// ErrNoIndex and ErrNoModels say an Env lacks a part a stage needs: it was
// not made by NewEnv with one (a zero Env, or NewEnv's with a nil db before
// WithDB).
var (
	ErrNoIndex  = errors.New("stages: the environment has no index (make it with NewEnv, or WithDB)")
	ErrNoModels = errors.New("stages: the environment has no models (make it with NewEnv)")
)

// Index is the index the stages search; ErrNoIndex when e has none.
func (e *Env) Index() (*index.DB, error) {
	if e == nil || e.db == nil {
		return nil, ErrNoIndex
	}
	return e.db, nil
}

// Embedder loads the named embedder; ErrNoModels when e has no models.
func (e *Env) Embedder(ctx context.Context, name string) (Embedder, error) {
	if e == nil || e.models == nil {
		return nil, ErrNoModels
	}
	return e.models.Embedder(ctx, name)
}

// CrossEncoder loads the named cross-encoder; ErrNoModels when e has no
// models.
func (e *Env) CrossEncoder(ctx context.Context, name string) (PairScorer, error) {
	if e == nil || e.models == nil {
		return nil, ErrNoModels
	}
	return e.models.CrossEncoder(ctx, name)
}

// IndexEmbedder returns the model the index was embedded with, for a stage
// that searches the stored vectors: the query must be embedded by the same
// model, so a stage naming another one is refused rather than compared across
// two vector spaces. An empty name means the index's model.
func (e *Env) IndexEmbedder(ctx context.Context, name string) (Embedder, error) {
	db, err := e.Index()
	if err != nil {
		return nil, err
	}
	indexed := db.Embedder()
	if name == "" {
		name = indexed
	}
	if name != indexed {
		return nil, fmt.Errorf("the index was embedded with %s, but the stage asks for %s (reindex with VAULT_RAG_EMBEDDER=%s, or drop the stage's model)", indexed, name, name)
	}
	return e.Embedder(ctx, name)
}

// Query is one search request.
type Query struct {
	Text string
	// Keywords and Answer are what the client may send beside the question
	// (see SourceKeywords, SourceAnswer); "" when it sent none. A stage
	// reads them only when its text setting names them.
	Keywords string
	Answer   string
	Filter   index.Filter
	// Now is the clock recency measures age from. Stages never read the wall
	// clock: the caller sets it, so a run can be reproduced.
	Now time.Time
}

// Item is one note in a ranked list, with the chunk that stood for it.
type Item struct {
	NoteID  int64
	ChunkID int64
	Score   float64
}

// List is a ranked list of notes, best first.
type List struct {
	Stage string
	Items []Item
	// Weighted lists carry their own weight for this query (Weight, 0..1),
	// which fusion multiplies with the configuration's: a keyword list
	// whose best match holds little of the question's rare terms
	// (Keyword.Evidence) weighs that little.
	Weighted bool
	Weight   float64
}

// Step records what one stage did, for explain output and the eval harness's
// stage diagnosis.
type Step struct {
	Stage    string
	Items    []Item             // the ranking after this stage
	Info     string             // a line for people, e.g. the outcome of a scope escalation with its numbers
	Outcome  index.ScopeOutcome // how a scoped search ended; zero for a stage that does not search a scope
	Duration time.Duration
	// Cut is the best note the stage left out of Items, where it knows it:
	// a near-tie across the cut can change the list's membership on another
	// CPU (pipeline.NearTies).
	Cut *Item
	// SameOnEveryCPU says the scores come out the same on every CPU, given the lists
	// before it: bm25 (FTS5's double arithmetic over term counts), rank
	// fusion, a boost added to exact scores. A near-tie among exact scores
	// is not noise. Model scores (cosines, reranker logits) are not exact:
	// ONNX Runtime's kernels differ by instruction set.
	SameOnEveryCPU bool
	// Side are lists a stage made on the way and did not rank by (feedback's
	// second-round vector list): their near-ties move what follows too.
	Side []Step
}

// State is the working state of one query through a pipeline.
type State struct {
	Query Query
	// Lists are the retrieval lists produced so far (keyword, vector, hyde),
	// in stage order: what rrf fuses.
	Lists []List
	// Ranking is the current ranking: the latest list a stage produced or
	// reordered. Nil until a retrieval stage runs.
	Ranking []Item
	Steps   []Step

	mu    sync.Mutex
	notes map[int64]index.NoteRow
	memo  *memo // shared with the states forked from this one
}

// memo is what the stages of one request compute once and share, whichever
// of them asks first, also when they run at once on states of their own:
// embedded texts and vetting decisions.
type memo struct {
	mu    sync.Mutex
	vecs  map[string][]float32 // by embedder, mode and text
	vetMu sync.Mutex
	vet   map[int]verdict // ClientTrusted's decisions, by rank
}

// NewState starts a query.
func NewState(q Query) *State { return &State{Query: q, memo: &memo{}} }

// Fork is a state of its own for a stage that runs beside others (see
// Merge), sharing this one's query and what it has computed.
func (s *State) Fork() *State { return &State{Query: s.Query, memo: s.memo} }

// QueryVector embeds the query once per embedder per query, however many
// stages ask.
func (s *State) QueryVector(ctx context.Context, emb Embedder) ([]float32, error) {
	return s.TextVector(ctx, emb, s.Query.Text, EmbedAsQuery)
}

// TextVector embeds one of the request's texts (as a query or as a passage)
// once per embedder, however many stages ask.
func (s *State) TextVector(ctx context.Context, emb Embedder, text, embedAs string) ([]float32, error) {
	key := emb.Name() + "\x00" + embedAs + "\x00" + text
	m := s.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.vecs[key]; ok {
		return v, nil
	}
	var v []float32
	var err error
	if embedAs == EmbedAsPassage {
		var vs [][]float32
		if vs, err = emb.EmbedPassages(ctx, []string{text}); err == nil {
			v = vs[0]
		}
	} else {
		v, err = emb.EmbedQuery(ctx, text)
	}
	if err != nil {
		return nil, fmt.Errorf("embed the %s text: %w", embedAs, err)
	}
	if m.vecs == nil {
		m.vecs = map[string][]float32{}
	}
	m.vecs[key] = v
	return v, nil
}

// Notes loads (and caches) the notes of the given items.
func (s *State) Notes(ctx context.Context, db *index.DB, items []Item) (map[int64]index.NoteRow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var missing []int64
	for _, it := range items {
		if _, ok := s.notes[it.NoteID]; !ok {
			missing = append(missing, it.NoteID)
		}
	}
	if len(missing) > 0 {
		got, err := db.Notes(ctx, missing)
		if err != nil {
			return nil, err
		}
		if s.notes == nil {
			s.notes = map[int64]index.NoteRow{}
		}
		for id, n := range got {
			s.notes[id] = n
		}
	}
	return s.notes, nil
}

// produce records a retrieval stage's list: it joins the lists rrf fuses and
// becomes the current ranking.
func (s *State) produce(stage string, items []Item, info string) {
	s.produceStep(Step{Stage: stage, Items: items, Info: info})
}

// produceStep is produce for a stage that fills in more of its step (Cut,
// Outcome).
func (s *State) produceStep(step Step) {
	s.Lists = append(s.Lists, List{Stage: step.Stage, Items: step.Items})
	s.Ranking = step.Items
	s.Steps = append(s.Steps, step)
}

// rerank records a stage that reorders the current ranking.
func (s *State) rerank(stage string, items []Item, info string) {
	s.Ranking = items
	s.Steps = append(s.Steps, Step{Stage: stage, Items: items, Info: info})
}

// Merge appends what retrieval stages run on states of their own (Fork)
// produced — lists, steps and the ranking — as if they had run on s one after
// another, in the order given.
func (s *State) Merge(subs ...*State) {
	for _, sub := range subs {
		s.Lists = append(s.Lists, sub.Lists...)
		s.Steps = append(s.Steps, sub.Steps...)
		s.Ranking = sub.Ranking // each retrieval stage's list becomes the ranking
	}
}

// markSameOnEveryCPU records that the last step's scores are the same on every CPU.
func (s *State) markSameOnEveryCPU() { s.Steps[len(s.Steps)-1].SameOnEveryCPU = true }

// rankingSameOnEveryCPU says whether the current ranking's scores are the same on every CPU.
func (s *State) rankingSameOnEveryCPU() bool {
	return len(s.Steps) > 0 && s.Steps[len(s.Steps)-1].SameOnEveryCPU
}

// ErrNoRanking says a reordering stage ran before any retrieval stage.
var ErrNoRanking = errors.New("no ranking to work on: put a retrieval stage (keyword, vector, hyde) first")

// itemsOf is a note search's hits as a list: the index's note searches
// (Keyword by note, Vector by Limit) already give each note once, by its best
// chunk, at most their limit.
func itemsOf(hits []index.Hit) []Item {
	var out []Item
	for _, h := range hits {
		out = append(out, itemOf(h))
	}
	return out
}

func itemOf(h index.Hit) Item { return Item{NoteID: h.NoteID, ChunkID: h.ChunkID, Score: h.Score} }

// sortByScore orders items by score, highest first; equal scores keep their
// previous order, so every reordering is deterministic.
func sortByScore(items []Item) {
	sort.SliceStable(items, func(i, j int) bool { return items[i].Score > items[j].Score })
}
