package server

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/mcptest"
	"github.com/vault-rag/vault-rag/internal/modeltest"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/models/bow"
)

// fixture is the test vault, its index and configurations, built once.
var fx struct {
	skip     string // why tests needing the embedder skip ("" when it is installed)
	reg      *models.Registry
	dir      string
	vault    string
	db       string
	configs  string // a ConfigRoot with configs/ of the tests' own
	outside  string // a file outside the vault that symlinks point at
	notes    int    // notes in the index
	repoRoot string
}

// secret is the content of the file outside the vault: no answer may hold it.
const secret = "TOP SECRET: this file lives outside the vault"

// fixtureNotes are copied from the demo vault.
var fixtureNotes = []string{
	"knowledge/engineering/idempotency.md",
	"knowledge/engineering/retries-and-jitter.md",
	"knowledge/operations/backpressure.md",
	"knowledge/operations/runbook-disk-pressure.md",
	"sessions/orchard/2024-08-27-lease-renewal-bug-postmortem.md",
	"sessions/orchard/2025-11-18-lease-expiry-storm.md",
	"sessions/ferrite/2025-03-19-wal-fsync-latency-rollout.md",
	"personal/baking/sourdough-starter.md",
	"reference/error-codes.md",
	"templates/session-template.md",
	"lint-report-2026-03-01.md",
}

const sectionsNote = `---
type: reference
date: 2025-05-01
topics: [testing]
---

# Sections

Text before the first section.

## Alpha

The alpha section talks about aardvarks.

` + "```" + `
## not a heading, inside a fence
` + "```" + `

## Beta

The beta section talks about badgers.
`

func TestMain(m *testing.M) {
	code, err := runTests(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "server tests:", err)
		code = 1
	}
	os.Exit(code)
}

func runTests(m *testing.M) (int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return 1, err
	}
	fx.repoRoot = filepath.Dir(wd)
	settings := models.SettingsFrom(os.Getenv)
	reg, err := models.NewRegistry(settings.DataDir, settings.Runtime)
	if err != nil {
		return 1, err
	}
	defer reg.Close()
	fx.reg = reg
	spec, err := reg.Manifest().Lookup(models.DefaultEmbedder)
	if err != nil {
		return 1, err
	}
	var emb index.Embedder
	if st := models.Check(reg.DataDir(), spec); !st.Installed {
		// Tests that need the embedder skip (or fail, in CI); the guards, the
		// token, the bind refusal and the vault_read refusals need no model
		// and run over an index of bag-of-words vectors.
		fx.skip = fmt.Sprintf("the embedder %s is not installed under %s (%s): run `make setup`", spec.Name, reg.DataDir(), st.Problem)
		emb = bow.Embedder{ModelName: "test-bow"}
	} else if emb, err = reg.Embedder(context.Background(), ""); err != nil {
		return 1, err
	}
	fx.dir, err = os.MkdirTemp("", "vault-rag-server-test-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(fx.dir)
	if err := buildFixture(emb); err != nil {
		return 1, err
	}
	before, err := vaultfs.Digest(fx.vault)
	if err != nil {
		return 1, err
	}
	code := m.Run()
	after, err := vaultfs.Digest(fx.vault)
	if err != nil {
		return 1, err
	}
	if diff := vaultfs.Diff(before, after, ""); diff != nil {
		return 1, fmt.Errorf("the test vault changed during the tests (%q): a tool wrote to the vault", diff)
	}
	return code, nil
}

