package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/server"
)

// Options configure one load run. DefaultOptions gives the defaults; an
// empty Root, Bin or DataDir is found from the checkout.
type Options struct {
	Root        string        // the checkout: vault/, configs/, eval/queries.json
	Bin         string        // the vault-rag binary (default Root/bin/vault-rag)
	DataDir     string        // VAULT_RAG_DATA: models, ONNX Runtime, the seed index (default Root/data)
	Calls       int           // tool calls in total, the one vault_reindex included
	Clients     int           // concurrent MCP clients, each with its own session
	Timeout     time.Duration // the whole run, start to shutdown
	CallTimeout time.Duration // one tool call (vault_reindex may take up to 5 min)
	Protocol    string        // MCP protocol version the clients ask for
	Seed        uint64        // seed of the call mix
	Note        string        // vault-relative note to append the marker line to
	IdleProbe   bool          // also measure a --watch=false server with no model loaded
	Keep        bool          // keep the temporary folder
	Log         io.Writer     // progress lines (default: discarded)
}

// DefaultOptions are the load the issue asks for: 2,000 calls from 16
// clients within 10 minutes.
func DefaultOptions() Options {
	return Options{
		Calls:       2000,
		Clients:     16,
		Timeout:     10 * time.Minute,
		CallTimeout: 60 * time.Second,
		Protocol:    mcp.LATEST_LEGACY_PROTOCOL_VERSION,
		Seed:        1,
		Note:        "knowledge/engineering/idempotency.md",
		IdleProbe:   true,
	}
}

// Limits of Options.
const (
	minCalls   = 20
	maxCalls   = 1_000_000
	maxClients = 256
	// stopLimit is how long the server may take to exit after SIGTERM.
	stopLimit = 10 * time.Second
	// reindexCallLimit bounds the mid-run vault_reindex, which may fall back
	// to a full build.
	reindexCallLimit = 5 * time.Minute
	// settle is how long an idle server is left alone before its memory is read.
	settle = time.Second
)

