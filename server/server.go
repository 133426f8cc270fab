// Package server serves the vault to AI assistants over MCP: its tools
// (toolSpecs lists them) and the notes as resources, over streamable HTTP at
// /mcp with /health beside it, or over stdio for one client. The instructions and vault_search's description tell
// the caller which language the notes are written in (LanguageRule).
//
// One Server holds one index handle and one model registry for every client:
// the ONNX models are process-wide, so a daemon loads them once. The index is
// kept fresh by a polling watcher that runs debounced incremental builds; a full
// rebuild that swaps a new file in is picked up on the next request, and the old
// file is closed once the requests using it finish.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// Defaults of Options.
const (
	DefaultAddr           = "127.0.0.1:8848"
	DefaultConfig         = "shipping"
	DefaultPollInterval   = 2 * time.Second
	DefaultDebounce       = time.Second
	DefaultRequestTimeout = 60 * time.Second
	// DefaultFirstIndexWait bounds how long a call waits for a first build's
	// keyword index (Options.FirstIndexWait).
	DefaultFirstIndexWait = 30 * time.Second
	DefaultReindexTimeout = 10 * time.Minute
	DefaultMaxBodyBytes   = 1 << 20
)

// errShuttingDown is what a call gets once Close has begun.
var errShuttingDown = errors.New("the server is shutting down")

// Options configure a Server. VaultPath, DBPath and Registry are required; the
// zero value of every other field means its default.
type Options struct {
	VaultPath  string           // the vault folder (only ever read)
	DBPath     string           // the index file
	ConfigRoot string           // folder holding configs/ and experiments/ (default ".")
	ConfigName string           // the configuration vault_search runs (default "shipping")
	Registry   *models.Registry // the models, shared by every client
	Embedder   string           // the model the index is built with (default models.DefaultEmbedder)
	// EmbedderWhy says why that model, for the index to record (a first
	// build: the vault's script; optional).
	EmbedderWhy string

	// Scan is what the server's builds leave out besides what the vault's
	// own settings exclude (ScanOptions.Exclude).
	Scan vault.ScanOptions

	// Tools are the tools the server lists and answers, by name (ParseTools
	// reads `serve --tools`); nil: DefaultTools. The others are refused as
	// unknown tools.
	Tools []string

	Addr           string   // HTTP listen address (default 127.0.0.1:8848)
	Token          string   // bearer token; required when Addr is not loopback
	AllowedOrigins []string // Origin values allowed besides http(s)://localhost, 127.0.0.1, [::1]
	AllowedHosts   []string // Host names allowed besides the loopback names and the bound host

	Watch          bool          // poll the vault and reindex what changed
	PollInterval   time.Duration // how often the watcher looks (default 2s)
	Debounce       time.Duration // how long the vault must be quiet before a reindex (default 1s)
	RequestTimeout time.Duration // per tool call but vault_reindex (default 60s)
	ReindexTimeout time.Duration // how long vault_reindex waits for its build (default 10m)
	// FirstIndexWait is how long vault_search, vault_list, vault_overview
	// and vault_delta wait, on a vault with no index yet, for the first
	// build to put its keyword index in place (default 30s; negative: no
	// wait). Past it they answer that the index is still being built.
	FirstIndexWait time.Duration
	MaxBodyBytes   int64 // largest HTTP request body (default 1 MiB)

	// Clock is read for `now` when a search gives none, and for the index
	// age: the wall clock is read here, at the edge, never in the pipeline.
	Clock  func() time.Time
	Logger *slog.Logger // default: text to stderr (never stdout: stdio speaks there)

	// wrapBuild, when set (tests), wraps the reindexer's build before any
	// run can start.
	wrapBuild func(func(context.Context) (index.Report, error)) func(context.Context) (index.Report, error)
	// grepBudget, when set (tests), is how long a vault_grep call searches
	// instead of DefaultGrepBudget.
	grepBudget time.Duration
	// openIndex, when set (tests), opens the index instead of index.Open.
	openIndex func(ctx context.Context, path string) (*index.DB, error)
	// wrapEmbedder, when set (tests), wraps the embedder builds embed with.
	wrapEmbedder func(index.Embedder) index.Embedder
	// resourcePage, when set (tests), is the resources/list page size.
	resourcePage int
}

