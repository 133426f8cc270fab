package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
)

// Tool names.
const (
	ToolSearch   = "vault_search"
	ToolRead     = "vault_read"
	ToolList     = "vault_list"
	ToolReindex  = "vault_reindex"
	ToolDelta    = "vault_delta"
	ToolOverview = "vault_overview"
)

// Limits of the tools' parameters.
const (
	MaxK                 = 50
	MaxListLimit         = 200
	MaxOverviewLimit     = 200 // values per facet
	DefaultOverviewLimit = 20
	MaxOverviewTitles    = 50 // titles per folder
)

// configNameRule is why a configuration name from a client was refused: it
// may be a bare name only (pipeline.ValidName), never a path, since
// pipeline.Find would read any YAML file it is given.
const configNameRule = "a configuration is named by a bare name from configs/ or experiments/ (" + pipeline.NameRule + "), not a path"

// filterOptions are the filter parameters of vault_search and vault_list.
// Their descriptions name no values: each vault has its own, and
// vault_overview lists them.
func filterOptions() []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithString("path", mcp.Description(`Only notes whose vault-relative path starts with this (case-sensitive), usually a folder ending in "/": vault_overview lists the top-level ones.`)),
		mcp.WithString("type", mcp.Description("Only notes with this frontmatter type (case-insensitive; vault_overview lists the vault's types).")),
		mcp.WithString("project", mcp.Description("Only notes of this frontmatter project (case-insensitive; vault_overview lists them).")),
		mcp.WithString("status", mcp.Description("Only notes with this frontmatter status (case-insensitive; vault_overview lists them).")),
		mcp.WithArray("topics", mcp.WithStringItems(), mcp.Description("Only notes carrying all of these topics: frontmatter topics or tags, case-insensitive, a leading # ignored (vault_overview lists them).")),
		mcp.WithString("date_from", mcp.Pattern(`^\d{4}-\d{2}-\d{2}$`), mcp.Description("Only notes dated on or after this day (YYYY-MM-DD).")),
		mcp.WithString("date_to", mcp.Pattern(`^\d{4}-\d{2}-\d{2}$`), mcp.Description("Only notes dated on or before this day (YYYY-MM-DD).")),
	}
}

func readOnly(title string) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{Title: title, ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false), IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)})
}

// KeywordsDescription and AnswerDescription tell the calling model what to
// write in vault_search's optional expansions, and in which language: the
// notes' (LanguageRule). What a client's keywords and answer, written without
// seeing the notes, are worth on real vaults is in the +client rows of
// docs/results.md (`make eval`).
func KeywordsDescription(ls vault.Languages) string {
	target, _, example := languageTarget(ls)
	return "Optional. A keyword query for the same question: 3 to 12 space-separated terms that a note answering it would " +
		"probably contain — the exact names, API identifiers, config keys, error codes, commands, synonyms and the domain's own vocabulary, " +
		"in " + target + ", whatever the language of the question. No boolean operators or quotes. " +
		exampleNote(example) +
		`Example, for "my laptop keeps waking up at night": "wake sleep suspend hibernate lid wakeup ACPI power settings". ` +
		"Leave it out rather than repeat the question."
}

// AnswerDescription: see KeywordsDescription.
func AnswerDescription(ls vault.Languages) string {
	_, target, example := languageTarget(ls)
	return "Optional. One to three sentences (at most about 60 words) written as the passage of a note that would answer " +
		"the question, in " + target + ", whatever the language of the question, as if you were its author: state the likely answer plainly, with the terms such a note would use. " +
		"Guesses are fine — it is only used to find the note, never shown. " +
		exampleNote(example) +
		`Example, for "my laptop keeps waking up at night": "To stop the laptop from waking from sleep, disable wake-on-LAN and USB wake sources in the power settings; check which device woke it with the wake history." ` +
		"Leave it out rather than repeat the question."
}

// exampleNote keeps the English examples from overriding the language rule
// for a vault of another language (target, from languageTarget; "" for an
// English one).
func exampleNote(target string) string {
	if target == "" {
		return ""
	}
	return "The example below is in English only to show the kind of text: write yours in " + target + ". "
}

