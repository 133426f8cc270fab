package server

import (
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/pipeline"
)

// The server's answers are made of the types below and the result types
// beside each tool, never of another package's: docs/mcp.md describes these
// names, and a field renamed in the index's rows or the pipeline's result
// must not rename one of them. Each is filled from its source by a function
// here; testdata/wire holds their schema (TestWireSchema).

// NoteMeta is a note's frontmatter as the index holds it: type, project,
// status and topics (its tags: frontmatter topics and tags, inline #tags)
// lower-cased, as the filters compare them; source as written; date the day
// the note says it is of (frontmatter or file name), YYYY-MM-DD, absent when
// it says none; modified the file's day.
type NoteMeta struct {
	Type     string   `json:"type,omitempty"`
	Date     string   `json:"date,omitempty"`
	Modified string   `json:"modified,omitempty"`
	Project  string   `json:"project,omitempty"`
	Status   string   `json:"status,omitempty"`
	Source   string   `json:"source,omitempty"`
	Topics   []string `json:"topics,omitempty"`
}

// noteMeta is a note's metadata as answers give it: its date only when
// written (source "frontmatter" or "filename"), the file time as modified.
func noteMeta(m index.NoteMeta, dateSource string, modified time.Time) NoteMeta {
	out := NoteMeta{Type: m.Type, Project: m.Project, Status: m.Status, Source: m.Source, Topics: m.Topics}
	if vault.DateWritten(dateSource) {
		out.Date = m.Date
	}
	if !modified.IsZero() {
		out.Modified = modified.UTC().Format(time.DateOnly)
	}
	return out
}

func rowMeta(r index.NoteRow) NoteMeta { return noteMeta(r.NoteMeta, r.DateSource, r.Modified) }

// Filter is a search's or listing's filters as vault_search repeats them.
type Filter struct {
	PathPrefix string   `json:"path,omitempty"`
	Type       string   `json:"type,omitempty"`
	Project    string   `json:"project,omitempty"`
	Status     string   `json:"status,omitempty"`
	Topics     []string `json:"topics,omitempty"`
	DateFrom   string   `json:"date_from,omitempty"`
	DateTo     string   `json:"date_to,omitempty"`
}

func filterOf(f index.Filter) Filter {
	return Filter{PathPrefix: f.PathPrefix, Type: f.Type, Project: f.Project, Status: f.Status, Topics: f.Topics, DateFrom: f.DateFrom, DateTo: f.DateTo}
}

// SearchNote is one note of vault_search's answer: where it is, what it
// is, why it matched, and the passages that answer.
type SearchNote struct {
	Rank  int    `json:"rank"`
	Path  string `json:"path"`
	Title string `json:"title"`
	NoteMeta
	Match    Match         `json:"match"`
	Passages []PassageText `json:"passages"`
	Explain  []StageRank   `json:"explain,omitempty"`
	Related  []Link        `json:"related,omitempty"` // the top hit's linked notes, when asked for
}

// MaxSearchTopics is how many of a note's topics a search answer shows.
const MaxSearchTopics = 5

// Match says why a note was found: the rank each retrieval branch gave it
// (keyword, vector, ...; a branch that did not find it is absent) and which
// of the question's words the note lacks (stopwords aside; it holds the
// others, in its text, headings or title).
type Match struct {
	Ranks   map[string]int `json:"ranks"`
	Missing []string       `json:"missing,omitempty"`
}

// PassageText is a part of a found note: whole sentences or lines around
// those that best match, under its heading path (headings of every level,
// joined by " › ", as vault_read's section takes it).
type PassageText struct {
	Heading string `json:"heading,omitempty"`
	Text    string `json:"text"`
	More    bool   `json:"more,omitempty"` // the section goes on: vault_read with this heading reads it
}

// StageRank is where one stage put a note (explain).
type StageRank struct {
	Stage string  `json:"stage"`
	Rank  int     `json:"rank"` // 0: the stage did not rank it
	Score float64 `json:"score,omitempty"`
}

