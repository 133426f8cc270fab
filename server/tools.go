package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
)

// listSortPath is vault_list's default order; listOrders are the orders
// its sort takes.
const listSortPath = "path"

var listOrders = map[string]index.Order{"": index.OrderPath, listSortPath: index.OrderPath, SortDate: index.OrderDate, SortDateDesc: index.OrderDateDesc}

// The orders vault_search's sort takes.
const (
	SortRelevance = "relevance"
	SortDate      = "date"
	SortDateDesc  = "date_desc"
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
	DefaultK             = pipeline.DefaultK
	MaxListLimit         = 200
	MaxOverviewLimit     = 200 // values per facet
	DefaultOverviewLimit = 20
	MaxOverviewTitles    = 50 // titles per folder
)

// configNameRule is why a configuration name from a client was refused: it
// may be a bare name only (pipeline.ValidName), never a path, since
// pipeline.Find would read any YAML file it is given.
const configNameRule = "a configuration is named by a bare name from configs/ or experiments/ (" + pipeline.NameRule + "), not a path"

// filterOptions are the filter parameters of vault_search and vault_list:
// the scope filters and the metadata filters.
func filterOptions() []mcp.ToolOption { return append(scopeFilters(), metadataFilters()...) }

// scopeFilters are the filters a model can set without knowing the vault:
// a path prefix and a span of dates.
func scopeFilters() []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithString("path", mcp.MaxLength(MaxFilterBytes), mcp.Description(`Path prefix, e.g. "projects/".`)),
		mcp.WithString("date_from", mcp.Pattern(`^\d{4}-\d{2}-\d{2}$`), mcp.Description("Dated on or after.")),
		mcp.WithString("date_to", mcp.Pattern(`^\d{4}-\d{2}-\d{2}$`), mcp.Description("Dated on or before.")),
	}
}

// metadataFilters are the filters whose values only vault_overview lists.
// Their descriptions name no values: each vault has its own.
func metadataFilters() []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithString("type", mcp.MaxLength(MaxFilterBytes), mcp.Description("Frontmatter type.")),
		mcp.WithString("project", mcp.MaxLength(MaxFilterBytes), mcp.Description("Frontmatter project.")),
		mcp.WithString("status", mcp.MaxLength(MaxFilterBytes), mcp.Description("Frontmatter status.")),
		mcp.WithArray("topics", mcp.WithStringItems(mcp.MaxLength(MaxFilterBytes)), mcp.Description("All of these topics or tags.")),
	}
}

// readOnly annotates a tool that changes nothing and reaches nothing but the
// vault. destructiveHint and idempotentHint are left out: the specification
// gives them meaning only for a tool that is not read-only, and every byte of
// the listing is paid by every conversation.
func readOnly(title string) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{Title: title, ReadOnlyHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)})
}

// KeywordsDescription and AnswerDescription tell the calling model what to
// write in vault_search's optional expansions, and in which language: the
// notes' (LanguageRule). What a client's keywords and answer, written without
// seeing the notes, are worth on real vaults is in the +client rows of
// docs/results.md (`make eval`).
func KeywordsDescription(ls vault.Languages) string {
	target, _, example := languageTarget(ls)
	return "3-12 terms a note answering it would contain (names, identifiers, keys, error codes, commands, synonyms), " +
		"in " + target + ", whatever the language of the question. No operators or quotes. " + exampleNote(example) +
		`E.g. "my laptop wakes at night": "wake sleep suspend hibernate wakeup ACPI power".`
}

// AnswerDescription: see KeywordsDescription.
func AnswerDescription(ls vault.Languages) string {
	_, target, _ := languageTarget(ls)
	return "1-3 sentences in " + target + ", whatever the language of the question, as the note that answers it would put them; guesses are fine (only used to find the note)."
}

// exampleNote keeps the English examples from overriding the language rule
// for a vault of another language (target, from languageTarget; "" for an
// English one).
func exampleNote(target string) string {
	if target == "" {
		return ""
	}
	return "Write yours in " + target + ", not in the example's English. "
}