// Tools returns the six tools' definitions, as tools/list shows them, for a
// vault whose notes are in the languages ls counts: vault_search's
// description and expansions say which language to write them in.
func Tools(ls vault.Languages) []mcp.Tool {
	search := append([]mcp.ToolOption{
		mcp.WithDescription("Search the vault's notes for a question or keywords. Runs the server's retrieval configuration (BM25 + embeddings by default). " +
			"You help it most by also sending keywords and a hypothetical_answer: you know how such notes are usually worded, the search does not. " +
			LanguageRule(ls) + " " +
			"The filters take the vault's own values: vault_overview lists them. " +
			"Returns ranked notes with path, title, heading, snippet and score; what each stage did (the vector stage says how a filtered search ended: " +
			`"filled", "drained" (no more in scope) or "ladder-end" (stopped looking)); the notes linked to and from the top hit; and any degraded capability. ` +
			fmt.Sprintf("On a vault whose first index is still being built, it waits up to %g s for the keyword index, and says how far the vectors are.", DefaultFirstIndexWait.Seconds())),
		mcp.WithString("query", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(pipeline.MaxQueryBytes), mcp.Description("What to look for, in plain words or exact tokens (error codes, config keys).")),
		mcp.WithString("keywords", mcp.MaxLength(pipeline.MaxQueryBytes), mcp.Description(KeywordsDescription(ls))),
		mcp.WithString("hypothetical_answer", mcp.MaxLength(pipeline.MaxQueryBytes), mcp.Description(AnswerDescription(ls))),
		mcp.WithInteger("k", mcp.Min(1), mcp.Max(MaxK), mcp.Description("How many notes to return (1..50, default 10).")),
	}, filterOptions()...)
	search = append(search,
		mcp.WithString("now", mcp.Description("The moment recency is measured from: RFC 3339 or YYYY-MM-DD (default: the server's clock).")),
		mcp.WithBoolean("explain", mcp.Description("Include every stage's rank and score for each note.")),
		mcp.WithString("config", mcp.Pattern(pipeline.NamePattern), mcp.Description(`A named configuration from configs/ or experiments/ to run instead of the server's (e.g. "keyword", "hybrid").`)),
		mcp.WithSchemaAdditionalProperties(false),
		readOnly("Search the vault"),
	)
	list := append([]mcp.ToolOption{
		mcp.WithDescription("List the vault's notes in path order, filtered by metadata, a page at a time. Returns total, the page, and next_offset when there is more."),
		mcp.WithInteger("offset", mcp.Min(0), mcp.Description("Notes to skip (default 0).")),
		mcp.WithInteger("limit", mcp.Min(1), mcp.Max(MaxListLimit), mcp.Description("Notes per page (1..200, default 50).")),
	}, filterOptions()...)
	list = append(list, mcp.WithSchemaAdditionalProperties(false), readOnly("List notes"))
	return []mcp.Tool{
		mcp.NewTool(ToolSearch, search...),
		mcp.NewTool(ToolRead,
			mcp.WithDescription(`Read one note, or one "## " section of it, by its vault-relative path (as vault_search and vault_list return it). Returns the note's title, metadata, its section headings, and the text. `+
				"Absolute paths, '..', backslashes, encoded traversal, NUL bytes and symlinks leading outside the vault are refused."),
			mcp.WithString("path", mcp.Required(), mcp.Description(`Vault-relative path of the note, as vault_search and vault_list return it, e.g. "projects/plan.md".`)),
			mcp.WithString("section", mcp.Description(`A "## " heading of the note (case-insensitive) to return only that section.`)),
			mcp.WithSchemaAdditionalProperties(false),
			readOnly("Read a note"),
		),
		mcp.NewTool(ToolList, list...),
		mcp.NewTool(ToolOverview,
			mcp.WithDescription("What this vault holds, to search it well; call it first. Returns the numbers of notes and chunks; "+
				"the language the notes are written in, with the rule for vault_search's keywords and hypothetical_answer; the span of the notes' dates "+
				"and where they were read from; and, per facet, the values the filters take with their numbers of notes: "+
				"type, project, status, topics, and the top-level folders (for path). Each facet lists the values with the most notes, "+
				`"more" (how many other values there are) and "without" (notes with no value; for folders, notes at the top level). `+
				"Values are shown lower-cased, as the filters match them (case-insensitively); folders as path takes them. "+
				"With titles, also every folder (in path order, up to limit) with the titles of its notes: the vault's own names, "+
				"worth borrowing for vault_search's keywords."),
			mcp.WithArray("facets", mcp.WithStringEnumItems(index.FacetNames),
				mcp.Description("Which facets to return: any of "+strings.Join(index.FacetNames, ", ")+" (default all; [] for none).")),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(MaxOverviewLimit),
				mcp.Description(fmt.Sprintf("Values per facet, those with the most notes, and folders listed with titles (1..%d, default %d).", MaxOverviewLimit, DefaultOverviewLimit))),
			mcp.WithInteger("titles", mcp.Min(0), mcp.Max(MaxOverviewTitles),
				mcp.Description(fmt.Sprintf("Titles of notes to list per folder (0..%d, default 0: no titles); a folder with more says how many.", MaxOverviewTitles))),
			mcp.WithSchemaAdditionalProperties(false),
			readOnly("Overview of the vault"),
		),
		mcp.NewTool(ToolReindex,
			mcp.WithDescription("Bring the index up to date with the vault: an incremental build that re-embeds only changed notes. Concurrent calls share one run; searches keep working meanwhile. "+
				"Returns what changed and how long it took. The server also reindexes by itself when notes change. "+
				"Called with a progressToken, it sends progress notifications: the chunks embedded of those to embed, a few a second at most, and a last one when the build ends."),
			mcp.WithSchemaAdditionalProperties(false),
			mcp.WithToolAnnotation(mcp.ToolAnnotation{Title: "Reindex the vault", ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(false), IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}),
		),
		mcp.NewTool(ToolDelta,
			mcp.WithDescription("For each candidate item (say, facts from a conversation), say whether the vault already covers it or it is new, with the nearest note, heading and cosine similarity as evidence. "+
				fmt.Sprintf("An item is covered when its similarity reaches the threshold (default %.3f). ", DefaultNoveltyThreshold)+
				`Items written mostly in a script the index's embedding model was not trained on (Cyrillic or Arabic for either shipped model, Chinese for the English one) come back "unscored: language": the model cannot judge them.`),
			mcp.WithArray("items", mcp.Required(), mcp.MinItems(1), mcp.MaxItems(MaxDeltaItems),
				mcp.Items(map[string]any{
					"type": "object",
					"properties": map[string]any{
						"text":  map[string]any{"type": "string", "minLength": 1, "maxLength": MaxDeltaItemBytes, "description": "The item's text."},
						"title": map[string]any{"type": "string", "maxLength": MaxDeltaTitleBytes, "description": "An optional title, embedded before the text."},
					},
					"required":             []string{"text"},
					"additionalProperties": false,
				}),
				mcp.Description(fmt.Sprintf("The candidates, 1..%d, each {text, title?} with text at most %d bytes.", MaxDeltaItems, MaxDeltaItemBytes))),
			mcp.WithNumber("threshold", mcp.Min(0), mcp.Max(1), mcp.Description(fmt.Sprintf("Cosine similarity at or above which an item counts as covered (default %.3f, measured on a private corpus; tune it for yours).", DefaultNoveltyThreshold))),
			mcp.WithSchemaAdditionalProperties(false),
			readOnly("Check what the vault already covers"),
		),
	}
}