func (o *Options) resolve() error {
	if o.Root == "" {
		root, err := findRoot()
		if err != nil {
			return err
		}
		o.Root = root
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	o.Root = root
	if o.Bin == "" {
		o.Bin = filepath.Join(o.Root, "bin", "vault-rag")
	}
	if o.DataDir == "" {
		o.DataDir = filepath.Join(o.Root, "data")
	}
	if o.Bin, err = filepath.Abs(o.Bin); err != nil {
		return fmt.Errorf("binary: %w", err)
	}
	if o.DataDir, err = filepath.Abs(o.DataDir); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	if _, err := os.Stat(o.Bin); err != nil {
		return fmt.Errorf("the vault-rag binary: %w (run `make build`)", err)
	}
	switch {
	case o.Calls < minCalls || o.Calls > maxCalls:
		return fmt.Errorf("-calls %d: give %d..%d", o.Calls, minCalls, maxCalls)
	case o.Clients < 1 || o.Clients > maxClients:
		return fmt.Errorf("-clients %d: give 1..%d", o.Clients, maxClients)
	case o.Timeout <= 0 || o.CallTimeout <= 0:
		return errors.New("-timeout and -call-timeout must be positive")
	case !slices.Contains(mcp.ValidProtocolVersions, o.Protocol):
		return fmt.Errorf("-protocol %q: want one of %s", o.Protocol, strings.Join(mcp.ValidProtocolVersions, ", "))
	case o.Note == "" || filepath.IsAbs(o.Note) || slices.Contains(strings.Split(o.Note, "/"), ".."):
		return fmt.Errorf("-note %q: give a vault-relative note path", o.Note)
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// Run runs one bounded load test and reports on it. The error is for a run
// that could not be carried out (no binary, no model, a server that never got
// ready); failed calls and checks are in the report (Report.Failures). The
// report is returned whenever the run got as far as starting the server.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.resolve(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	tmp, err := os.MkdirTemp("", "vault-rag-load-")
	if err != nil {
		return nil, fmt.Errorf("temporary folder: %w", err)
	}
	r := &runner{o: o, tmp: tmp, rep: newReport(o)}
	defer func() {
		if o.Keep {
			r.logf("kept %s (vault copy, index, server logs)", tmp)
		} else {
			os.RemoveAll(tmp)
		}
	}()
	err = r.run(ctx)
	r.rep.Host.LoadAvgEnd = loadAvg()
	return r.rep, err
}

// runner carries one run's state.
type runner struct {
	o      Options
	tmp    string
	rep    *Report
	vault  string // the temporary copy
	server *proc
	marker string // the line appended mid-run
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.o.Log, "loadtest: "+format+"\n", args...)
}

func (r *runner) run(ctx context.Context) error {
	v, err := r.copyVault()
	if err != nil {
		return err
	}
	db := filepath.Join(r.tmp, "vault.db")
	if err := r.seed(db); err != nil {
		return err
	}
	env := r.serverEnv(db)

	// The server, ready once its startup build is done.
	r.logf("starting %s serve on a loopback port (vault copy %s)", r.o.Bin, r.vault)
	start := time.Now()
	r.server, err = startServer(r.o.Bin, nil, env, r.tmp, filepath.Join(r.tmp, "serve.log"))
	if err != nil {
		return err
	}
	defer r.server.kill()
	if err := r.ready(ctx, start); err != nil {
		return err
	}
	if err := r.idleMemory(ctx, env); err != nil {
		return err
	}

	// A control client: the catalog the plan draws from, and the checks.
	ctl, _, err := connect(ctx, r.server.base, r.o.Protocol, "vault-rag-loadtest-control", r.o.Log)
	if err != nil {
		return err
	}
	defer ctl.Close()
	cat, err := r.beforeLoad(ctx, ctl)
	if err != nil {
		return err
	}
	if err := r.load(ctx, cat, v.notePath); err != nil {
		return err
	}
	r.afterLoad(ctx, ctl)
	ctl.Close()
	return r.shutdown(v)
}

// vaultCopy is the run's copy of the vault (runner.vault) and what the end
// of the run compares it with.
type vaultCopy struct {
	src       string       // the checkout's vault, copied
	srcBefore vaultfs.Tree // its digest before the run
	before    vaultfs.Tree // the copy's digest before the run
	notePath  string       // the note the run appends to
	original  []byte       // that note before the run
}

// copyVault copies the checkout's vault, digested before anything runs
// against it, into the temporary folder.
func (r *runner) copyVault() (vaultCopy, error) {
	v := vaultCopy{src: filepath.Join(r.o.Root, "vault")}
	var err error
	if v.srcBefore, err = vaultfs.Digest(v.src); err != nil {
		return v, err
	}
	r.vault = filepath.Join(r.tmp, "vault")
	if err := vaultfs.CopyTree(v.src, r.vault); err != nil {
		return v, err
	}
	v.notePath = filepath.Join(r.vault, filepath.FromSlash(r.o.Note))
	if v.original, err = os.ReadFile(v.notePath); err != nil {
		return v, fmt.Errorf("the note to modify: %w", err)
	}
	v.before, err = vaultfs.Digest(r.vault)
	return v, err
}

// ready waits for the server started at start to be ready, and records its
// index and startup build.
func (r *runner) ready(ctx context.Context, start time.Time) error {
	h, err := r.server.waitReady(ctx, true)
	if err != nil {
		return err
	}
	r.rep.Index.ReadySeconds = time.Since(start).Seconds()
	r.rep.Index.Notes, r.rep.Index.Chunks = h.Notes, h.Chunks
	r.rep.Index.StartupBuild = lastBuild(h)
	if b := r.rep.Index.StartupBuild; r.rep.Index.Seeded && b != nil {
		r.rep.Index.SeedCurrent = b.Embedded == 0
	}
	r.rep.Degraded = h.DegradedStages
	r.logf("server ready in %.1fs: %d notes, %d chunks; startup build %+v", r.rep.Index.ReadySeconds, h.Notes, h.Chunks, r.rep.Index.StartupBuild)
	return nil
}

// beforeLoad reads the catalog, checks the marker is not yet found, and
// makes the first search, reading the memory after it.
func (r *runner) beforeLoad(ctx context.Context, ctl *client.Client) (catalog, error) {
	cat, err := r.catalog(ctx, ctl)
	if err != nil {
		return cat, err
	}
	r.marker = "vaultragload" + randomHex(8)
	found, err := markerTop(ctx, ctl, r.marker, "keyword")
	if err != nil {
		return cat, fmt.Errorf("marker search before the load: %w", err)
	}
	r.rep.Checks.MarkerAbsentBefore = found == ""
	if _, err := callTool(ctx, ctl, toolSearch, map[string]any{"query": cat.Queries[0]}); err != nil {
		return cat, fmt.Errorf("first search: %w", err)
	}
	if rss, _, err := r.server.memory(); err == nil {
		r.rep.Memory.AfterFirstSearchKB = rss
	}
	return cat, nil
}

// afterLoad checks the change is searchable, and records the memory and the
// server's own account of its builds.
func (r *runner) afterLoad(ctx context.Context, ctl *client.Client) {
	if top, err := markerTop(ctx, ctl, r.marker, "keyword"); err == nil {
		r.rep.Checks.MarkerTopAfter = top == r.o.Note
	} else {
		r.rep.Checks.Problems = append(r.rep.Checks.Problems, "marker search after the load: "+err.Error())
	}
	if in, err := markerIn(ctx, ctl, r.marker, r.o.Note); err == nil {
		r.rep.Checks.MarkerFoundByShipping = in
	} else {
		r.rep.Checks.Problems = append(r.rep.Checks.Problems, "shipping marker search: "+err.Error())
	}
	if rss, hwm, err := r.server.memory(); err == nil {
		r.rep.Memory.AfterLoadKB, r.rep.Memory.PeakHWMKB = rss, hwm
	}
	if h, err := r.server.health(ctx); err == nil {
		r.rep.ServerBuilds = h.Reindex.Builds
	}
}

// shutdown stops the server, then checks the vault copy changed only by the
// marker line and the checkout's vault not at all.
func (r *runner) shutdown(v vaultCopy) error {
	r.logf("sending SIGTERM")
	r.rep.Exit = r.server.stop(stopLimit)
	after, err := vaultfs.Digest(r.vault)
	if err != nil {
		return err
	}
	r.rep.Checks.VaultDiffs = vaultfs.Diff(v.before, after, r.o.Note)
	now, err := os.ReadFile(v.notePath)
	if err != nil {
		return fmt.Errorf("read the modified note: %w", err)
	}
	r.rep.Checks.NoteAsWritten = string(now) == string(v.original)+r.markerLine()
	srcAfter, err := vaultfs.Digest(v.src)
	if err != nil {
		return err
	}
	r.rep.Checks.SourceVaultDiffs = vaultfs.Diff(v.srcBefore, srcAfter, "")
	return nil
}

// seed copies the embedding cache of the checkout's demo index, when there
// is one, beside db: the server's first build, of the copied vault, then
// embeds nothing. (The index itself records the vault it was built from,
// and the server refuses it for another.) Without one the server embeds
// every chunk.
func (r *runner) seed(db string) error {
	own, err := index.DefaultPath(r.o.DataDir, filepath.Join(r.o.Root, "vault"))
	if err != nil {
		return err
	}
	seed := index.CachePath(own)
	fi, err := os.Stat(seed)
	if err != nil || !fi.Mode().IsRegular() {
		r.rep.Index.Seed = "none: the server embeds every chunk"
		return nil
	}
	if err := vaultfs.CopyFile(seed, index.CachePath(db), 0o644); err != nil {
		return fmt.Errorf("seed the embedding cache from %s: %w", seed, err)
	}
	r.rep.Index.Seed, r.rep.Index.Seeded = seed, true
	return nil
}

// serverEnv is the server's environment: this one without anything that
// would point it elsewhere or ask for a token, and with the temporary vault
// and index.
func (r *runner) serverEnv(db string) []string {
	drop := []string{"VAULT_PATH", "DB_PATH", "VAULT_RAG_DATA", "VAULT_RAG_ROOT", "VAULT_RAG_CONFIG", "VAULT_RAG_TOKEN",
		"VAULT_RAG_TRANSPORT", "VAULT_RAG_ADDR", "VAULT_RAG_ALLOWED_ORIGINS", "VAULT_RAG_ALLOWED_HOSTS"}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, k) {
			env = append(env, kv)
		}
	}
	return append(env, "VAULT_PATH="+r.vault, "DB_PATH="+db, "VAULT_RAG_DATA="+r.o.DataDir,
		"VAULT_RAG_ROOT="+r.o.Root, "VAULT_RAG_CONFIG=shipping")
}