// toolSpec is one tool: everything the server needs of it, in one entry of
// toolSpecs. Adding a tool is adding its entry (CONTRIBUTING.md, "A tool").
type toolSpec struct {
	// def is the definition tools/list shows: name, description, input
	// schema, annotations.
	def mcp.Tool
	// params are the parameters the handler decodes: the full definition's,
	// of which a listing may show a part (enabledSpecs); the parameters it
	// leaves out are refused by checkArgs and decode to their zero values.
	params mcp.ToolInputSchema
	// handle answers a call whose arguments wrap has checked against def.
	handle func(*Server, context.Context, args) (any, error)
	// answer is the type handle returns, rendered as JSON: the wire format
	// docs/mcp.md describes and testdata/wire/NAME.json holds.
	answer reflect.Type
	// limit is how long a call may take under the server's options.
	limit func(Options) time.Duration
	// needs are the roles of the index's models (models.RoleEmbedder) the
	// tool cannot run without: /health's degraded_stages names it when one
	// is not installed.
	needs []string
}

// tool makes a tool's entry from its handler, whose result type is the
// answer's wire type.
func tool[R any](def mcp.Tool, h func(*Server, context.Context, args) (R, error), limit func(Options) time.Duration, needs ...string) toolSpec {
	def.RawOutputSchema = outputSchema(reflect.TypeFor[R]())
	return toolSpec{def: def, params: def.InputSchema, answer: reflect.TypeFor[R](), limit: limit, needs: needs,
		handle: func(s *Server, ctx context.Context, a args) (any, error) { return h(s, ctx, a) }}
}

// requestLimit is a call's time limit; reindexLimit vault_reindex's, whose
// first, full build may take minutes.
func requestLimit(o Options) time.Duration { return o.RequestTimeout }
func reindexLimit(o Options) time.Duration { return o.ReindexTimeout }

// toolSpecs are the server's tools, in the order tools/list shows them, for
// a vault whose notes are in the languages ls counts: vault_search's
// description and expansions say which language to write them in.
func toolSpecs(ls vault.Languages) []toolSpec {
	return []toolSpec{
		tool(searchDef(ls, true), (*Server).search, requestLimit),
		tool(grepDef(), (*Server).grep, requestLimit),
		tool(readDef(), (*Server).read, requestLimit),
		tool(listDef(), (*Server).list, requestLimit),
		tool(overviewDef(), (*Server).overview, requestLimit),
		tool(reindexDef(), (*Server).reindexTool, reindexLimit, models.RoleEmbedder),
		tool(deltaDef(), (*Server).delta, requestLimit, models.RoleEmbedder),
	}
}

// Tools returns the definitions of the tools names lists (nil: the default
// set), as tools/list shows them, for a vault whose notes are in the
// languages ls counts.
func Tools(ls vault.Languages, names []string) []mcp.Tool {
	var out []mcp.Tool
	for _, t := range enabledSpecs(ls, names) {
		out = append(out, t.def)
	}
	return out
}

// toolsNeeding names, in name order, the tools that cannot run without the
// index's model of the given role.
func toolsNeeding(role string) []string {
	var out []string
	for _, t := range toolSpecs(nil) {
		if slices.Contains(t.needs, role) {
			out = append(out, t.def.Name)
		}
	}
	slices.Sort(out)
	return out
}

// longestCall is the longest any tool call may take.
func longestCall(o Options) time.Duration {
	var longest time.Duration
	for _, t := range toolSpecs(nil) {
		longest = max(longest, t.limit(o))
	}
	return longest
}