// tools pairs each definition with its handler.
func (s *Server) tools() []mcpserver.ServerTool {
	handlers := map[string]func(context.Context, args) (any, error){
		ToolSearch:   s.search,
		ToolRead:     s.read,
		ToolList:     s.list,
		ToolReindex:  s.reindexTool,
		ToolDelta:    s.delta,
		ToolOverview: s.overview,
	}
	var out []mcpserver.ServerTool
	for _, t := range Tools(s.langs) {
		out = append(out, mcpserver.ServerTool{Tool: t, Handler: s.wrap(t, handlers[t.Name])})
	}
	return out
}

// wrap checks a call's arguments against the tool's declared parameters,
// bounds its time, and renders the result as JSON text, or the error as a tool
// error the model can read (never a protocol error).
func (s *Server) wrap(t mcp.Tool, h func(context.Context, args) (any, error)) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := checkArgs(t, req.GetRawArguments())
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		limit := s.opts.RequestTimeout
		if t.Name == ToolReindex {
			limit = s.opts.ReindexTimeout // a first, full build may take minutes
		}
		ctx, cancel := context.WithTimeout(withProgressToken(ctx, req.Params.Meta), limit)
		defer cancel()
		out, err := h(ctx, a)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				err = fmt.Errorf("gave up after %s: %w", limit, err)
			}
			s.log.Info("tool call refused or failed", "tool", t.Name, "err", err)
			return mcp.NewToolResultError(t.Name + ": " + err.Error()), nil
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("%s: encode the result: %w", t.Name, err)
		}
		return mcp.NewToolResultText(string(raw)), nil
	}
}