// setDefaults resolves each zero field of opts to its default.
func (opts *Options) setDefaults() {
	if opts.ConfigRoot == "" {
		opts.ConfigRoot = "."
	}
	if opts.Embedder == "" {
		opts.Embedder = models.DefaultEmbedder
	}
	if opts.ConfigName == "" {
		opts.ConfigName = DefaultConfig
	}
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.ReindexTimeout <= 0 {
		opts.ReindexTimeout = DefaultReindexTimeout
	}
	if opts.FirstIndexWait == 0 {
		opts.FirstIndexWait = DefaultFirstIndexWait
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
}

// checkConfig refuses a configuration the server could never load: a name
// that is not a bare configuration name, or one configs/ and experiments/ do
// not hold, and a tool set naming a tool the server does not have.
func (o Options) checkConfig() error {
	if o.Tools != nil && len(o.Tools) == 0 {
		return errors.New("server: tools: an empty tool set lists nothing (nil is the default set)")
	}
	for _, name := range o.Tools {
		// Names as ParseTools returns them: enabledSpecs compares them
		// with the tools' names as they are.
		if all := AllTools(); !slices.Contains(all, name) {
			return fmt.Errorf("server: tools: unknown tool %q: the tools are %s (ParseTools reads short names and sets)", name, strings.Join(all, ", "))
		}
	}
	if !pipeline.ValidName(o.ConfigName) {
		return fmt.Errorf("server: configuration name %q: %s", o.ConfigName, configNameRule)
	}
	if _, err := pipeline.Find(o.ConfigRoot, o.ConfigName); err != nil {
		return fmt.Errorf("server: load the configuration: %w", err)
	}
	return nil
}

// Server is the MCP server over one vault and its index. It is safe for
// concurrent use.
type Server struct {
	opts      Options
	log       *slog.Logger
	mcp       *mcpserver.MCPServer
	realVault string      // the vault root, absolute with symlinks resolved
	env       *stages.Env // the models and passage cache every index handle shares
	reindex   *reindexer
	// langs counts the vault's notes by language when the server started:
	// the language its instructions and tool descriptions name, fixed for
	// the process, since a client reads them once.
	langs     vault.Languages
	boundPort atomic.Int32 // set by Serve; 0 accepts any port in Host
	// pending is set when the server waits for its vault folder
	// (NewPending); the fields below are then unused.
	pending *pending

	mu      sync.Mutex
	cur     *handle
	opening chan struct{} // closed when the open in progress (outside mu) ends
	openErr error         // how the last open ended

	events   buildEvents // a build's progress, for the callers waiting for it
	sessions sync.Map    // the connected clients' session IDs, for log messages

	ctx    context.Context // the server's lifetime: background work stops with it
	cancel context.CancelFunc
	bg     sync.WaitGroup
	closed sync.Once
}

// handle is one open index file and the requests using it. A handle is
// replaced, never changed: requests that hold it finish on it.
type handle struct {
	db   *index.DB
	env  *stages.Env
	refs sync.WaitGroup
}

// New checks the options, opens the index if there is one, and starts the
// background work: a build when there is no index yet, and, with Watch, a
// catch-up incremental build and the watcher. A first build puts the keyword
// index in place within seconds and then embeds (index.Build): until the
// keyword index is there, requests get a clear "no index yet" error (and
// vault_reindex waits for the build); after, they are answered, with the
// vector coverage so far. An index built from another vault is refused. The
// vault's language comes from the index, or, without one, from a scan of the
// vault (which a first build reads in full anyway).
func New(opts Options) (*Server, error) {
	if opts.VaultPath == "" || opts.DBPath == "" {
		return nil, errors.New("server: VaultPath and DBPath are required")
	}
	if opts.Registry == nil {
		return nil, errors.New("server: Registry is required")
	}
	opts.setDefaults()
	if err := opts.checkConfig(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(opts.VaultPath)
	if err != nil {
		return nil, fmt.Errorf("server: vault path: %w", err)
	}
	if err := vault.FolderProblem(abs); err != nil {
		return nil, fmt.Errorf("server: %w; set VAULT_PATH or pass --vault", err)
	}
	realVault, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("server: vault: %w", err)
	}
	s := &Server{opts: opts, log: opts.Logger, realVault: realVault, env: pipeline.NewEnv(nil, opts.Registry)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.reindex = &reindexer{build: s.build, ctx: s.ctx, onStart: s.onBuildStart, onEnd: s.onBuildEnd}
	if opts.wrapBuild != nil {
		s.reindex.build = opts.wrapBuild(s.build)
	}
	db, err := index.Open(s.ctx, opts.DBPath)
	if err == nil {
		if err := db.CheckVault(realVault); err != nil {
			db.Close()
			s.cancel()
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	switch {
	case err == nil:
		s.cur = s.newHandle(db)
	case errors.Is(err, index.ErrNoIndex), errors.Is(err, index.ErrCorrupt):
		s.log.Warn("no usable index yet; building one in the background", "db", opts.DBPath, "reason", err)
	default:
		s.cancel()
		return nil, fmt.Errorf("server: open the index: %w", err)
	}
	// The language is known before the MCP server is made: its instructions
	// and tool descriptions name it from the first initialize.
	var opened *index.DB
	if s.cur != nil {
		opened = s.cur.db
	}
	s.langs = s.vaultLanguages(opened)
	s.mcp = mcpserver.NewMCPServer("vault-rag", Version(), append([]mcpserver.ServerOption{
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithStrictInputSchemaDefault(),
		mcpserver.WithRecovery(),
		mcpserver.WithInstructions(Instructions(s.langs, s.opts.Tools)),
	}, s.resourceOptions()...)...)
	s.mcp.AddTools(s.tools()...)
	s.addResources()
	if s.cur == nil || opts.Watch {
		s.background(func(ctx context.Context) {
			r, err := s.reindex.Run(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("startup reindex failed", "err", err)
				}
				return
			}
			s.log.Info("startup reindex done", "mode", r.rep.Mode, "notes", r.rep.Notes, "added", r.rep.Added, "changed", r.rep.Changed, "removed", r.rep.Removed, "took", r.rep.Duration.Round(time.Millisecond))
		})
	}
	if opts.Watch {
		// The first look is taken here, so any change after New returns is
		// one the watcher sees.
		first, err := snapshot(s.ctx, s.realVault, s.opts.Scan)
		if err != nil {
			s.log.Warn("watch: first look at the vault failed", "err", err)
		}
		s.background(func(ctx context.Context) { s.watch(ctx, first) })
	}
	return s, nil
}

// Version is the module version of the running binary, or "dev".
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func (s *Server) background(f func(context.Context)) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		f(s.ctx)
	}()
}

func (s *Server) newHandle(db *index.DB) *handle {
	return &handle{db: db, env: s.env.WithDB(db)}
}

// build is the reindexer's one job: an incremental build, which falls back to
// a full one when there is no usable index.
func (s *Server) build(ctx context.Context) (index.Report, error) {
	// Lazy: a build that finds nothing changed never loads the model.
	lazy, err := s.opts.Registry.Lazy(s.opts.Embedder)
	if err != nil {
		return index.Report{}, fmt.Errorf("reindex: %w", err)
	}
	var emb index.Embedder = lazy
	if s.opts.wrapEmbedder != nil {
		emb = s.opts.wrapEmbedder(emb)
	}
	// While the build waits for another process's build of the index,
	// the callers waiting for it are sent that build's coverage.
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		s.watchOtherBuild(ctx, stop)
	}()
	defer func() { close(stop); <-watched }()
	rep, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: s.realVault, DBPath: s.opts.DBPath, Incremental: true, Scan: s.opts.Scan, EmbedderWhy: s.opts.EmbedderWhy,
		Progress: s.buildProgress,
		// Another process building this index (a second server, a CLI
		// reindex): wait for it, serving what exists meanwhile, then
		// catch up on what it did not see.
		WaitForBuild: true})
	if err != nil {
		return rep, fmt.Errorf("reindex: %w", err)
	}
	return rep, nil
}