// searchDef is vault_search's definition. full adds the metadata filters
// (type, project, status, topics), whose values a model learns from
// vault_overview, and the lab's parameters (explain, config, now): the
// server lists them with vault_overview (enabledSpecs), and leaves them out
// of the default set's listing, which every conversation pays for.
func searchDef(ls vault.Languages, full bool) mcp.Tool {
	search := []mcp.ToolOption{
		mcp.WithDescription("Search the notes by meaning and keywords. Send keywords and hypothetical_answer too: you know how such notes are worded. " +
			LanguageRule(ls) + " " +
			"Returns ranked notes: path, title, date and the passages that best match under their heading path (a section for vault_read); the first often hold the answer."),
		mcp.WithString("query", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(pipeline.MaxQueryBytes), mcp.Description("The question, or exact tokens.")),
		mcp.WithString("keywords", mcp.MaxLength(pipeline.MaxQueryBytes), mcp.Description(KeywordsDescription(ls))),
		mcp.WithString("hypothetical_answer", mcp.MaxLength(pipeline.MaxQueryBytes), mcp.Description(AnswerDescription(ls))),
		mcp.WithInteger("k", mcp.Min(1), mcp.Max(MaxK), mcp.Description(fmt.Sprintf("Notes (default %d).", DefaultK))),
		mcp.WithString("detail", mcp.Enum(string(pipeline.DetailBrief), string(pipeline.DetailPassage), string(pipeline.DetailSection)),
			mcp.Description(`"passage" (default): what usually holds the answer; "brief": a line a note, to scan a list; "section": whole sections.`)),
		mcp.WithString("sort", mcp.Enum(SortRelevance, SortDate, SortDateDesc), mcp.Description("By the date a note states; default relevance.")),
	}
	search = append(search, scopeFilters()...)
	if full {
		search = append(search, metadataFilters()...)
	}
	search = append(search, mcp.WithBoolean("related", mcp.Description("Also the first note's links and backlinks.")))
	if full {
		search = append(search,
			mcp.WithString("now", mcp.Description("Clock for recency, YYYY-MM-DD.")),
			mcp.WithBoolean("explain", mcp.Description("Every stage's ranks and scores.")),
			mcp.WithString("config", mcp.Pattern(pipeline.NamePattern), mcp.Description("A configuration to run instead.")))
	}
	search = append(search, mcp.WithSchemaAdditionalProperties(false), readOnly("Search the vault"))
	return mcp.NewTool(ToolSearch, search...)
}

func listDef() mcp.Tool {
	list := append([]mcp.ToolOption{
		mcp.WithDescription("List notes by metadata, a page at a time: path, title, date. Returns total and next_offset when there is more."),
		mcp.WithString("sort", mcp.Enum(listSortPath, SortDate, SortDateDesc), mcp.Description("Default path.")),
		mcp.WithInteger("offset", mcp.Min(0), mcp.Description("Notes to skip.")),
		mcp.WithInteger("limit", mcp.Min(1), mcp.Max(MaxListLimit), mcp.Description("Default 50.")),
	}, filterOptions()...)
	list = append(list, mcp.WithSchemaAdditionalProperties(false), readOnly("List notes"))
	return mcp.NewTool(ToolList, list...)
}

func reindexDef() mcp.Tool {
	return mcp.NewTool(ToolReindex,
		mcp.WithDescription("Bring the index up to date now (the server also does when notes change); only changed notes are embedded again. "+
			"Reports what changed; with a progressToken, sends progress."),
		mcp.WithSchemaAdditionalProperties(false),
		mcp.WithToolAnnotation(mcp.ToolAnnotation{Title: "Reindex the vault", ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(false), IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}),
	)
}

// tools pairs each definition with its handler, wrapped.
func (s *Server) tools() []mcpserver.ServerTool {
	var out []mcpserver.ServerTool
	for _, t := range enabledSpecs(s.langs, s.opts.Tools) {
		out = append(out, mcpserver.ServerTool{Tool: t.def, Handler: s.wrap(t)})
	}
	return out
}