// SearchResult is vault_search's answer: the pipeline's result, the clock it
// used, the scope escalation's outcome when filters were set, and what this
// server cannot do of what it serves (/health's degraded_stages), so a
// degraded server is never silent.
type SearchResult struct {
	*pipeline.Result
	Now      string     `json:"now"`
	Scope    *ScopeInfo `json:"scope,omitempty"`
	Degraded []string   `json:"degraded"`
	// Vectors says how far the index's vectors are: while a first build
	// embeds, the vector branch ranks only the chunks embedded so far.
	Vectors index.Coverage `json:"vectors"`
	// WaitedMS is how long the call waited for the vault's first index to
	// be built (Options.FirstIndexWait); absent when the index was there.
	WaitedMS int64 `json:"waited_for_first_index_ms,omitempty"`
	// Building is the build of this index another process is running
	// (a second server, a CLI reindex), said while the vectors are
	// incomplete: this answer is from what exists, and the finished index is
	// picked up by itself.
	Building *index.BuildHolder `json:"other_process_building,omitempty"`
}

// ScopeInfo says how a filtered search ended.
type ScopeInfo struct {
	Filter  index.Filter `json:"filter"`
	Outcome string       `json:"outcome"` // the vector stage's "filled: ...", "drained: ..." or "ladder-end: ..."
}

func (s *Server) search(ctx context.Context, a args) (any, error) {
	query, err := a.requiredStr("query")
	if err != nil {
		return nil, err
	}
	keywords, err := a.str("keywords")
	if err != nil {
		return nil, err
	}
	answer, err := a.str("hypothetical_answer")
	if err != nil {
		return nil, err
	}
	k, err := a.integer("k", 1, MaxK, 10)
	if err != nil {
		return nil, err
	}
	f, err := a.filter()
	if err != nil {
		return nil, err
	}
	explain, err := a.boolean("explain")
	if err != nil {
		return nil, err
	}
	nowText, err := a.str("now")
	if err != nil {
		return nil, err
	}
	now := s.opts.Clock().UTC()
	if nowText != "" {
		var ok bool
		if now, ok = pipeline.ParseNow(nowText); !ok {
			return nil, fmt.Errorf("parameter %q is %q, neither RFC 3339 (2026-03-01T12:00:00Z) nor YYYY-MM-DD", "now", nowText)
		}
	}
	name, err := a.str("config")
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = s.opts.ConfigName
	} else if !pipeline.ValidName(name) {
		return nil, fmt.Errorf("parameter %q is %q: %s", "config", name, configNameRule)
	}
	cfg, err := pipeline.Find(s.opts.ConfigRoot, name)
	if err != nil {
		return nil, fmt.Errorf("configuration %q: %w", name, err)
	}
	if err := s.checkModels(cfg); err != nil {
		return nil, err
	}
	h, release, waited, err := s.acquireFirst(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	res, _, err := pipeline.Run(ctx, h.env, cfg, pipeline.Request{Text: query, Keywords: keywords, Answer: answer, Filter: f, Now: now, K: k, Explain: explain})
	if err != nil {
		if errors.Is(err, models.ErrNotInstalled) {
			return nil, fmt.Errorf("configuration %s cannot run: %w", cfg.Name, err)
		}
		return nil, err
	}
	cov, err := h.db.Coverage(ctx)
	if err != nil {
		return nil, err
	}
	out := SearchResult{Result: res, Now: now.Format(time.RFC3339), Degraded: s.degradedStages(), Vectors: cov, WaitedMS: waited.Milliseconds()}
	if !cov.Complete() {
		if holder, running, err := index.RunningBuild(s.opts.DBPath); err == nil && running && holder.PID != os.Getpid() {
			out.Building = &holder
		}
	}
	if !f.Empty() {
		out.Scope = &ScopeInfo{Filter: f}
		var outcomes []string
		for _, st := range res.Stages {
			if st.Outcome != 0 {
				outcomes = append(outcomes, st.Info)
			}
		}
		out.Scope.Outcome = strings.Join(outcomes, "; ")
		if out.Scope.Outcome == "" {
			out.Scope.Outcome = "no vector stage: filters applied inside the keyword search, no escalation needed"
		}
	}
	return out, nil
}

// checkModels refuses a configuration whose stages need a model that is not
// installed, naming stage and model, before anything runs: a configuration
// is never run without a stage it names.
func (s *Server) checkModels(cfg *pipeline.Config) error {
	missing, err := pipeline.MissingModels(cfg, s.opts.Registry, s.opts.Embedder)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("configuration %s cannot run: %w: %s; run `vault-rag models fetch`, or pass config with a configuration that does not use it", cfg.Name, models.ErrNotInstalled, strings.Join(missing, "; "))
	}
	return nil
}

// ReadResult is vault_read's answer.
type ReadResult struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	index.NoteMeta
	Headings []string `json:"headings"`
	Section  string   `json:"section,omitempty"`
	Content  string   `json:"content"`
}