// acquire returns a view of the current index for one request: a handle on
// a snapshot of the file (index.DB.Snapshot), reopened first if a full
// build was copied in. The caller must call release, which ends the
// snapshot: writers of the file wait for it. The old handle's connection is
// closed once its last request releases it.
//
// Nothing slow happens under s.mu: the request that notices a swapped-in
// file opens and checks it with the lock released, while every other request
// goes on with the handle it has (or, with no index at all, waits for that one
// open), and then the new handle is swapped in under the lock.
func (s *Server) acquire(ctx context.Context) (h *handle, release func(), err error) {
	for {
		cur, done, err := s.acquireHandle(ctx)
		if err != nil {
			return nil, nil, err
		}
		// A full rebuild is copied into the open file (index.Build): a
		// request's statements read one snapshot of it, so they agree.
		view, end, err := cur.db.Snapshot(ctx)
		if err != nil {
			done()
			return nil, nil, fmt.Errorf("read the index: %w", err)
		}
		if view.Stale() {
			// A rebuild was copied in since the handle was checked: its
			// metadata and caches describe the old build. Reopen (or wait
			// for the request reopening it).
			end()
			done()
			s.mu.Lock()
			wait := s.opening
			s.mu.Unlock()
			if wait != nil {
				select {
				case <-wait:
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			continue
		}
		return &handle{db: view, env: cur.env.WithDB(view)}, func() { end(); done() }, nil
	}
}

// acquireHandle returns the current index handle, first opening a rebuilt
// one if the file now holds another build; the caller must call release.
// acquire is what requests use.
func (s *Server) acquireHandle(ctx context.Context) (h *handle, release func(), err error) {
	for {
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			return nil, nil, errShuttingDown
		}
		cur := s.cur
		s.mu.Unlock()

		stale := cur == nil || cur.db.Stale() // a read, outside the lock
		if !stale {
			// The file at the path must still be the one open (a stat): one
			// renamed over it is opened; one deleted under the server is an
			// error, since the handle would serve a file no build updates.
			switch err := cur.db.CheckFile(); {
			case errors.Is(err, index.ErrFileReplaced):
				stale = true
			case err != nil:
				return nil, nil, fileGone(err)
			}
		}
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			return nil, nil, errShuttingDown
		}
		if s.cur != cur {
			s.mu.Unlock()
			continue // swapped meanwhile: look again
		}
		if !stale || (cur != nil && s.opening != nil) {
			// Current, or another request is opening the new file: serve
			// the handle there is.
			cur.refs.Add(1)
			s.mu.Unlock()
			return cur, cur.refs.Done, nil
		}
		if s.opening != nil {
			// No index to serve: wait for the open in progress.
			wait := s.opening
			s.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			s.mu.Lock()
			none, openErr := s.cur == nil, s.openErr
			s.mu.Unlock()
			if none {
				return nil, nil, s.noIndex(openErr)
			}
			continue
		}
		done := make(chan struct{})
		s.opening = done
		s.mu.Unlock()

		db, err := s.openIndex(ctx)

		s.mu.Lock()
		s.opening, s.openErr = nil, err
		close(done)
		switch {
		case err == nil && s.ctx.Err() != nil:
			s.mu.Unlock()
			db.Close()
			return nil, nil, errShuttingDown
		case err != nil && s.cur == nil:
			s.mu.Unlock()
			return nil, nil, s.noIndex(err)
		case err != nil:
			s.log.Warn("a new index file appeared but cannot be opened; still serving the old one", "err", err)
			h := s.cur
			h.refs.Add(1)
			s.mu.Unlock()
			return h, h.refs.Done, nil
		}
		old := s.cur
		s.cur = s.newHandle(db)
		if db.CheckReason() != "" {
			s.log.Info("index checked before serving it", "db", s.opts.DBPath, "reason", db.CheckReason())
		}
		if old != nil {
			s.bg.Add(1)
			go func() {
				defer s.bg.Done()
				old.refs.Wait()
				old.db.Close()
			}()
		}
		h = s.cur
		h.refs.Add(1)
		s.mu.Unlock()
		return h, h.refs.Done, nil
	}
}