// wrap checks a call's arguments against the tool's declared parameters,
// bounds its time, and sends the result typed (structuredContent) and as the
// text written for the model (render.go), or the error as a tool error the
// model can read (never a protocol error).
func (s *Server) wrap(spec toolSpec) mcpserver.ToolHandlerFunc {
	t := spec.def
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := checkArgs(t, req.GetRawArguments())
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		a.schema = spec.params
		limit := spec.limit(s.opts)
		ctx, cancel := context.WithTimeout(withProgressToken(ctx, req.Params.Meta), limit)
		defer cancel()
		out, err := spec.handle(s, ctx, a)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				err = fmt.Errorf("gave up after %s: %w", limit, err)
			}
			s.log.Info("tool call refused or failed", "tool", t.Name, "err", err)
			return mcp.NewToolResultError(t.Name + ": " + err.Error()), nil
		}
		text, err := answerText(out)
		if err != nil {
			return nil, fmt.Errorf("%s: encode the result: %w", t.Name, err)
		}
		return mcp.NewToolResultStructured(out, text), nil
	}
}

// SearchResult is vault_search's answer: the pipeline's result (the
// configuration run, the query, the notes, what each stage did and the time
// taken), the clock it used, the scope escalation's outcome when filters were
// set, and what this server cannot do of what it serves (/health's
// degraded_stages), so a degraded server is never silent.
type SearchResult struct {
	Config string       `json:"config"`
	Notes  []SearchNote `json:"notes"`
	// Stages, Took and Now are what each stage did, the time taken and the
	// clock recency used: with explain only.
	Stages   []StageInfo `json:"stages,omitempty"`
	Took     string      `json:"took,omitempty"`
	Now      string      `json:"now,omitempty"`
	Scope    *ScopeInfo  `json:"scope,omitempty"`
	Degraded []string    `json:"degraded,omitempty"`
	// Vectors says how far the index's vectors are while a first build
	// embeds (the vector branch ranks only the chunks embedded so far);
	// absent once every chunk has its vector.
	Vectors *Coverage `json:"vectors,omitempty"`
	// WaitedMS is how long the call waited for the vault's first index to
	// be built (Options.FirstIndexWait); absent when the index was there.
	WaitedMS int64 `json:"waited_for_first_index_ms,omitempty"`
	// Building is the build of this index another process is running
	// (a second server, a CLI reindex), said while the vectors are
	// incomplete: this answer is from what exists, and the finished index is
	// picked up by itself.
	Building *BuildHolder `json:"other_process_building,omitempty"`
}

// ScopeInfo says how a filtered search ended.
type ScopeInfo struct {
	Filter  Filter `json:"filter"`
	Outcome string `json:"outcome"` // the vector stage's "filled: ...", "drained: ..." or "ladder-end: ..."
}

// searchArgs are vault_search's parameters (searchDef), decoded in this
// order: the first that is wrong is the one a client hears of.
type searchArgs struct {
	Query    string `arg:"query"`
	Keywords string `arg:"keywords"`
	Answer   string `arg:"hypothetical_answer"`
	K        int    `arg:"k"`
	Filter   index.Filter
	Explain  bool      `arg:"explain"`
	Related  bool      `arg:"related"`
	Detail   detailArg `arg:"detail"`
	Sort     string    `arg:"sort"`
	Now      clockArg  `arg:"now"`
	Config   configArg `arg:"config"`
}

// detailArg is how much of each note a search shows (pipeline.ParseDetail;
// absent, pipeline.DetailPassage).
type detailArg pipeline.Detail

func (d *detailArg) setArg(_, s string) error {
	detail, err := pipeline.ParseDetail(s)
	*d = detailArg(detail)
	return err
}

// clockArg is a moment a client gives, RFC 3339 or YYYY-MM-DD (pipeline.ParseNow);
// given says one was.
type clockArg struct {
	time.Time
	given bool
}

func (c *clockArg) setArg(name, s string) error {
	if s == "" {
		return nil
	}
	t, ok := pipeline.ParseNow(s)
	if !ok {
		return fmt.Errorf("parameter %q is %s, neither RFC 3339 (2026-03-01T12:00:00Z) nor YYYY-MM-DD", name, vault.QuoteInput(s))
	}
	c.Time, c.given = t, true
	return nil
}