// idleMemory reads the resident memory of the idle server and, with
// IdleProbe, of a second server started with --watch=false, which loads no
// model until a search needs one. (With --watch, the default, the startup
// catch-up build loads the embedder even when nothing changed.)
func (r *runner) idleMemory(ctx context.Context, env []string) error {
	if err := sleep(ctx, settle); err != nil {
		return err
	}
	rss, _, err := r.server.memory()
	if err != nil {
		r.rep.Memory.Problem = err.Error()
		return nil // not Linux: no memory figures, the rest still runs
	}
	r.rep.Memory.IdleKB = rss
	if h, err := r.server.health(ctx); err == nil {
		_, r.rep.Memory.IdleEmbedderLoaded, _ = embedder(h)
	}
	if !r.o.IdleProbe {
		return nil
	}
	probe, err := startServer(r.o.Bin, []string{"--watch=false"}, env, r.tmp, filepath.Join(r.tmp, "probe.log"))
	if err != nil {
		return fmt.Errorf("idle probe: %w", err)
	}
	defer probe.kill()
	if _, err := probe.waitReady(ctx, false); err != nil {
		return fmt.Errorf("idle probe: %w", err)
	}
	if err := sleep(ctx, settle); err != nil {
		return err
	}
	if rss, _, err := probe.memory(); err == nil {
		r.rep.Memory.IdleNoWatchKB = rss
	}
	if h, err := probe.health(ctx); err == nil {
		_, loaded, _ := embedder(h)
		r.rep.Memory.IdleNoWatchEmbedderLoaded = &loaded
	}
	e := probe.stop(stopLimit)
	r.rep.ProbeExit = &e
	return nil
}

