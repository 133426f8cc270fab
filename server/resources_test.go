package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/models/bow"
)

// oddNotes have names a URI must encode: spaces, letters beyond ASCII, '#',
// '%', '?', '+'.
var oddNotes = map[string]string{
	"plain.md":              "# Plain\n\nA plain note.\n",
	"with space/a note.md":  "---\ntype: reference\n---\n# A note with spaces\n\nSpaces in the folder and the name.\n",
	"café/über straße.md":   "# Über\n\nLetters beyond ASCII.\n",
	"hash#tag.md":           "# Hash\n\nA hash in the name.\n",
	"100% done.md":          "# Percent\n\nA percent sign in the name.\n\n## Part\n\nA section.\n",
	"q?and+plus.md":         "# Question\n\nA question mark and a plus.\n",
	"deep/er/still/leaf.md": "# Leaf\n\nThree folders down.\n",
}

// bowServer serves a vault of files, indexed with bag-of-words vectors, and
// builds with them too: no model is needed.
func bowServer(t *testing.T, files map[string]string, mod func(*Options)) (s *Server, vaultPath string) {
	t.Helper()
	vaultPath, db := buildBowIndex(t, files)
	s = newModelFreeServer(t, func(o *Options) {
		o.VaultPath, o.DBPath, o.ConfigName = vaultPath, db, "keyword"
		o.wrapEmbedder = func(index.Embedder) index.Embedder { return bow.Embedder{ModelName: models.DefaultEmbedder} }
		if mod != nil {
			mod(o)
		}
	})
	return s, vaultPath
}

func TestResourceURI(t *testing.T) {
	for rel, want := range map[string]string{
		"plain.md":             "vault://plain.md",
		"with space/a note.md": "vault://with%20space/a%20note.md",
		"café/über straße.md":  "vault://caf%C3%A9/%C3%BCber%20stra%C3%9Fe.md",
		"hash#tag.md":          "vault://hash%23tag.md",
		"100% done.md":         "vault://100%25%20done.md",
		"q?and+plus.md":        "vault://q%3Fand+plus.md",
	} {
		if got := ResourceURI(rel); got != want {
			t.Errorf("ResourceURI(%q) = %q, want %q", rel, got, want)
		}
		// Whatever form a client sends, the path comes back the same.
		for _, uri := range []string{want, canonicalURI(want)} {
			if got, err := notePathOfURI(canonicalURI(uri)); err != nil || got != rel {
				t.Errorf("path of %q = %q, %v; want %q", uri, got, err, rel)
			}
		}
	}
	tpl := mcp.NewResourceTemplate(ResourceTemplate, "note")
	for rel := range oddNotes {
		if uri := canonicalURI(ResourceURI(rel)); !tpl.URITemplate.Regexp().MatchString(uri) {
			t.Errorf("%q (from %q) does not match the template %s", uri, rel, ResourceTemplate)
		}
	}
	if _, err := notePathOfURI("vault://bad%zz.md"); err == nil {
		t.Error("a bad escape was decoded")
	}
	for _, c := range []mcp.Cursor{"!!", "eDE=", encodeCursor(-1)} { // not base64, "x1", a negative offset
		if _, err := decodeCursor(c); !errors.Is(err, errBadCursor) {
			t.Errorf("cursor %q: %v, want refused", c, err)
		}
	}
	if n, err := decodeCursor(encodeCursor(42)); n != 42 || err != nil {
		t.Errorf("cursor round trip: %d, %v", n, err)
	}
}