// firstIndexPoll is how often a call waiting for a first build looks for
// its index: the open it retries is a stat while there is no file.
const firstIndexPoll = 100 * time.Millisecond

// acquireFirst is acquire for the calls that read the index, which on a
// vault with no index yet wait up to FirstIndexWait for a running first
// build to put its keyword index in place (index.Build writes it before it
// embeds) instead of failing at once. waited is how long it waited, 0 when
// the index was there.
func (s *Server) acquireFirst(ctx context.Context) (h *handle, release func(), waited time.Duration, err error) {
	start, polled := time.Now(), false
	for {
		h, release, err = s.acquire(ctx)
		if err == nil || !errors.Is(err, index.ErrNoIndex) || s.opts.FirstIndexWait < 0 {
			break
		}
		if st := s.reindex.status(); !st.Running && !st.Queued || time.Since(start) >= s.opts.FirstIndexWait {
			break
		}
		polled = true
		s.waitProgress(ctx, start)
		select {
		case <-ctx.Done():
			return nil, nil, time.Since(start), err
		case <-s.ctx.Done():
			return nil, nil, time.Since(start), errShuttingDown
		case <-time.After(firstIndexPoll):
		}
	}
	if err == nil && polled {
		waited = time.Since(start)
	}
	return h, release, waited, err
}