// Link is a note the top hit links to, or that links to it.
type Link struct {
	Path      string `json:"path"`
	Title     string `json:"title"`
	Direction string `json:"direction"` // "links to" or "linked from"
	Heading   string `json:"heading,omitempty"`
}

// StageInfo is what one stage of a search did.
type StageInfo struct {
	Stage   string  `json:"stage"`
	Count   int     `json:"count"`
	Info    string  `json:"info,omitempty"`
	Outcome string  `json:"outcome,omitempty"` // how a vector stage's scope search ended
	Millis  float64 `json:"ms"`
}

// searchNotes converts a result's notes, keeping nil as nil: an answer
// without notes has always said so as null.
func searchNotes(in []pipeline.ResultNote) []SearchNote {
	if in == nil {
		return nil
	}
	out := make([]SearchNote, len(in))
	for i, n := range in {
		out[i] = SearchNote{Rank: n.Rank, Path: n.Path, Title: n.Title, NoteMeta: rowMeta(n.Note), Passages: []PassageText{},
			Match: Match{Ranks: map[string]int{}, Missing: n.Match.Missing}}
		// A search's notes carry what tells them apart and no more: the
		// date the note states, else its file's day; at most
		// MaxSearchTopics topics. vault_read gives the rest.
		out[i].Source = ""
		if out[i].Date != "" {
			out[i].Modified = ""
		}
		if len(out[i].Topics) > MaxSearchTopics {
			out[i].Topics = out[i].Topics[:MaxSearchTopics]
		}
		for _, r := range n.Match.Ranks {
			out[i].Match.Ranks[r.Stage] = r.Rank
		}
		for _, p := range n.Passages {
			out[i].Passages = append(out[i].Passages, PassageText{Heading: strings.Join(p.HeadingPath, vault.PathSeparator), Text: p.Text, More: p.Cut})
		}
		for _, e := range n.Explain {
			out[i].Explain = append(out[i].Explain, StageRank{Stage: e.Stage, Rank: e.Rank, Score: e.Score})
		}
		for _, r := range n.Related {
			out[i].Related = append(out[i].Related, Link{Path: r.Path, Title: r.Title, Direction: r.Direction, Heading: r.Heading})
		}
	}
	return out
}

func stageInfos(in []pipeline.StageInfo) []StageInfo {
	if in == nil {
		return nil
	}
	out := make([]StageInfo, len(in))
	for i, st := range in {
		out[i] = StageInfo{Stage: st.Stage, Count: st.Count, Info: st.Info, Outcome: st.Outcome.String(), Millis: st.Millis}
	}
	return out
}

// Coverage is how many of the index's chunks have their vector.
type Coverage struct {
	Embedded int `json:"embedded"`
	Chunks   int `json:"chunks"`
}

// Complete reports whether every chunk has its vector.
func (c Coverage) Complete() bool { return c.Embedded >= c.Chunks }

func coverageOf(c index.Coverage) Coverage { return Coverage{Embedded: c.Embedded, Chunks: c.Chunks} }

// BuildHolder is a build of the index another process is running.
type BuildHolder struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Mode    string    `json:"mode"` // "full" or "incremental", as asked
	// Progress is how far it has got, as it last recorded.
	Progress *BuildProgress `json:"progress,omitempty"`
}

// BuildProgress is how far a build has got: done of total notes read
// (phase "reading"), or chunks embedded ("embedding").
type BuildProgress struct {
	Phase string `json:"phase"`
	Done  int    `json:"done"`
	Total int    `json:"total"`
}

func buildHolderOf(h index.BuildHolder) *BuildHolder {
	b := &BuildHolder{PID: h.PID, Started: h.Started, Mode: h.Mode}
	if p := h.Progress; p != nil {
		b.Progress = &BuildProgress{Phase: p.Phase, Done: p.Done, Total: p.Total}
	}
	return b
}

