package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/stages"
)

// MaxQueryBytes bounds a query's text. Longer text is refused, not truncated,
// so nobody mistakes a cut query's answer for the whole one's.
const MaxQueryBytes = 16 << 10

// Request is one search.
type Request struct {
	Text string
	// Keywords and Answer are the client's optional expansions of Text: the
	// words a note that answers would contain, and a passage written as that
	// note (stages.SourceKeywords, stages.SourceAnswer). A configuration
	// whose stages do not read them ignores them.
	Keywords string
	Answer   string
	Filter   index.Filter
	Now      time.Time // required by recency; callers set it (stages never read the clock)
	K        int       // notes to return (default 10)
	Explain  bool      // record every stage's rank and score per note
	// Detail is how much of each note the result shows (default
	// DetailPassage).
	Detail Detail
	// Related asks for the notes the top hit links to and that link to it.
	Related bool
	// PassageNotes is how many of the first notes get passages and a match
	// (0: all K): a caller that reads only the first ones need not pay for
	// the rest.
	PassageNotes int
}

// ParseNow reads a request's Now as a caller writes it: RFC 3339 or
// YYYY-MM-DD (midnight UTC). ok is false for anything else; the caller says
// which of its inputs was wrong, and what an absent value means (the wall
// clock, read at the edge).
func ParseNow(s string) (now time.Time, ok bool) {
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// Result is a ranked answer.
type Result struct {
	Config string       `json:"config"`
	Query  string       `json:"query"`
	Notes  []ResultNote `json:"notes"`
	Stages []StageInfo  `json:"stages"`
	Took   string       `json:"took"`
}

// ResultNote is one note of a result with the chunk that stood for it. Date,
// Type and Project are index.NoteMeta's, named alike; they are fields of their
// own because the answer has always put them in this order, after the score.
type ResultNote struct {
	Rank    int         `json:"rank"`
	Path    string      `json:"path"`
	Title   string      `json:"title"`
	Heading string      `json:"heading,omitempty"`
	Score   float64     `json:"score"`
	Date    string      `json:"date,omitempty"`
	Type    string      `json:"type,omitempty"`
	Project string      `json:"project,omitempty"`
	Explain []StageRank `json:"explain,omitempty"`
	Related []Link      `json:"related,omitempty"` // the top hit's linked notes, on request
	// Note is the note's row: its metadata and where its date came from.
	Note index.NoteRow `json:"-"`
	// Passages are the parts of the note that best match the query, at
	// the request's Detail.
	Passages []Passage `json:"-"`
	// Match says why the note was found: the rank each retriever gave it,
	// and which of the question's terms it holds.
	Match Match `json:"-"`
}

// Match is why a note was found.
type Match struct {
	Ranks   []StageRank // the retrieval stages that ranked it, with their rank
	Terms   []string    // the question's words the note holds (title and headings included), stopwords aside
	Missing []string    // the question's words it does not hold
}

// Link is a note linked to or from a result's top hit: index.Related in the
// answer's own words, so a change to the index's row types cannot change
// this format.
type Link struct {
	Path      string `json:"path"`
	Title     string `json:"title"`
	Direction string `json:"direction"` // "links to" or "linked from"
	Heading   string `json:"heading,omitempty"`
}

// StageRank is where one stage put a note.
type StageRank struct {
	Stage string  `json:"stage"`
	Rank  int     `json:"rank"` // 0: the stage did not rank it
	Score float64 `json:"score,omitempty"`
}

// StageInfo is what one stage did.
type StageInfo struct {
	Stage   string             `json:"stage"`
	Count   int                `json:"count"`
	Info    string             `json:"info,omitempty"`
	Outcome index.ScopeOutcome `json:"outcome,omitempty"` // how a KNN stage's scope search ended
	Millis  float64            `json:"ms"`
}

// Run runs a configuration for one request. It validates the request first.
func Run(ctx context.Context, env *stages.Env, cfg *Config, req Request) (*Result, *stages.State, error) {
	start := time.Now()
	if err := validate(&req); err != nil {
		return nil, nil, err
	}
	st := stages.NewState(stages.Query{Text: req.Text, Keywords: req.Keywords, Answer: req.Answer, Filter: req.Filter, Now: req.Now})
	for i := 0; i < len(cfg.Stages); {
		// Retrievers in a row read only the query and the index: they run at
		// once, each into a state of its own, merged in stage order, so the
		// result is the sequential one and hybrid costs its slower branch.
		j := i
		for j < len(cfg.Stages) && isRetriever(cfg.Stages[j]) {
			j++
		}
		if j-i > 1 {
			if err := runRetrievers(ctx, env, cfg, st, cfg.Stages[i:j]); err != nil {
				return nil, st, err
			}
			i = j
			continue
		}
		s := cfg.Stages[i]
		t0 := time.Now()
		if err := s.Run(ctx, env, st); err != nil {
			return nil, st, fmt.Errorf("configuration %s, stage %s: %w", cfg.Name, s.Name(), err)
		}
		st.Steps[len(st.Steps)-1].Duration = time.Since(t0)
		i++
	}
	db, err := env.Index()
	if err != nil {
		return nil, st, err
	}
	res, err := assemble(ctx, db, cfg, req, st)
	if err != nil {
		return nil, st, err
	}
	res.Took = time.Since(start).Round(time.Microsecond).String()
	return res, st, nil
}

func isRetriever(s stages.Stage) bool {
	_, ok := s.(stages.Retriever)
	return ok
}

// runRetrievers runs retrieval stages concurrently, each into its own state,
// and merges their lists and steps into st in stage order. The first error in
// stage order wins.
func runRetrievers(ctx context.Context, env *stages.Env, cfg *Config, st *stages.State, rs []stages.Stage) error {
	subs := make([]*stages.State, len(rs))
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for k, s := range rs {
		subs[k] = st.Fork()
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			if errs[k] = s.Run(ctx, env, subs[k]); errs[k] == nil {
				subs[k].Steps[len(subs[k].Steps)-1].Duration = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return fmt.Errorf("configuration %s, stage %s: %w", cfg.Name, rs[k].Name(), err)
		}
	}
	st.Merge(subs...)
	return nil
}

// ErrBadQuery says a request was refused before it ran.
var ErrBadQuery = errors.New("bad query")

func validate(req *Request) error {
	req.Text = strings.TrimSpace(req.Text)
	if req.Text == "" {
		return fmt.Errorf("%w: the query is empty", ErrBadQuery)
	}
	for _, f := range []struct {
		name string
		text *string
	}{{"query", &req.Text}, {"keywords", &req.Keywords}, {"answer", &req.Answer}} {
		*f.text = strings.TrimSpace(*f.text)
		if err := checkText(f.name, *f.text); err != nil {
			return err
		}
	}
	// A client that repeats the question as its keywords or its answer adds
	// nothing: searching the question twice over would only weigh it
	// otherwise, so the repeat is dropped and the search is the plain one.
	q := normalize(req.Text)
	if normalize(req.Keywords) == q {
		req.Keywords = ""
	}
	if normalize(req.Answer) == q {
		req.Answer = ""
	}
	if req.K == 0 {
		req.K = 10
	}
	if _, err := ParseDetail(string(req.Detail)); err != nil {
		return err
	}
	if req.K < 1 || req.K > 200 {
		return fmt.Errorf("%w: k %d is outside 1..200", ErrBadQuery, req.K)
	}
	if err := req.Filter.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	return nil
}

// checkText refuses a request text that is too long or not UTF-8. NUL and
// control characters pass: they separate terms like any other non-letter.
func checkText(name, text string) error {
	switch {
	case len(text) > MaxQueryBytes:
		return fmt.Errorf("%w: the %s is %d bytes; the limit is %d", ErrBadQuery, name, len(text), MaxQueryBytes)
	case !utf8.ValidString(text):
		return fmt.Errorf("%w: the %s is not valid UTF-8", ErrBadQuery, name)
	}
	return nil
}

// normalize is a text as compared for a repeat: lower case, single spaces,
// no trailing punctuation.
func normalize(s string) string {
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), " ")), "?!.。？！")
}