func ctx30(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// listAll pages through resources/list and returns the resources and how
// many pages it took.
func listAll(t *testing.T, c *client.Client) ([]mcp.Resource, int) {
	t.Helper()
	var all []mcp.Resource
	req := mcp.ListResourcesRequest{}
	for pages := 1; ; pages++ {
		res, err := c.ListResourcesByPage(ctx30(t), req)
		if err != nil {
			t.Fatalf("resources/list page %d: %v", pages, err)
		}
		all = append(all, res.Resources...)
		if res.NextCursor == "" {
			return all, pages
		}
		if pages > 100 {
			t.Fatal("resources/list never ends")
		}
		req.Params.Cursor = res.NextCursor
	}
}

func TestResourcesListAndRead(t *testing.T) {
	s, _ := bowServer(t, oddNotes, func(o *Options) { o.resourcePage = 3 })
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range oddNotes {
			if !yield(p) {
				return
			}
		}
	})
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		all, pages := listAll(t, c)
		if want := (len(paths) + 2) / 3; pages != want {
			t.Errorf("%d pages of 3 for %d notes, want %d", pages, len(paths), want)
		}
		if len(all) != len(paths) {
			t.Fatalf("listed %d resources, want %d: %+v", len(all), len(paths), all)
		}
		for i, r := range all {
			if r.URI != ResourceURI(paths[i]) || r.MIMEType != ResourceMIMEType || r.Description != paths[i] {
				t.Errorf("resource %d: %+v, want %s", i, r, ResourceURI(paths[i]))
			}
			var read ReadResult
			callOK(t, c, ToolRead, map[string]any{"path": paths[i]}, &read)
			if r.Name != read.Title {
				t.Errorf("%s: name %q, want the title %q", r.URI, r.Name, read.Title)
			}
			res, err := c.ReadResource(ctx30(t), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: r.URI}})
			if err != nil {
				t.Fatalf("read %s: %v", r.URI, err)
			}
			if len(res.Contents) != 1 {
				t.Fatalf("read %s: %d contents", r.URI, len(res.Contents))
			}
			tc, ok := mcp.AsTextResourceContents(res.Contents[0])
			if !ok {
				t.Fatalf("read %s: not text: %#v", r.URI, res.Contents[0])
			}
			if tc.Text != read.Content || tc.URI != r.URI || tc.MIMEType != ResourceMIMEType {
				t.Errorf("read %s: %q (%s, %s), want vault_read's %q", r.URI, tc.Text, tc.URI, tc.MIMEType, read.Content)
			}
			if tc.Meta["title"] != read.Title || tc.Meta["path"] != read.Path {
				t.Errorf("read %s: _meta %v, want vault_read's title and path", r.URI, tc.Meta)
			}
		}
		// A path typed into the template arrives with "/" encoded, or raw.
		for _, uri := range []string{"vault://deep%2Fer%2Fstill%2Fleaf.md", "vault://with space/a note.md", "vault://café/über straße.md"} {
			res, err := c.ReadResource(ctx30(t), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil || len(res.Contents) != 1 {
				t.Errorf("read %s: %v", uri, err)
			}
		}
		if _, err := c.ListResourcesByPage(ctx30(t), mcp.ListResourcesRequest{PaginatedRequest: mcp.PaginatedRequest{Params: mcp.PaginatedParams{Cursor: "bm90IG91cnM="}}}); err == nil {
			t.Error("a cursor the server never made was accepted")
		}
		tpls, err := c.ListResourceTemplates(ctx30(t), mcp.ListResourceTemplatesRequest{})
		if err != nil || len(tpls.ResourceTemplates) != 1 || tpls.ResourceTemplates[0].URITemplate.Raw() != ResourceTemplate || tpls.ResourceTemplates[0].MIMEType != ResourceMIMEType {
			t.Errorf("templates: %+v, %v", tpls, err)
		}
	})
}