// BuildCounts is what a build did, in numbers.
type BuildCounts struct {
	Mode        string  `json:"mode"`               // "full" or "incremental"
	Fallback    string  `json:"fallback,omitempty"` // why an incremental build ran as a full one
	Notes       int     `json:"notes"`
	Chunks      int     `json:"chunks"`
	Added       int     `json:"added"`
	Changed     int     `json:"changed"`
	Removed     int     `json:"removed"`
	Unchanged   int     `json:"unchanged"`
	Embedded    int     `json:"embedded"` // chunks run through the model
	Reused      int     `json:"reused"`   // chunks whose stored vector was kept
	Truncated   int     `json:"truncated"`
	KeywordOnly int     `json:"keyword_only,omitempty"`
	Script      string  `json:"script,omitempty"`
	ScriptShare float64 `json:"script_share,omitempty"`
}

func buildCounts(c index.Counts) BuildCounts {
	return BuildCounts{Mode: c.Mode, Fallback: c.Fallback, Notes: c.Notes, Chunks: c.Chunks, Added: c.Added, Changed: c.Changed,
		Removed: c.Removed, Unchanged: c.Unchanged, Embedded: c.Embedded, Reused: c.Reused, Truncated: c.Truncated, KeywordOnly: c.KeywordOnly,
		Script: c.Script, ScriptShare: c.ScriptShare}
}

// FileProblem is a file a build passed over, or indexed despite a problem:
// reason says it in one line; kind is worded alike for every file with that
// problem; detail is the file's own part.
type FileProblem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Kind   string `json:"kind"`
	Detail string `json:"detail,omitempty"`
}

// fileProblems converts a report's list; never nil: the answer lists them
// as [] when there are none.
func fileProblems(in []vault.Skipped) []FileProblem {
	out := make([]FileProblem, len(in))
	for i, s := range in {
		out[i] = FileProblem{Path: s.Path, Reason: s.Reason, Kind: s.Kind, Detail: s.Detail}
	}
	return out
}

// Dates is the span of the notes' dates and where they were read from.
type Dates struct {
	From    string         `json:"from,omitempty"` // YYYY-MM-DD, the earliest; "" without notes
	To      string         `json:"to,omitempty"`   // YYYY-MM-DD, the latest
	Sources map[string]int `json:"sources"`        // notes by where their date was read
}

func datesOf(d index.Dates) Dates { return Dates{From: d.From, To: d.To, Sources: d.Sources} }

// Facet is how the notes spread over one field's values.
type Facet struct {
	Values  []FacetValue `json:"values"`  // most notes first, ties by value
	More    int          `json:"more"`    // distinct values beyond Values
	Without int          `json:"without"` // notes with no value
}

// FacetValue is one value of a facet and the notes that have it.
type FacetValue struct {
	Value string `json:"value"`
	Notes int    `json:"notes"`
}

func facetOf(f index.Facet) *Facet {
	out := &Facet{More: f.More, Without: f.Without}
	if f.Values != nil {
		out.Values = make([]FacetValue, len(f.Values))
		for i, v := range f.Values {
			out.Values[i] = FacetValue{Value: v.Value, Notes: v.Notes}
		}
	}
	return out
}

// FolderTitles is one folder's notes by title.
type FolderTitles struct {
	Folder string   `json:"folder"` // vault-relative, ending in "/"; "" for the top level
	Notes  int      `json:"notes"`
	Titles []string `json:"titles"`         // case-insensitive title order
	More   int      `json:"more,omitempty"` // the folder's notes whose titles are not listed
}

func folderTitles(in []index.FolderTitles) []FolderTitles {
	if in == nil {
		return nil
	}
	out := make([]FolderTitles, len(in))
	for i, f := range in {
		out[i] = FolderTitles{Folder: f.Folder, Notes: f.Notes, Titles: f.Titles, More: f.More}
	}
	return out
}