func buildFixture(emb index.Embedder) error {
	fx.vault = filepath.Join(fx.dir, "vault")
	fx.db = filepath.Join(fx.dir, "db", "vault.db")
	fx.configs = filepath.Join(fx.dir, "root")
	fx.outside = filepath.Join(fx.dir, "outside", "secret.md")
	for _, rel := range fixtureNotes {
		raw, err := os.ReadFile(filepath.Join(fx.repoRoot, "vault", filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("copy the demo vault: %w", err)
		}
		if err := writeFile(filepath.Join(fx.vault, filepath.FromSlash(rel)), raw); err != nil {
			return err
		}
	}
	files := map[string]string{
		"reference/sections.md":    sectionsNote,
		"reference/100% done.md":   "# Percent\n\nA note whose name holds a percent sign.\n",
		".obsidian/workspace.md":   "# Hidden\n\nnot a note\n",
		"reference/blob.md":        "# Blob\n\x00\x01\x02 binary\n",
		"../outside/secret.md":     secret + "\n",
		"../outside/dir/secret.md": secret + "\n",
	}
	for rel, text := range files {
		if err := writeFile(filepath.Join(fx.vault, filepath.FromSlash(rel)), []byte(text)); err != nil {
			return err
		}
	}
	links := map[string]string{
		"knowledge/escape.md":        fx.outside,                                        // a note-looking link leading outside
		"linked":                     filepath.Join(fx.dir, "outside", "dir"),           // a folder link leading outside
		"reference/sections-link.md": "sections.md",                                     // a link that stays inside
		"knowledge/relative-out.md":  filepath.Join("..", "..", "outside", "secret.md"), // relative, leading outside
	}
	for rel, target := range links {
		if err := os.Symlink(target, filepath.Join(fx.vault, filepath.FromSlash(rel))); err != nil {
			return err
		}
	}
	cfgs := map[string]string{
		"configs/test-hybrid.yaml":  "name: test-hybrid\ndescription: keyword and vector fused\nstages:\n  - keyword: {limit: 40}\n  - vector: {limit: 40}\n  - rrf: {k: 60, limit: 30}\n",
		"configs/keyword.yaml":      "name: keyword\ndescription: BM25 only\nstages:\n  - keyword: {limit: 40}\n",
		"configs/needs-rerank.yaml": "name: needs-rerank\ndescription: reranks with the cross-encoder\nstages:\n  - keyword: {limit: 40}\n  - rerank: {model: ms-marco-MiniLM-L-6-v2, candidates: 10}\n",
		"experiments/vector.yaml":   "name: vector\ndescription: vector only\nstages:\n  - vector: {limit: 40}\n",
	}
	for rel, text := range cfgs {
		if err := writeFile(filepath.Join(fx.configs, filepath.FromSlash(rel)), []byte(text)); err != nil {
			return err
		}
	}
	ctx := context.Background()
	// A full build of the tests' own (about 25 s on two cores): never a copy
	// of the developer's data/vault.db, whose state the tests cannot know.
	rep, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: fx.vault, DBPath: fx.db})
	if err != nil {
		return fmt.Errorf("index the test vault: %w", err)
	}
	fx.notes = rep.Notes
	return nil
}