// TestResourceReadRefusals: resources/read refuses what vault_read refuses,
// with vault_read's words, on every OS: traversal (plain and encoded),
// absolute paths, drive letters, UNC paths, backslashes, what is not a note,
// symlinks leading out, and notes over the size bound.
func TestResourceReadRefusals(t *testing.T) {
	s := newModelFreeServer(t, nil)
	c := connectStdio(t, s)
	for _, rel := range []string{
		"../outside/secret.md", "knowledge/../../outside/secret.md", "%2e%2e/outside/secret.md", "..%2Foutside/secret.md",
		"%252e%252e/outside/secret.md", "/etc/passwd", "C:/Windows/win.ini", "c:secret.md", "//server/share/secret.md",
		`\\server\share\secret.md`, `knowledge\idempotency.md`, "knowledge/escape.md", "knowledge/relative-out.md",
		"linked/secret.md", ".obsidian/workspace.md", "templates/session-template.md", "lint-report-2026-03-01.md",
		"reference/blob.md", "reference/missing.md", "knowledge",
	} {
		want := callErr(t, c, ToolRead, map[string]any{"path": rel})
		for _, uri := range []string{ResourceScheme + rel, ResourceURI(rel)} {
			_, err := c.ReadResource(ctx30(t), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err == nil {
				t.Errorf("read %q: no error, want %q", uri, want)
				continue
			}
			if strings.Contains(err.Error(), "TOP SECRET") {
				t.Fatalf("read %q leaked the outside file: %v", uri, err)
			}
			if uri == ResourceURI(rel) && !strings.Contains(err.Error(), want) {
				t.Errorf("read %q: %v, want vault_read's %q", uri, err, want)
			}
		}
	}
	for _, uri := range []string{"file:///etc/passwd", "vault://"} {
		if _, err := c.ReadResource(ctx30(t), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}}); err == nil {
			t.Errorf("%s was read", uri)
		}
	}
	// The size bound: vault_read's, in the same words.
	dir := t.TempDir()
	big := filepath.Join(dir, "big.md")
	if err := os.WriteFile(big, []byte("# Big\n\n"+strings.Repeat("x", 8<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.md")
	if err := os.WriteFile(small, []byte("# Small\n\nfine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := index.Build(context.Background(), bow.Embedder{ModelName: models.DefaultEmbedder}, index.BuildOptions{VaultPath: dir, DBPath: filepath.Join(t.TempDir(), "v.db")}); err != nil {
		t.Fatal(err)
	}
	s2 := newModelFreeServer(t, func(o *Options) { o.VaultPath, o.DBPath = dir, filepath.Join(t.TempDir(), "none.db") })
	c2 := connectStdio(t, s2)
	want := callErr(t, c2, ToolRead, map[string]any{"path": "big.md"})
	if _, err := c2.ReadResource(ctx30(t), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "vault://big.md"}}); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(want, "over the") {
		t.Errorf("read a note over the bound: %v, want %q", err, want)
	}
}

func complete(t *testing.T, c *client.Client, uri, arg, value string) *mcp.Completion {
	t.Helper()
	res, err := c.Complete(ctx30(t), mcp.CompleteRequest{Params: mcp.CompleteParams{
		Ref:      mcp.ResourceReference{Type: "ref/resource", URI: uri},
		Argument: mcp.CompleteArgument{Name: arg, Value: value},
	}})
	if err != nil {
		t.Fatalf("complete %s %s=%q: %v", uri, arg, value, err)
	}
	return &res.Completion
}

func TestResourcePathCompletion(t *testing.T) {
	files := map[string]string{"other/x.md": "# X\n\nx\n", "café/ü.md": "# Ü\n\nü\n"}
	for i := range 130 {
		files[fmt.Sprintf("many/n%03d.md", i)] = fmt.Sprintf("# N%d\n\nnote %d\n", i, i)
	}
	s, _ := bowServer(t, files, nil)
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		got := complete(t, c, ResourceTemplate, "path", "many/n00")
		if len(got.Values) != 10 || got.Total != 10 || got.HasMore || got.Values[0] != "many/n000.md" || got.Values[9] != "many/n009.md" {
			t.Errorf("many/n00: %+v", got)
		}
		got = complete(t, c, ResourceTemplate, "path", "many/")
		if len(got.Values) != MaxCompletions || got.Total != 130 || !got.HasMore || !slices.IsSorted(got.Values) {
			t.Errorf("many/: %d values, total %d, hasMore %v", len(got.Values), got.Total, got.HasMore)
		}
		if got = complete(t, c, ResourceTemplate, "path", "caf"); !slices.Equal(got.Values, []string{"café/ü.md"}) {
			t.Errorf("caf: %+v", got)
		}
		if got = complete(t, c, ResourceTemplate, "path", "nothing/"); len(got.Values) != 0 || got.Total != 0 {
			t.Errorf("nothing/: %+v", got)
		}
		if got = complete(t, c, ResourceTemplate, "other-arg", "many/"); len(got.Values) != 0 {
			t.Errorf("another argument: %+v", got)
		}
		if got = complete(t, c, "file://{path}", "path", "many/"); len(got.Values) != 0 {
			t.Errorf("another template: %+v", got)
		}
	})
}