func assemble(ctx context.Context, db *index.DB, cfg *Config, req Request, st *stages.State) (*Result, error) {
	res := &Result{Config: cfg.Name, Query: req.Text, Notes: []ResultNote{}}
	for _, s := range st.Steps {
		res.Stages = append(res.Stages, StageInfo{Stage: s.Stage, Count: len(s.Items), Info: s.Info, Outcome: s.Outcome, Millis: measure.Millis(s.Duration)})
	}
	top := st.Ranking[:min(req.K, len(st.Ranking))]
	notes, err := st.Notes(ctx, db, top)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(top))
	for i, it := range top {
		ids[i] = it.ChunkID
	}
	chunks, err := db.Chunks(ctx, ids)
	if err != nil {
		return nil, err
	}
	qt := newQueryTerms(req)
	detail := req.Detail
	if detail == "" {
		detail = DetailPassage
	}
	for i, it := range top {
		n, c := notes[it.NoteID], chunks[it.ChunkID]
		rn := ResultNote{
			Rank: i + 1, Path: n.Path, Title: n.Title, Heading: c.Heading,
			Score: it.Score, Date: n.Date, Type: n.Type, Project: n.Project,
			Note: n,
		}
		if req.Explain {
			rn.Explain = explain(st.Steps, it.NoteID)
		}
		if req.PassageNotes > 0 && i >= req.PassageNotes {
			res.Notes = append(res.Notes, rn)
			continue
		}
		all, err := db.NoteChunks(ctx, it.NoteID)
		if err != nil {
			return nil, err
		}
		nu := splitNote(all)
		nu.scoreUnits(qt, it.ChunkID)
		budget, count := passageBudget(detail, i)
		rn.Passages = nu.choosePassages(it.ChunkID, detail, budget, count)
		rn.Match.Terms, rn.Match.Missing = matchedTerms(qt, n.Title, &nu)
		for _, s := range st.Lists {
			for r, x := range s.Items {
				if x.NoteID == it.NoteID {
					rn.Match.Ranks = append(rn.Match.Ranks, StageRank{Stage: s.Stage, Rank: r + 1})
					break
				}
			}
		}
		res.Notes = append(res.Notes, rn)
	}
	if len(top) > 0 && req.Related {
		rel, err := db.Related(ctx, top[0].NoteID)
		if err != nil {
			return nil, err
		}
		for _, r := range rel {
			res.Notes[0].Related = append(res.Notes[0].Related, Link{Path: r.Path, Title: r.Title, Direction: r.Direction, Heading: r.Heading})
		}
	}
	return res, nil
}

func explain(steps []stages.Step, note int64) []StageRank {
	out := make([]StageRank, 0, len(steps))
	for _, s := range steps {
		r := StageRank{Stage: s.Stage}
		for i, it := range s.Items {
			if it.NoteID == note {
				r.Rank, r.Score = i+1, it.Score
				break
			}
		}
		out = append(out, r)
	}
	return out
}

// RankAfter returns, for each step, the 1-based rank of the first item whose
// note satisfies want, or 0 when none does: the eval harness's stage diagnosis.
func RankAfter(steps []stages.Step, want func(noteID int64) bool) []StageRank {
	out := make([]StageRank, 0, len(steps))
	for _, s := range steps {
		r := StageRank{Stage: s.Stage}
		for i, it := range s.Items {
			if want(it.NoteID) {
				r.Rank, r.Score = i+1, it.Score
				break
			}
		}
		out = append(out, r)
	}
	return out
}