// configArg is a configuration a client names: a bare name
// (pipeline.ValidName), "" for the server's own.
type configArg string

func (c *configArg) setArg(name, s string) error {
	if s != "" && !pipeline.ValidName(s) {
		return fmt.Errorf("parameter %q is %s: %s", name, vault.QuoteInput(s), configNameRule)
	}
	*c = configArg(s)
	return nil
}

func (s *Server) search(ctx context.Context, a args) (SearchResult, error) {
	p := searchArgs{K: DefaultK}
	if err := a.decode(&p); err != nil {
		return SearchResult{}, err
	}
	now := s.opts.Clock().UTC()
	if p.Now.given {
		now = p.Now.Time
	}
	cfg, err := s.searchConfig(string(p.Config))
	if err != nil {
		return SearchResult{}, err
	}
	h, release, waited, err := s.acquireFirst(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	defer release()
	res, _, err := pipeline.Run(ctx, h.env, cfg, pipeline.Request{Text: p.Query, Keywords: p.Keywords, Answer: p.Answer, Filter: p.Filter, Now: now, K: p.K,
		Explain: p.Explain, Detail: pipeline.Detail(p.Detail), Related: p.Related})
	if err != nil {
		if errors.Is(err, models.ErrNotInstalled) {
			return SearchResult{}, fmt.Errorf("configuration %s cannot run: %w", cfg.Name, err)
		}
		return SearchResult{}, err
	}
	cov, err := h.db.Coverage(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	out := SearchAnswer(res, p.Explain)
	resolvePassageLinks(ctx, h.db, out.Notes)
	out.Degraded, out.WaitedMS = s.degradedStages(), waited.Milliseconds()
	if p.Explain {
		out.Now = now.Format(time.RFC3339)
	}
	sortNotes(out.Notes, p.Sort)
	if !cov.Complete() {
		c := coverageOf(cov)
		out.Vectors = &c
		if holder, running, err := index.RunningBuild(s.opts.DBPath); err == nil && running && holder.PID != os.Getpid() {
			out.Building = buildHolderOf(holder)
		}
	}
	if !p.Filter.Empty() {
		out.Scope = scopeOf(p.Filter, res.Stages)
	}
	return out, nil
}

// searchConfig loads the configuration a search names, the server's own
// for "", refusing one that needs a model that is not installed.
func (s *Server) searchConfig(name string) (*pipeline.Config, error) {
	if name == "" {
		name = s.opts.ConfigName
	}
	cfg, err := pipeline.Find(s.opts.ConfigRoot, name)
	if err != nil {
		// Where the configurations live is the server's business: the
		// client is told the name is unknown, or that the file is broken,
		// and the server's log has the whole error.
		if errors.Is(err, pipeline.ErrNoConfig) {
			return nil, fmt.Errorf("no configuration named %s in configs/ or experiments/", vault.QuoteInput(name))
		}
		s.log.Warn("configuration cannot be loaded", "config", name, "err", err)
		return nil, fmt.Errorf("configuration %s cannot be loaded; the server's log says why", vault.QuoteInput(name))
	}
	if err := s.checkModels(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// scopeOf is how a filtered search ended: the outcomes of its vector
// stages' scope searches.
func scopeOf(f index.Filter, stages []pipeline.StageInfo) *ScopeInfo {
	scope := &ScopeInfo{Filter: filterOf(f)}
	var outcomes []string
	for _, st := range stages {
		if st.Outcome != 0 {
			outcomes = append(outcomes, st.Info)
		}
	}
	scope.Outcome = strings.Join(outcomes, "; ")
	if scope.Outcome == "" {
		scope.Outcome = "no vector stage: filters applied inside the keyword search, no escalation needed"
	}
	return scope
}

// SearchAnswer is a pipeline result as vault_search answers it, and as
// `vault-rag search --json` prints it: what each stage did and the time taken
// only with explain.
func SearchAnswer(res *pipeline.Result, explain bool) SearchResult {
	out := SearchResult{Config: res.Config, Notes: searchNotes(res.Notes)}
	if out.Notes == nil {
		out.Notes = []SearchNote{}
	}
	if explain {
		out.Stages, out.Took = stageInfos(res.Stages), res.Took
	}
	return out
}

// sortNotes orders found notes by the date they state, oldest first
// (SortDate) or newest first (SortDateDesc); notes stating none come last,
// in rank order. SortRelevance and "" leave the order alone.
func sortNotes(notes []SearchNote, order string) {
	if order != SortDate && order != SortDateDesc {
		return
	}
	slices.SortStableFunc(notes, func(a, b SearchNote) int {
		return compareDates(a.Date != "", a.Date, b.Date != "", b.Date, order == SortDateDesc)
	})
}

// compareDates orders two notes by date for a date sort: a note whose date
// is written (frontmatter, file name) before one dated by its file's time
// only, then by date, oldest first unless desc. vault_search, vault_grep
// and (in SQL, index.ListSorted) vault_list sort alike.
func compareDates(aWritten bool, aDate string, bWritten bool, bDate string, desc bool) int {
	if aWritten != bWritten {
		if aWritten {
			return -1
		}
		return 1
	}
	if desc {
		return strings.Compare(bDate, aDate)
	}
	return strings.Compare(aDate, bDate)
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
	NoteMeta
}

// listNote is a stored note as a listing shows it: without source, which a
// listing leaves to vault_read (docs/mcp.md).
func listNote(r index.NoteRow) ListNote {
	meta := rowMeta(r)
	meta.Source = ""
	return ListNote{Path: r.Path, Title: r.Title, NoteMeta: meta}
}

func (s *Server) list(ctx context.Context, a args) (ListResult, error) {
	f, err := a.filter()
	if err != nil {
		return ListResult{}, err
	}
	offset, err := a.integer("offset", 0, 1<<30, 0)
	if err != nil {
		return ListResult{}, err
	}
	limit, err := a.integer("limit", 1, MaxListLimit, 50)
	if err != nil {
		return ListResult{}, err
	}
	sortText, err := a.str("sort")
	if err != nil {
		return ListResult{}, err
	}
	order, ok := listOrders[sortText]
	if !ok {
		return ListResult{}, fmt.Errorf("parameter %q is %s: it takes %q, %q or %q", "sort", vault.QuoteInput(sortText), listSortPath, SortDate, SortDateDesc)
	}
	h, release, waited, err := s.acquireFirst(ctx)
	if err != nil {
		return ListResult{}, err
	}
	defer release()
	rows, total, err := h.db.ListSorted(ctx, f, order, offset, limit)
	if err != nil {
		return ListResult{}, err
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
	BuildCounts
	Skipped  []FileProblem `json:"skipped"`
	Warnings []FileProblem `json:"warnings"` // notes indexed despite a problem
	// DurationNS is how long the build took, in nanoseconds, and TookMS
	// the same in milliseconds.
	DurationNS    int64          `json:"duration_ns"`
	SkippedByKind map[string]int `json:"skipped_by_kind"` // what the build passed over, by kind
	TookMS        int64          `json:"took_ms"`
}

func (s *Server) reindexTool(ctx context.Context, a args) (ReindexResult, error) {
	r, err := s.reindexWithProgress(ctx)
	if err != nil {
		return ReindexResult{}, err
	}
	rep := r.rep
	return ReindexResult{Run: r.seq, BuildCounts: buildCounts(rep.Counts), Skipped: fileProblems(rep.Skipped), Warnings: fileProblems(rep.Warnings),
		DurationNS: int64(rep.Duration), SkippedByKind: rep.SkippedByKind, TookMS: rep.Duration.Milliseconds()}, nil
}