// catalog lists every note and reads each one: the paths, metadata, headings
// and paragraphs the plan draws from. These calls are not part of the load.
func (r *runner) catalog(ctx context.Context, c *client.Client) (catalog, error) {
	var cat catalog
	queries, err := loadQueries(filepath.Join(r.o.Root, "eval", "queries.json"))
	if err != nil {
		return cat, err
	}
	cat.Queries = queries
	text, err := callTool(ctx, c, toolList, map[string]any{"limit": 200})
	if err != nil {
		return cat, fmt.Errorf("catalog: %w", err)
	}
	var list server.ListResult
	if err := decode(text, &list); err != nil {
		return cat, fmt.Errorf("catalog: %w", err)
	}
	if list.Total == 0 || list.Total != len(list.Notes) {
		return cat, fmt.Errorf("catalog: vault_list gave %d of %d notes", len(list.Notes), list.Total)
	}
	for _, ln := range list.Notes {
		text, err := callTool(ctx, c, toolRead, map[string]any{"path": ln.Path})
		if err != nil {
			return cat, fmt.Errorf("catalog: %w", err)
		}
		var rd server.ReadResult
		if err := decode(text, &rd); err != nil {
			return cat, fmt.Errorf("catalog: %w", err)
		}
		cat.Notes = append(cat.Notes, note{ListNote: ln, Headings: rd.Headings, Excerpts: excerpts(rd.Content, 4)})
	}
	if !slices.ContainsFunc(cat.Notes, func(n note) bool { return n.Path == r.o.Note }) {
		return cat, fmt.Errorf("the note to modify, %s, is not in the index", r.o.Note)
	}
	r.rep.SetupCalls = 1 + len(cat.Notes)
	return cat, nil
}