// openIndex opens the index file (tests may hook it, to hold an open).
func (s *Server) openIndex(ctx context.Context) (*index.DB, error) {
	if s.opts.openIndex != nil {
		return s.opts.openIndex(ctx, s.opts.DBPath)
	}
	return index.Open(ctx, s.opts.DBPath)
}

// fileGone is the error of every request, and /health's index, while the
// index file the server has open has been deleted (or moved away).
func fileGone(err error) error {
	return fmt.Errorf("%w; call vault_reindex (or run `vault-rag reindex`) to build it again", err)
}

// noIndex explains why there is no index to serve and what happens next.
func (s *Server) noIndex(err error) error {
	st := s.reindex.status()
	switch {
	case st.Running:
		where := ""
		if _, last := s.events.current(); last != nil && last.Total > 0 {
			where = fmt.Sprintf(", %s %d of %d", last.Phase, last.Done, last.Total)
		}
		return fmt.Errorf("no index yet: it is being built in the background (run %d, %s so far%s); call vault_reindex to wait for it, or retry shortly (%w)", st.RunningSeq, st.RunningFor, where, err)
	case st.LastError != "":
		return fmt.Errorf("no index: the last build failed (%s); fix that and call vault_reindex (%w)", st.LastError, err)
	}
	return fmt.Errorf("no index yet (%w); call vault_reindex to build it", err)
}

// callLimit is the longest a tool call may take.
func (s *Server) callLimit() time.Duration { return longestCall(s.opts) }

// Close stops the background work, waits for a build in progress to stop,
// and closes the index once the requests using it finish.
func (s *Server) Close() error {
	if s.pending != nil {
		return s.closePending()
	}
	var err error
	s.closed.Do(func() {
		s.cancel()
		// After the lock, every acquire sees the cancelled context and none
		// adds to s.bg any more.
		s.mu.Lock()
		h := s.cur
		s.cur = nil
		s.mu.Unlock()
		s.reindex.close()
		s.bg.Wait()
		if h != nil {
			h.refs.Wait()
			err = h.db.Close()
		}
	})
	return err
}