func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// needModels skips a test when the embedder is not installed.
func needModels(t *testing.T) {
	t.Helper()
	if fx.skip != "" {
		modeltest.Missing(t, "%s", fx.skip)
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fixedNow is the tests' clock.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newServer starts a server over the fixture (or what mod sets) and closes it
// when the test ends. It needs the embedder.
func newServer(t *testing.T, mod func(*Options)) *Server {
	t.Helper()
	needModels(t)
	return newModelFreeServer(t, mod)
}

// newModelFreeServer is newServer for tests that load no model (the HTTP
// guards, the token, the bind refusal, the vault_read refusals): they run
// whether or not the embedder is installed, over a bag-of-words index when it
// is not.
func newModelFreeServer(t *testing.T, mod func(*Options)) *Server {
	t.Helper()
	// Every tool, so that each tool's tests reach it; the default set is
	// tested in toolset_test.go.
	o := Options{VaultPath: fx.vault, DBPath: fx.db, ConfigRoot: fx.configs, ConfigName: "test-hybrid", Registry: fx.reg,
		Logger: quiet, Clock: func() time.Time { return fixedNow }, Tools: AllTools()}
	if mod != nil {
		mod(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// serveHTTP serves s on a loopback port until the test ends, and checks that
// the server then shuts down cleanly. It returns the base URL.
func serveHTTP(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve did not shut down cleanly: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// initialize starts a client and returns what the server answered.
func initialize(t *testing.T, c *client.Client) *mcp.InitializeResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := mcptest.Initialize(ctx, c)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

// connectHTTP serves s over streamable HTTP and returns a connected client.
func connectHTTP(t *testing.T, s *Server, opts ...transport.StreamableHTTPCOption) *client.Client {
	t.Helper()
	c, _ := connectHTTPInit(t, s, opts...)
	return c
}

// connectHTTPInit is connectHTTP that also returns the initialize result.
func connectHTTPInit(t *testing.T, s *Server, opts ...transport.StreamableHTTPCOption) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	base := serveHTTP(t, s)
	c, err := client.NewStreamableHttpClient(base+"/mcp", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, initialize(t, c)
}

// connectStdio serves s over a pair of pipes, as over stdin and stdout, and
// returns a connected client.
func connectStdio(t *testing.T, s *Server) *client.Client {
	t.Helper()
	c, _ := connectStdioInit(t, s)
	return c
}

// connectStdioInit is connectStdio that also returns the initialize result.
func connectStdioInit(t *testing.T, s *Server) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStdio(ctx, serverIn, serverOut)
		serverOut.Close()
	}()
	c := client.NewClient(transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader(""))))
	t.Cleanup(func() {
		c.Close() // closes clientOut: the server reads EOF and returns
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		cancel()
	})
	return c, initialize(t, c)
}

// transports are the ways a client reaches the server.
var transports = []struct {
	name    string
	connect func(*testing.T, *Server) *client.Client
}{
	{"http", func(t *testing.T, s *Server) *client.Client { return connectHTTP(t, s) }},
	{"stdio", connectStdio},
}

// eachTransport runs f once per transport against one server.
func eachTransport(t *testing.T, s *Server, f func(t *testing.T, c *client.Client)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { f(t, tr.connect(t, s)) })
	}
}

// callRaw calls a tool and returns its answer as JSON (its structuredContent;
// the text of an error result) and whether it is an error result; safe in
// any goroutine. The text written for the model is checked in render_test.go.
func callRaw(c *client.Client, tool string, args map[string]any) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", false, fmt.Errorf("%s: protocol error: %w", tool, err)
	}
	var texts []string
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) != 1 {
		return "", false, fmt.Errorf("%s: want one text content, got %d (%v)", tool, len(texts), res.Content)
	}
	if res.IsError {
		return texts[0], true, nil
	}
	if res.StructuredContent == nil {
		return "", false, fmt.Errorf("%s: an answer without structuredContent: %s", tool, texts[0])
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return "", false, fmt.Errorf("%s: structuredContent: %w", tool, err)
	}
	return string(raw), false, nil
}

// call calls a tool and returns its text and whether it is an error result.
// Call it from the test's goroutine.
func call(t *testing.T, c *client.Client, tool string, args map[string]any) (string, bool) {
	t.Helper()
	text, isErr, err := callRaw(c, tool, args)
	if err != nil {
		t.Fatal(err)
	}
	return text, isErr
}

// callOK calls a tool that must succeed and decodes its JSON into out.
func callOK(t *testing.T, c *client.Client, tool string, args map[string]any, out any) {
	t.Helper()
	text, isErr := call(t, c, tool, args)
	if isErr {
		t.Fatalf("%s(%v): unexpected error: %s", tool, args, text)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s: result is not JSON: %v\n%s", tool, err, text)
	}
}

// callErr calls a tool that must fail and returns the error text.
func callErr(t *testing.T, c *client.Client, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := call(t, c, tool, args)
	if !isErr {
		t.Fatalf("%s(%v): want an error, got %s", tool, args, text)
	}
	if strings.Contains(text, "TOP SECRET") {
		t.Fatalf("%s: an error leaked the outside file: %s", tool, text)
	}
	return text
}