func (s *Server) read(ctx context.Context, a args) (any, error) {
	raw, err := a.requiredStr("path")
	if err != nil {
		return nil, err
	}
	want, err := a.str("section")
	if err != nil {
		return nil, err
	}
	return s.readNote(ctx, raw, want)
}

// readNote is vault_read, and resources/read, for a path as the client gave
// it (checked here) and an optional section.
func (s *Server) readNote(_ context.Context, raw, want string) (ReadResult, error) {
	rel, err := vault.CleanNotePath(raw)
	if err != nil {
		return ReadResult{}, err
	}
	data, fi, err := vault.ReadNote(s.realVault, rel)
	if err != nil {
		return ReadResult{}, err
	}
	n := vault.ParseNote(rel, data, fi.ModTime().UTC())
	secs := vault.ChunkNote(n.Title, n.Body, nil, 0) // the "## " sections, unsplit
	out := ReadResult{Path: rel, Title: n.Title, Headings: []string{}, NoteMeta: index.NoteMetaOf(&n)}
	for _, sec := range secs {
		if sec.Heading != "" {
			out.Headings = append(out.Headings, sec.Heading)
		}
	}
	if strings.TrimSpace(want) == "" {
		out.Content = n.Body
		return out, nil
	}
	key := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(want), "##"))
	var parts []string
	for _, sec := range secs {
		if sec.Heading != "" && strings.EqualFold(sec.Heading, key) {
			out.Section = sec.Heading
			parts = append(parts, "## "+sec.Heading+"\n\n"+sec.Body)
		}
	}
	if len(parts) == 0 {
		if len(out.Headings) == 0 {
			return ReadResult{}, fmt.Errorf("note %s has no %q section: it has no \"## \" sections at all", rel, key)
		}
		return ReadResult{}, fmt.Errorf("note %s has no %q section; its sections are: %s", rel, key, quoteAll(out.Headings))
	}
	out.Content = strings.Join(parts, "\n\n")
	return out, nil
}

// ListResult is vault_list's answer.
type ListResult struct {
	Total      int        `json:"total"`
	Offset     int        `json:"offset"`
	Limit      int        `json:"limit"`
	NextOffset *int       `json:"next_offset,omitempty"`
	Notes      []ListNote `json:"notes"`
	// WaitedMS is how long the call waited for the vault's first index to
	// be built (Options.FirstIndexWait); absent when the index was there.
	WaitedMS int64 `json:"waited_for_first_index_ms,omitempty"`
}

// ListNote is one note of a listing.
type ListNote struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	index.NoteMeta
}

// listNote is a stored note as a listing shows it: without source, which a
// listing leaves to vault_read (docs/mcp.md).
func listNote(r index.NoteRow) ListNote {
	meta := r.NoteMeta
	meta.Source = ""
	return ListNote{Path: r.Path, Title: r.Title, NoteMeta: meta}
}

func (s *Server) list(ctx context.Context, a args) (any, error) {
	f, err := a.filter()
	if err != nil {
		return nil, err
	}
	offset, err := a.integer("offset", 0, 1<<30, 0)
	if err != nil {
		return nil, err
	}
	limit, err := a.integer("limit", 1, MaxListLimit, 50)
	if err != nil {
		return nil, err
	}
	h, release, waited, err := s.acquireFirst(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	rows, total, err := h.db.List(ctx, f, offset, limit)
	if err != nil {
		return nil, err
	}
	out := ListResult{Total: total, Offset: offset, Limit: limit, Notes: []ListNote{}, WaitedMS: waited.Milliseconds()}
	for _, r := range rows {
		out.Notes = append(out.Notes, listNote(r))
	}
	if next := offset + len(rows); next < total {
		out.NextOffset = &next
	}
	return out, nil
}

// ReindexResult is vault_reindex's answer: the build report of the run the
// call waited for.
type ReindexResult struct {
	Run int `json:"run"`
	index.Report
	TookMS int64 `json:"took_ms"`
}

func (s *Server) reindexTool(ctx context.Context, a args) (any, error) {
	r, err := s.reindexWithProgress(ctx)
	if err != nil {
		return nil, err
	}
	rep := r.rep
	if rep.Skipped == nil {
		rep.Skipped = []vault.Skipped{}
	}
	if rep.Warnings == nil {
		rep.Warnings = []vault.Skipped{}
	}
	return ReindexResult{Run: r.seq, Report: rep, TookMS: rep.Duration.Milliseconds()}, nil
}