// markerLine is what the run appends to the note before the mid-run reindex.
func (r *runner) markerLine() string {
	return "\nLoad test marker: " + r.marker + " was appended by the load test.\n"
}

// callResult is one planned call's outcome, times since the load began.
type callResult struct {
	ran        bool
	tool       string
	start, end time.Duration
	err        string
}

// load runs the plan: Clients workers, each with its own MCP client and
// session, take the next call of the plan until none is left or the deadline
// passes. The call at Calls/2 is the reindex, after appending the marker
// line. Calls from 3/4 of the plan on wait for the reindex to finish, so some
// certainly run after it; those between run while it is in flight, as many
// as it takes.
func (r *runner) load(ctx context.Context, cat catalog, notePath string) error {
	reindexAt, barrier := r.o.Calls/2, r.o.Calls*3/4
	plan, err := buildPlan(cat, r.o.Calls, reindexAt, r.o.Seed)
	if err != nil {
		return err
	}
	clients := make([]*client.Client, r.o.Clients)
	sessions := map[string]bool{}
	for i := range clients {
		c, sid, err := connect(ctx, r.server.base, r.o.Protocol, fmt.Sprintf("vault-rag-loadtest-%02d", i), r.o.Log)
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		defer c.Close()
		clients[i] = c
		if sid != "" {
			sessions[sid] = true
		}
	}
	r.rep.Sessions = len(sessions)

	r.logf("load: %d calls from %d clients (reindex at call %d)", len(plan), len(clients), reindexAt)
	results := make([]callResult, len(plan))
	var reindex reindexOutcome
	reindexDone := make(chan struct{})
	stopSampling := r.sample()
	var next atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	for _, c := range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(plan) {
					return
				}
				if i >= barrier {
					select {
					case <-reindexDone:
					case <-ctx.Done():
					}
				}
				if ctx.Err() != nil {
					return
				}
				if plan[i].Reindex {
					results[i], reindex = r.midReindex(ctx, c, plan[i], notePath, t0)
					close(reindexDone)
					continue
				}
				results[i] = r.call(ctx, c, plan[i], t0)
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	stopSampling()
	r.rep.summarize(results, wall, reindexAt)
	r.rep.Reindex.Build, r.rep.Reindex.Note, r.rep.Reindex.Marker = reindex.build, r.o.Note, r.marker
	if ctx.Err() != nil {
		return fmt.Errorf("the load did not finish within %s: %w", r.o.Timeout, ctx.Err())
	}
	return nil
}

// reindexOutcome is what the mid-run reindex reported.
type reindexOutcome struct {
	build *BuildSummary
}

// midReindex appends the marker line to the note, then calls vault_reindex
// and checks that its build saw the change.
func (r *runner) midReindex(ctx context.Context, c *client.Client, st step, notePath string, t0 time.Time) (callResult, reindexOutcome) {
	res := callResult{ran: true, tool: st.Tool, start: time.Since(t0)}
	f, err := os.OpenFile(notePath, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.WriteString(r.markerLine())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		res.end, res.err = time.Since(t0), fmt.Sprintf("append the marker line: %v", err)
		return res, reindexOutcome{}
	}
	r.logf("appended the marker to %s; calling vault_reindex", r.o.Note)
	cctx, cancel := context.WithTimeout(ctx, max(r.o.CallTimeout, reindexCallLimit))
	defer cancel()
	res.start = time.Since(t0)
	text, err := callTool(cctx, c, st.Tool, st.Args)
	res.end = time.Since(t0)
	if err != nil {
		res.err = err.Error()
		return res, reindexOutcome{}
	}
	b, err := checkReindex(text)
	if err != nil {
		res.err = err.Error()
	}
	r.logf("vault_reindex: run %d %s, changed %d, embedded %d, took_ms %d (call %.0f ms)", b.Run, b.Mode, b.Changed, b.Embedded, b.TookMS, measure.Millis(res.end-res.start))
	return res, reindexOutcome{build: &b}
}