// notes collects a client's notifications by method.
type notes struct {
	mu  sync.Mutex
	all []mcp.JSONRPCNotification
	got chan struct{}
}

func collect(c *client.Client) *notes {
	n := &notes{got: make(chan struct{}, 1000)}
	c.OnNotification(func(m mcp.JSONRPCNotification) {
		n.mu.Lock()
		n.all = append(n.all, m)
		n.mu.Unlock()
		n.got <- struct{}{}
	})
	return n
}

func (n *notes) of(method string) []mcp.JSONRPCNotification {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, m := range n.all {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// waitCount waits until count notifications of method have arrived.
func (n *notes) waitCount(t *testing.T, method string, count int) []mcp.JSONRPCNotification {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if got := n.of(method); len(got) >= count {
			return got
		}
		select {
		case <-n.got:
		case <-deadline:
			t.Fatalf("%d %s notifications after 30s, want %d", len(n.of(method)), method, count)
		}
	}
}

func TestResourcesListChanged(t *testing.T) {
	s, vaultPath := bowServer(t, oddNotes, nil)
	c := connectStdio(t, s)
	n := collect(c)
	const changed = string(mcp.MethodNotificationResourcesListChanged)
	add := filepath.Join(vaultPath, "added.md")
	if err := os.WriteFile(add, []byte("# Added\n\nA new note.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	callOK(t, c, ToolReindex, nil, &reindexOut{})
	n.waitCount(t, changed, 1)
	all, _ := listAll(t, c)
	if !slices.ContainsFunc(all, func(r mcp.Resource) bool { return r.URI == "vault://added.md" }) {
		t.Error("the added note is not listed")
	}
	// An edit changes no name: no notification. The notifications of one
	// client arrive in order, so the next one counted is the removal's.
	if err := os.WriteFile(filepath.Join(vaultPath, "plain.md"), []byte("# Plain\n\nEdited.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	callOK(t, c, ToolReindex, nil, &reindexOut{})
	if err := os.Remove(add); err != nil {
		t.Fatal(err)
	}
	callOK(t, c, ToolReindex, nil, &reindexOut{})
	n.waitCount(t, changed, 2)
	callOK(t, c, ToolReindex, nil, &reindexOut{}) // nothing changed
	if err := os.WriteFile(add, []byte("# Added\n\nBack again.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	callOK(t, c, ToolReindex, nil, &reindexOut{})
	if got := n.waitCount(t, changed, 3); len(got) != 3 {
		t.Errorf("%d list_changed for 2 additions and 1 removal among 5 builds", len(got))
	}
}

// progressOf decodes a progress notification.
func progressOf(t *testing.T, m mcp.JSONRPCNotification) (token any, progress, total float64, message string) {
	t.Helper()
	f := m.Params.AdditionalFields
	progress, ok1 := f["progress"].(float64)
	total, ok2 := f["total"].(float64)
	message, _ = f["message"].(string)
	if !ok1 || !ok2 {
		t.Fatalf("progress notification without progress or total: %v", f)
	}
	return f["progressToken"], progress, total, message
}

// TestReindexProgress: vault_reindex with a progressToken sends the
// embedding progress of its run, increasing, ending at progress == total,
// over both transports.
func TestReindexProgress(t *testing.T) {
	s, vaultPath := bowServer(t, oddNotes, nil)
	eachTransport(t, s, func(t *testing.T, c *client.Client) { checkReindexProgress(t, c, vaultPath) })
}

func checkReindexProgress(t *testing.T, c *client.Client, vaultPath string) {
	n := collect(c)
	folder := t.Name()[strings.LastIndex(t.Name(), "/")+1:]
	// Enough new chunks for several batches.
	for i := range 40 {
		var b strings.Builder
		fmt.Fprintf(&b, "# New %d\n\n", i)
		for j := range 6 {
			fmt.Fprintf(&b, "## Part %d\n\nSection %d of note %d, with words enough to be a chunk of its own.\n\n", j, j, i)
		}
		if err := writeFile(filepath.Join(vaultPath, folder, fmt.Sprintf("new-%02d.md", i)), []byte(b.String())); err != nil {
			t.Fatal(err)
		}
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = ToolReindex
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := c.CallTool(ctx30(t), req)
	if err != nil || res.IsError {
		t.Fatalf("reindex: %v %+v", err, res)
	}
	var out struct {
		Added int `json:"added"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	const method = string(mcp.MethodNotificationProgress)
	// The last one is sent before the result; on stdio both come in order
	// of sending, but the notification may be read a moment after.
	got := n.waitCount(t, method, 1)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); got = n.of(method) {
		if _, p, total, _ := progressOf(t, got[len(got)-1]); p == total {
			break
		}
		<-n.got
	}
	prev := -1.0
	for i, m := range got {
		token, p, total, msg := progressOf(t, m)
		if token != "tok-1" {
			t.Errorf("notification %d: token %v", i, token)
		}
		if p <= prev || p > total {
			t.Errorf("notification %d: progress %v of %v after %v: not increasing within total", i, p, total, prev)
		}
		prev = p
		last := i == len(got)-1
		if last && (p != total || !strings.HasPrefix(msg, "reindex done: ") || !strings.Contains(msg, fmt.Sprintf("%d added", out.Added))) {
			t.Errorf("last notification: %v of %v, %q", p, total, msg)
		}
		if !last && !strings.HasPrefix(msg, "embedded ") {
			t.Errorf("notification %d: %q", i, msg)
		}
	}
	t.Logf("%d progress notifications", len(got))
	if out.Added != 40 {
		t.Errorf("reindex added %d, want 40", out.Added)
	}
	// Without a token, none.
	before := len(n.of(method))
	callOK(t, c, ToolReindex, nil, &reindexOut{})
	callOK(t, c, ToolList, nil, &listOut{}) // a round trip after: a stray notification would be in by now
	if after := len(n.of(method)); after != before {
		t.Errorf("%d progress notifications for a call without a token", after-before)
	}
}

// TestProgressThrottle: with a clock that moves 10ms per update, 1000
// updates over 10 seconds are sent at most once per ProgressInterval, each
// higher than the last, and the last notification reaches the total.
func TestProgressThrottle(t *testing.T) {
	var clock atomic.Int64
	type sent struct {
		p, total float64
		msg      string
	}
	var got []sent
	sub := &progressSub{
		now:  func() time.Time { return time.Unix(0, clock.Load()) },
		send: func(p, total float64, msg string) { got = append(got, sent{p, total, msg}) },
	}
	var ev buildEvents
	ev.subscribe(sub)
	ev.begin(7, false)
	ev.progress(index.Progress{Phase: "embedding", Done: 0, Total: 1000}) // before the target is known
	sub.setTarget(7, &ev)
	if len(got) != 1 || got[0].p != 0 || got[0].total != 1001 {
		t.Fatalf("the progress before the target was known: %+v", got)
	}
	ev.progress(index.Progress{Phase: "reading", Done: 5, Total: 10}) // notes, not chunks: not sent
	for i := 1; i <= 1000; i++ {
		clock.Add(int64(10 * time.Millisecond))
		ev.progress(index.Progress{Phase: "embedding", Done: i, Total: 1000, Reused: 3})
	}
	sub.update(8, index.Progress{Phase: "embedding", Done: 5000, Total: 5000}) // another run: not sent
	sub.finish(&run{seq: 7, rep: index.Report{Counts: index.Counts{Notes: 9, Added: 2}}})
	maxSent := 1 + int(10*time.Second/ProgressInterval) + 1
	if len(got) < 3 || len(got) > maxSent {
		t.Errorf("%d notifications over 10s of updates, want 3..%d", len(got), maxSent)
	}
	for i := 1; i < len(got); i++ {
		if got[i].p <= got[i-1].p || got[i].total != 1001 {
			t.Errorf("notification %d: %+v after %+v", i, got[i], got[i-1])
		}
	}
	if end := got[len(got)-2]; end.p != 1000 {
		t.Errorf("the end of embedding was held back: %+v", end)
	}
	last := got[len(got)-1]
	if last.p != 1001 || !strings.Contains(last.msg, "9 notes, 2 added") {
		t.Errorf("last: %+v", last)
	}
	if !strings.Contains(got[1].msg, "of 1000 chunks (3 reused") {
		t.Errorf("message: %q", got[1].msg)
	}
	// A run that sent nothing still ends at progress == total.
	var only []sent
	quiet := &progressSub{now: time.Now, send: func(p, total float64, msg string) { only = append(only, sent{p, total, msg}) }}
	quiet.setTarget(3, &buildEvents{})
	quiet.finish(&run{seq: 3, err: errors.New("boom")})
	if len(only) != 1 || only[0].p != 1 || only[0].total != 1 || only[0].msg != "reindex failed: boom" {
		t.Errorf("a run without progress: %+v", only)
	}
}

// failingServer is bowServer whose builds fail while fail is set.
func failingServer(t *testing.T, fail *atomic.Bool) *Server {
	s, _ := bowServer(t, oddNotes, func(o *Options) {
		o.wrapBuild = func(b func(context.Context) (index.Report, error)) func(context.Context) (index.Report, error) {
			return func(ctx context.Context) (index.Report, error) {
				if fail.Load() {
					return index.Report{}, errors.New("the disk is on fire")
				}
				return b(ctx)
			}
		}
	})
	return s
}

// connectStdioLegacy is connectStdio for a client of the initialize
// handshake (protocol 2025-11-25).
func connectStdioLegacy(t *testing.T, s *Server) *client.Client {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStdio(context.Background(), serverIn, serverOut)
		serverOut.Close()
	}()
	c := client.NewClient(transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader(""))))
	t.Cleanup(func() {
		c.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
	if err := c.Start(ctx30(t)); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	req.Params.ClientInfo = mcp.Implementation{Name: "vault-rag-test", Version: "0"}
	if _, err := c.Initialize(ctx30(t), req); err != nil {
		t.Fatal(err)
	}
	return c
}

func logText(m mcp.JSONRPCNotification) (level, logger, data string) {
	f := m.Params.AdditionalFields
	return fmt.Sprint(f["level"]), fmt.Sprint(f["logger"]), fmt.Sprint(f["data"])
}

// TestBuildLogMessages: a client of the handshake gets every build's start
// and end at the level it set (mcp-go's default: error).
func TestBuildLogMessages(t *testing.T) {
	var fail atomic.Bool
	s := failingServer(t, &fail)
	c := connectStdioLegacy(t, s)
	n := collect(c)
	const method = string(mcp.MethodNotificationMessage)
	// At the default level, error, a build that works says nothing. The
	// notifications of one client arrive in order: the first one counted
	// is the failure's.
	callOK(t, c, ToolReindex, nil, &reindexOut{})
	fail.Store(true)
	callErr(t, c, ToolReindex, nil)
	got := n.waitCount(t, method, 1)
	if level, _, data := logText(got[0]); level != "error" || !strings.Contains(data, "the disk is on fire") {
		t.Fatalf("at the default level: %s %s", level, data)
	}
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, but the server still serves clients of the older protocols, which set their level with it
	if err := c.SetLevel(ctx30(t), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelInfo}}); err != nil {
		t.Fatal(err)
	}
	fail.Store(false)
	callOK(t, c, ToolReindex, nil, &reindexOut{})
	got = n.waitCount(t, method, 3)
	for i, want := range []string{"started", "done in"} {
		if level, logger, data := logText(got[1+i]); level != "info" || logger != LoggerName || !strings.Contains(data, want) {
			t.Errorf("message %d: %s %s %s, want info %q", 1+i, level, logger, data, want)
		}
	}
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, but the server still serves clients of the older protocols, which set their level with it
	if err := c.SetLevel(ctx30(t), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelWarning}}); err != nil {
		t.Fatal(err)
	}
	callOK(t, c, ToolReindex, nil, &reindexOut{})
	fail.Store(true)
	callErr(t, c, ToolReindex, nil)
	got = n.waitCount(t, method, 4)
	if level, _, _ := logText(got[3]); len(got) != 4 || level != "error" {
		t.Errorf("at warning: %+v", got[3:])
	}
}

// TestBuildLogMessagesPerRequest: a client of protocol 2026-07-28, which
// declares its level per request, gets its vault_reindex's run logged in
// that call only, and nothing without a level.
func TestBuildLogMessagesPerRequest(t *testing.T) {
	var fail atomic.Bool
	s := failingServer(t, &fail)
	c := connectStdio(t, s)
	n := collect(c)
	const method = string(mcp.MethodNotificationMessage)
	fail.Store(true)
	callErr(t, c, ToolReindex, nil) // no level declared: no log
	fail.Store(false)
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, but the server still serves clients of the older protocols, which set their level with it
	if err := c.SetLevel(ctx30(t), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelInfo}}); err != nil {
		t.Fatal(err)
	}
	callOK(t, c, ToolReindex, nil, &reindexOut{})
	got := n.waitCount(t, method, 2)
	for i, want := range []string{"waiting for reindex run 2", "reindex run 2 done in"} {
		if level, _, data := logText(got[i]); level != "info" || !strings.Contains(data, want) {
			t.Errorf("message %d: %s %s, want info %q", i, level, data, want)
		}
	}
}

// TestCapabilities: initialize declares resources with listChanged, logging
// and completions.
func TestResourceCapabilities(t *testing.T) {
	s := newModelFreeServer(t, nil)
	_, res := connectStdioInit(t, s)
	caps := res.Capabilities
	if caps.Resources == nil || !caps.Resources.ListChanged || caps.Logging == nil || caps.Completions == nil {
		t.Errorf("capabilities: %+v", caps)
	}
}

// TestResourcesWithoutIndex: with no index yet the list is an empty page and
// completion offers nothing; a first build then sends list_changed.
func TestResourcesWithoutIndex(t *testing.T) {
	dir := t.TempDir()
	vaulttestWrite(t, dir, map[string]string{"a.md": "# A\n\na\n"})
	g := newGate()
	s := newModelFreeServer(t, func(o *Options) {
		o.VaultPath, o.DBPath, o.ConfigName, o.wrapBuild = dir, filepath.Join(t.TempDir(), "v.db"), "keyword", g.wrap
		o.wrapEmbedder = func(index.Embedder) index.Embedder { return bow.Embedder{ModelName: models.DefaultEmbedder} }
	})
	c := connectStdio(t, s)
	n := collect(c)
	<-g.started
	if all, pages := listAll(t, c); len(all) != 0 || pages != 1 {
		t.Errorf("without an index: %d resources in %d pages", len(all), pages)
	}
	if got := complete(t, c, ResourceTemplate, "path", ""); len(got.Values) != 0 {
		t.Errorf("completion without an index: %+v", got)
	}
	close(g.open)
	n.waitCount(t, string(mcp.MethodNotificationResourcesListChanged), 1)
	if all, _ := listAll(t, c); len(all) != 1 || all[0].URI != "vault://a.md" || all[0].Name != "A" {
		t.Errorf("after the first build: %+v", all)
	}
}

func vaulttestWrite(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(text)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFirstSearchWaitProgress: a vault_search waiting for the first index,
// called with a progressToken, is sent progress while it waits.
func TestFirstSearchWaitProgress(t *testing.T) {
	vault := tinyVault(t)
	g := newGate()
	s := newServer(t, func(o *Options) {
		o.VaultPath, o.DBPath, o.wrapBuild = vault, filepath.Join(t.TempDir(), "vault.db"), g.wrap
	})
	c := connectStdio(t, s)
	n := collect(c)
	<-g.started
	done := make(chan error, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = ToolSearch
		req.Params.Arguments = map[string]any{"query": "idempotency"}
		req.Params.Meta = &mcp.Meta{ProgressToken: "wait-1"}
		res, err := c.CallTool(ctx30(t), req)
		if err == nil && res.IsError {
			err = fmt.Errorf("search: %+v", res.Content)
		}
		done <- err
	}()
	const method = string(mcp.MethodNotificationProgress)
	for deadline := time.Now().Add(20 * time.Second); len(n.of(method)) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no progress while the search waited for the first index")
		}
	}
	close(g.open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p := n.of(method)[0].Params.AdditionalFields
	if p["progressToken"] != "wait-1" || !strings.Contains(fmt.Sprint(p["message"]), "waiting for the first index") {
		t.Errorf("progress while waiting: %+v", p)
	}
}