// call makes one planned call and judges its answer.
func (r *runner) call(ctx context.Context, c *client.Client, st step, t0 time.Time) callResult {
	cctx, cancel := context.WithTimeout(ctx, r.o.CallTimeout)
	defer cancel()
	res := callResult{ran: true, tool: st.Tool, start: time.Since(t0)}
	text, err := callTool(cctx, c, st.Tool, st.Args)
	res.end = time.Since(t0)
	if err == nil && st.check != nil {
		err = st.check(text)
	}
	if err != nil {
		res.err = fmt.Sprintf("%s %v: %v", st.Tool, st.Args, err)
	}
	return res
}

// sample reads the server's resident memory every 100 ms until the returned
// function is called.
func (r *runner) sample() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		var sum int64
		for {
			select {
			case <-done:
				if n := r.rep.Memory.LoadSamples; n > 0 {
					r.rep.Memory.LoadMeanKB = sum / int64(n)
				}
				return
			case <-t.C:
			}
			rss, _, err := r.server.memory()
			if err != nil {
				continue
			}
			sum += rss
			r.rep.Memory.LoadSamples++
			r.rep.Memory.LoadMaxKB = max(r.rep.Memory.LoadMaxKB, rss)
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// connect starts an MCP client over streamable HTTP with its own HTTP
// connection pool, as a separate process would have, and initializes it. It
// returns the session id ("" under a stateless protocol).
func connect(ctx context.Context, base, protocol, name string, log io.Writer) (*client.Client, string, error) {
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPBasicClient(hc), transport.WithHTTPLogger(logger))
	if err != nil {
		return nil, "", fmt.Errorf("MCP client: %w", err)
	}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Start(ictx); err != nil {
		c.Close()
		return nil, "", fmt.Errorf("start the MCP client: %w", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = protocol
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "0"}
	if _, err := c.Initialize(ictx, req); err != nil {
		c.Close()
		return nil, "", fmt.Errorf("initialize the MCP session: %w", err)
	}
	return c, c.GetSessionId(), nil
}

// callTool calls a tool and returns its answer as JSON (structuredContent).
// A protocol error, a tool error (isError), an answer that is not one text
// and one without structuredContent are all errors.
func callTool(ctx context.Context, c *client.Client, tool string, args map[string]any) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", fmt.Errorf("%s: protocol error: %w", tool, err)
	}
	var texts []string
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) != 1 {
		return "", fmt.Errorf("%s: want one text content, got %d", tool, len(texts))
	}
	if res.IsError {
		return "", fmt.Errorf("%s: tool error: %s", tool, texts[0])
	}
	if res.StructuredContent == nil {
		return "", fmt.Errorf("%s: no structuredContent", tool)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return "", fmt.Errorf("%s: structuredContent: %w", tool, err)
	}
	return string(raw), nil
}

// searchPaths runs a search and returns the paths it ranked, best first.
func searchPaths(ctx context.Context, c *client.Client, args map[string]any) ([]string, error) {
	text, err := callTool(ctx, c, toolSearch, args)
	if err != nil {
		return nil, err
	}
	var res server.SearchResult
	if err := decode(text, &res); err != nil {
		return nil, err
	}
	paths := make([]string, len(res.Notes))
	for i, n := range res.Notes {
		paths[i] = n.Path
	}
	return paths, nil
}

// markerTop searches for the marker with the given configuration and returns
// the top hit's path ("" when nothing matches).
func markerTop(ctx context.Context, c *client.Client, marker, config string) (string, error) {
	paths, err := searchPaths(ctx, c, map[string]any{"query": marker, "config": config, "k": 3})
	if err != nil || len(paths) == 0 {
		return "", err
	}
	return paths[0], nil
}

// markerIn reports whether the served configuration's search for the marker
// ranks the note among its first ten.
func markerIn(ctx context.Context, c *client.Client, marker, notePath string) (bool, error) {
	paths, err := searchPaths(ctx, c, map[string]any{"query": marker, "k": 10})
	return slices.Contains(paths, notePath), err
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b)
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("wait: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

// loadAvg is the first three fields of /proc/loadavg ("" elsewhere).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// host describes the machine the run is on.
func host() Host {
	return Host{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(), LoadAvgStart: loadAvg()}
}
