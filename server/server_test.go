package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/mcptest"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/models/bow"
)

// copyFixture copies the test vault and its index for a test that changes
// either.
func copyFixture(t *testing.T) (vault, db string) {
	t.Helper()
	needModels(t)
	dir := t.TempDir()
	vault, db = filepath.Join(dir, "vault"), filepath.Join(dir, "vault.db")
	if err := vaultfs.CopyTree(fx.vault, vault); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fx.db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// The copy is the same vault elsewhere: the index says so, as it would
	// once rebuilt there.
	if err := index.Rebind(context.Background(), db, vault); err != nil {
		t.Fatal(err)
	}
	return vault, db
}

// gate holds every build until opened, and says when one starts.
type gate struct {
	open    chan struct{}
	started chan struct{}
}

func newGate() *gate { return &gate{open: make(chan struct{}), started: make(chan struct{}, 100)} }

func (g *gate) wrap(build func(context.Context) (index.Report, error)) func(context.Context) (index.Report, error) {
	return func(ctx context.Context) (index.Report, error) {
		g.started <- struct{}{}
		select {
		case <-g.open:
		case <-ctx.Done():
			return index.Report{}, ctx.Err()
		}
		return build(ctx)
	}
}

func TestReindexCoalesces(t *testing.T) {
	vault, db := copyFixture(t)
	g := newGate()
	joined := make(chan struct{}, 100)
	s := newServer(t, func(o *Options) { o.VaultPath, o.DBPath, o.wrapBuild = vault, db, g.wrap })
	s.reindex.joined = joined // no run has started: nothing reads it yet
	c := connectHTTP(t, s)

	const callers = 8
	type result struct {
		out reindexOut
		err string
	}
	results := make(chan result, callers)
	reindex := func() {
		text, isErr, err := callRaw(c, ToolReindex, nil)
		var r result
		switch {
		case err != nil:
			r.err = err.Error()
		case isErr:
			r.err = text
		default:
			if err := json.Unmarshal([]byte(text), &r.out); err != nil {
				r.err = err.Error()
			}
		}
		results <- r
	}
	go reindex()
	<-joined
	<-g.started // run 1 is in progress, held at the gate
	for i := 1; i < callers; i++ {
		go reindex()
	}
	for i := 1; i < callers; i++ {
		<-joined // every later caller is queued behind run 1
	}

	// Searches keep working while a build runs.
	var out searchOut
	callOK(t, c, ToolSearch, map[string]any{"query": "idempotency keys"}, &out)
	if len(out.Notes) == 0 {
		t.Error("search during a reindex found nothing")
	}
	if st := s.Health(context.Background()).Reindex; !st.Running || !st.Queued || st.Builds != 0 {
		t.Errorf("health during the run: %+v", st)
	}

	close(g.open)
	runs := map[int]int{}
	for i := 0; i < callers; i++ {
		r := <-results
		if r.err != "" {
			t.Fatalf("a reindex call failed: %s", r.err)
		}
		if r.out.Notes != fx.notes {
			t.Errorf("report: %+v", r.out)
		}
		runs[r.out.Run]++
	}
	if runs[1] != 1 || runs[2] != callers-1 || len(runs) != 2 {
		t.Errorf("callers per run = %v; want the first caller on run 1 and the other %d sharing run 2", runs, callers-1)
	}
	if b := s.reindex.status().Builds; b != 2 {
		t.Errorf("%d concurrent calls ran %d builds, want 2", callers, b)
	}
}

func TestReindexTimeoutLeavesBuildRunning(t *testing.T) {
	vault, db := copyFixture(t)
	g := newGate()
	s := newServer(t, func(o *Options) {
		o.VaultPath, o.DBPath, o.wrapBuild = vault, db, g.wrap
		o.ReindexTimeout = 200 * time.Millisecond
	})
	c := connectStdio(t, s)
	msg := callErr(t, c, ToolReindex, nil)
	if !strings.Contains(msg, "still going") || !strings.Contains(msg, "gave up after 200ms") {
		t.Errorf("a call that outlives its time limit: %q", msg)
	}
	if st := s.reindex.status(); !st.Running {
		t.Errorf("the build stopped with its caller: %+v", st)
	}
	close(g.open)
	s.reindex.close()
	if st := s.reindex.status(); st.Builds != 1 || st.LastError != "" {
		t.Errorf("the build did not finish on its own: %+v", st)
	}
}

// tinyVault writes a vault of two short notes, for tests that need full
// builds (a full build of the fixture takes a while on a small machine).
func tinyVault(t *testing.T) string {
	t.Helper()
	needModels(t)
	vault := filepath.Join(t.TempDir(), "vault")
	for rel, text := range map[string]string{
		"knowledge/idempotency.md": "# Idempotency\n\nDoing it twice has the same effect as doing it once.\n",
		"personal/bread.md":        "# Bread\n\nRye loaves want a long proof.\n",
	} {
		if err := writeFile(filepath.Join(vault, filepath.FromSlash(rel)), []byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	return vault
}

// builtTinyVault is tinyVault and its index, built by the embedder it
// returns.
func builtTinyVault(t *testing.T) (vault, db string, emb *models.Embedder) {
	t.Helper()
	vault = tinyVault(t)
	db = filepath.Join(t.TempDir(), "vault.db")
	ctx := context.Background()
	emb, err := fx.reg.Embedder(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: db}); err != nil {
		t.Fatal(err)
	}
	return vault, db, emb
}

func TestNoIndexYet(t *testing.T) {
	vault := tinyVault(t)
	db := filepath.Join(t.TempDir(), "sub", "vault.db")
	g := newGate()
	// A short wait for the first index: past it, the calls say why.
	s := newServer(t, func(o *Options) {
		o.VaultPath, o.DBPath, o.wrapBuild, o.FirstIndexWait = vault, db, g.wrap, 300*time.Millisecond
	})
	c := connectStdio(t, s)
	<-g.started // New started a build at once
	if msg := callErr(t, c, ToolList, nil); !strings.Contains(msg, "no index yet") {
		t.Errorf("list without an index: %q", msg)
	}
	msg := callErr(t, c, ToolSearch, map[string]any{"query": "idempotency"})
	if !strings.Contains(msg, "no index yet") || !strings.Contains(msg, "being built") || !strings.Contains(msg, "vault_reindex") {
		t.Errorf("search without an index: %q", msg)
	}
	h := s.Health(context.Background())
	if h.Status != StatusError || h.IndexAgeSeconds != nil || !strings.Contains(h.Index, "no index yet") {
		t.Errorf("health without an index: %+v", h)
	}
	type result struct {
		text  string
		isErr bool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		text, isErr, err := callRaw(c, ToolReindex, nil)
		done <- result{text, isErr, err}
	}()
	close(g.open)
	r := <-done
	if r.err != nil || r.isErr {
		t.Fatalf("reindex: %v %s", r.err, r.text)
	}
	var out reindexOut
	if err := json.Unmarshal([]byte(r.text), &out); err != nil {
		t.Fatal(err)
	}
	if out.Notes != 2 || out.Run != 2 {
		t.Errorf("reindex after the startup build: %+v", out)
	}
	var res searchOut
	callOK(t, c, ToolSearch, map[string]any{"query": "idempotency"}, &res)
	if len(res.Notes) == 0 {
		t.Error("search after the build found nothing")
	}
}

// TestFirstSearchWaits: a call sent while the first build has no index in
// place yet waits for it and answers, saying it waited; one whose wait is
// disabled answers at once with the reason.
func TestFirstSearchWaits(t *testing.T) {
	vault := tinyVault(t)
	db := filepath.Join(t.TempDir(), "vault.db")
	g := newGate()
	s := newServer(t, func(o *Options) { o.VaultPath, o.DBPath, o.wrapBuild = vault, db, g.wrap })
	c := connectStdio(t, s)
	<-g.started
	type answer struct {
		text  string
		isErr bool
		err   error
	}
	calls := map[string]map[string]any{ToolSearch: {"query": "idempotency"}, ToolList: nil, ToolOverview: nil}
	done := map[string]chan answer{}
	for tool, args := range calls {
		done[tool] = make(chan answer, 1)
		go func() {
			text, isErr, err := callRaw(c, tool, args)
			done[tool] <- answer{text, isErr, err}
		}()
	}
	// The calls are waiting (none can answer: the build has not begun).
	time.Sleep(3 * firstIndexPoll)
	for tool, ch := range done {
		select {
		case a := <-ch:
			t.Fatalf("%s answered before the first index existed: %+v", tool, a)
		default:
		}
	}
	close(g.open)
	for tool, ch := range done {
		a := <-ch
		if a.err != nil || a.isErr {
			t.Fatalf("%s during the first build: %v %s", tool, a.err, a.text)
		}
		var out struct {
			WaitedMS int64           `json:"waited_for_first_index_ms"`
			Notes    json.RawMessage `json:"notes"` // a list, or overview's count
		}
		if err := json.Unmarshal([]byte(a.text), &out); err != nil {
			t.Fatal(err)
		}
		if out.WaitedMS <= 0 {
			t.Errorf("%s waited for the first index but does not say so: %s", tool, a.text)
		}
		if n := string(out.Notes); n == "[]" || n == "0" || n == "" {
			t.Errorf("%s after the wait found nothing: %s", tool, a.text)
		}
	}
	// The index is there now: no wait, nothing said.
	text, _ := call(t, c, ToolSearch, map[string]any{"query": "idempotency"})
	if strings.Contains(text, "waited_for_first_index_ms") {
		t.Errorf("a search of a built index says it waited: %s", text)
	}

	// With the wait disabled, a call answers at once that the index is
	// being built.
	vault2 := tinyVault(t)
	g2 := newGate()
	s2 := newServer(t, func(o *Options) {
		o.VaultPath, o.DBPath, o.wrapBuild, o.FirstIndexWait = vault2, filepath.Join(t.TempDir(), "vault.db"), g2.wrap, -1
	})
	c2 := connectStdio(t, s2)
	<-g2.started
	if msg := callErr(t, c2, ToolSearch, map[string]any{"query": "idempotency"}); !strings.Contains(msg, "being built") {
		t.Errorf("search with no wait: %q", msg)
	}
	close(g2.open)
}

// TestFullRebuildIsSwappedIn: a full rebuild by another builder is copied
// into the served file; a request in flight keeps reading the build it
// started on (its snapshot) and the copy waits for it; then the server
// serves the rebuild and closes the old handle once nothing uses it.
func TestFullRebuildIsSwappedIn(t *testing.T) {
	vault, db, emb := builtTinyVault(t)
	ctx := context.Background()
	s := newServer(t, func(o *Options) { o.VaultPath, o.DBPath = vault, db })
	old, release, err := s.acquire(ctx) // a request in flight on the old build
	if err != nil {
		t.Fatal(err)
	}
	oldHandle := s.cur
	if err := writeFile(filepath.Join(vault, "knowledge", "zebra.md"), []byte("# Zebra crossings\n\nStripes.\n")); err != nil {
		t.Fatal(err)
	}
	built := make(chan error, 1)
	go func() {
		_, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: db})
		built <- err
	}()
	// The request goes on reading the build it started on while the
	// rebuild waits to be copied in.
	time.Sleep(500 * time.Millisecond)
	select {
	case err := <-built:
		t.Fatalf("the rebuild was copied in under a request in flight (err %v)", err)
	default:
	}
	if _, total, err := old.db.List(ctx, index.Filter{PathPrefix: "knowledge/zebra.md"}, 0, 10); err != nil || total != 0 {
		t.Fatalf("the request in flight saw another build: %d notes, %v", total, err)
	}
	release()
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	c := connectStdio(t, s)
	var out listOut
	callOK(t, c, ToolList, map[string]any{"path": "knowledge/zebra.md"}, &out)
	if out.Total != 1 {
		t.Fatalf("the rebuilt index was not served: %+v", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := oldHandle.db.Stats(ctx)
		if err != nil {
			break // closed once its last request finished
		}
		if time.Now().After(deadline) {
			t.Fatal("the old index handle was never closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWatcherReindexesChanges(t *testing.T) {
	vault, db := copyFixture(t)
	s := newServer(t, func(o *Options) {
		o.VaultPath, o.DBPath, o.Watch = vault, db, true
		o.PollInterval, o.Debounce = 20*time.Millisecond, 60*time.Millisecond
	})
	c := connectStdio(t, s)
	waitFor := func(what string, path string, want int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			var out listOut
			callOK(t, c, ToolList, map[string]any{"path": path}, &out)
			if out.Total == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the watcher never reindexed (%s: %d notes, want %d; reindex %+v)", what, path, out.Total, want, s.reindex.status())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	p := filepath.Join(vault, "knowledge", "watched.md")
	if err := writeFile(p, []byte("# Watched\n\nA note written while the server runs.\n")); err != nil {
		t.Fatal(err)
	}
	waitFor("a new note", "knowledge/watched.md", 1)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	waitFor("a deleted note", "knowledge/watched.md", 0)
	// The list sees the build's commit a moment before the run ends.
	st := s.reindex.status()
	for deadline := time.Now().Add(10 * time.Second); (st.Running || st.Queued) && time.Now().Before(deadline); st = s.reindex.status() {
		time.Sleep(10 * time.Millisecond)
	}
	if st.LastReport == nil || st.LastReport.Mode != "incremental" || st.LastReport.Removed != 1 {
		t.Errorf("last watcher run: %+v", st)
	}
}

// degradedRegistry has the embedder and never the cross-encoder, whatever this
// machine has installed.
func degradedRegistry(t *testing.T) *models.Registry {
	t.Helper()
	needModels(t)
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(models.ModelDir(fx.reg.DataDir(), models.DefaultEmbedder))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, models.ModelDir(data, models.DefaultEmbedder)); err != nil {
		t.Fatal(err)
	}
	reg, err := models.NewRegistry(data, models.SettingsFrom(os.Getenv).Runtime)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	return reg
}

func getHealth(t *testing.T, url string) Health {
	t.Helper()
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/health: %s", resp.Status)
	}
	var h Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHealthStatus: /health describes what this server serves. A model only
// another configuration needs leaves it ok (that configuration is listed in
// other_configurations); a model the served configuration needs makes it
// degraded, naming the stage; an index that cannot be read makes it error.
func TestHealthStatus(t *testing.T) {
	needsRerank := ConfigHealth{Name: "needs-rerank", CannotRun: []string{"stage rerank needs ms-marco-MiniLM-L-6-v2 (cross-encoder): not fetched"}}
	tests := []struct {
		name     string
		config   string
		unusable bool // the index file is not an index, and rebuilding it fails
		status   string
		degraded []string
		others   []ConfigHealth
		index    string // a part of Health.Index
	}{
		{"ok: only another configuration needs the missing cross-encoder", "test-hybrid", false,
			StatusOK, []string{}, []ConfigHealth{needsRerank}, "ok"},
		{"degraded: the served configuration needs it", "needs-rerank", false,
			StatusDegraded, []string{"rerank: model not installed (ms-marco-MiniLM-L-6-v2: not fetched)"}, []ConfigHealth{}, "ok"},
		{"error: the index cannot be read", "test-hybrid", true,
			StatusError, []string{}, []ConfigHealth{needsRerank}, "the last build failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := degradedRegistry(t)
			s := newServer(t, func(o *Options) {
				o.Registry, o.ConfigName = reg, tc.config
				if tc.unusable {
					o.DBPath = filepath.Join(t.TempDir(), "vault.db")
					if err := os.WriteFile(o.DBPath, []byte("# a note, not an index\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					o.wrapBuild = func(func(context.Context) (index.Report, error)) func(context.Context) (index.Report, error) {
						return func(context.Context) (index.Report, error) { return index.Report{}, errors.New("disk full") }
					}
				}
			})
			if tc.unusable {
				if _, err := s.reindex.Run(context.Background()); err == nil {
					t.Fatal("the rebuild should fail")
				}
			}
			h := getHealth(t, serveHTTP(t, s))
			if h.Status != tc.status || h.Config != tc.config || !strings.Contains(h.Index, tc.index) {
				t.Errorf("status %q, config %q, index %q; want %q, %q, %q", h.Status, h.Config, h.Index, tc.status, tc.config, tc.index)
			}
			if !reflect.DeepEqual(h.DegradedStages, tc.degraded) {
				t.Errorf("degraded_stages = %q, want %q", h.DegradedStages, tc.degraded)
			}
			if !reflect.DeepEqual(h.OtherConfigurations, tc.others) {
				t.Errorf("other_configurations = %+v, want %+v", h.OtherConfigurations, tc.others)
			}
			if tc.unusable {
				if h.Notes != 0 || h.IndexAgeSeconds != nil {
					t.Errorf("an unreadable index reported %d notes, age %v", h.Notes, h.IndexAgeSeconds)
				}
			} else {
				built, err := time.Parse(time.RFC3339, h.BuiltAt)
				if h.Notes != fx.notes || h.Chunks == 0 || err != nil || h.IndexAgeSeconds == nil || *h.IndexAgeSeconds != int64(fixedNow.Sub(built)/time.Second) {
					t.Errorf("notes %d, chunks %d, index age %v from built_at %q and the clock %s", h.Notes, h.Chunks, h.IndexAgeSeconds, h.BuiltAt, fixedNow)
				}
			}
			checkModelRoles(t, h)
		})
	}
}

// checkModelRoles: the missing cross-encoder shows as missing, the embedder
// as installed, and a cost stand-in as what it is, never as a cross-encoder.
func checkModelRoles(t *testing.T, h Health) {
	t.Helper()
	standIns := 0
	for _, m := range h.Models {
		switch {
		case m.Name == models.DefaultCrossEncoder:
			if m.Role != "cross-encoder" || m.Installed || m.Loaded || m.Problem == "" {
				t.Errorf("cross-encoder reported as %+v", m)
			}
		case m.Name == models.DefaultEmbedder:
			if m.Role != "embedder" || !m.Installed {
				t.Errorf("embedder reported as %+v", m)
			}
		case m.StandInFor != "":
			standIns++
			if m.Role != models.RoleCostStandIn || m.StandInFor != models.DefaultCrossEncoder {
				t.Errorf("a cost stand-in reported as %+v", m)
			}
		case m.Role == "cross-encoder":
			t.Errorf("%s is listed as a cross-encoder", m.Name)
		}
	}
	if standIns == 0 {
		t.Error("no cost stand-in in the models: the manifest lists two")
	}
}

// TestSearchWithAnotherConfigsModelMissing: with the cross-encoder missing
// and a served configuration that does not use it, a search answers with
// nothing degraded; a configuration that needs it is refused, saying so.
func TestSearchWithAnotherConfigsModelMissing(t *testing.T) {
	reg := degradedRegistry(t)
	s := newServer(t, func(o *Options) { o.Registry = reg })
	url := serveHTTP(t, s)
	c := connectStdio(t, s)
	msg := callErr(t, c, ToolSearch, map[string]any{"query": "idempotency", "config": "needs-rerank"})
	for _, w := range []string{"model not installed", "stage rerank needs ms-marco-MiniLM-L-6-v2 (cross-encoder)", "configuration needs-rerank cannot run"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
	var out searchOut
	callOK(t, c, ToolSearch, map[string]any{"query": "idempotency"}, &out)
	if out.Degraded != nil {
		t.Errorf("a search result's degraded = %q, want none (the served configuration needs no missing model)", out.Degraded)
	}
	if !reg.Loaded(models.DefaultEmbedder) || !getHealthLoaded(t, url) {
		t.Error("the embedder should show as loaded after a search")
	}
}

func getHealthLoaded(t *testing.T, url string) bool {
	for _, m := range getHealth(t, url).Models {
		if m.Name == models.DefaultEmbedder {
			return m.Loaded
		}
	}
	return false
}

// TestServedConfigNeedingMissingModel: a served configuration whose stage
// needs a missing model is degraded, and vault_search refuses to run it
// without that stage; the search result of another configuration says what
// the server cannot do.
func TestServedConfigNeedingMissingModel(t *testing.T) {
	reg := degradedRegistry(t)
	s := newServer(t, func(o *Options) { o.Registry, o.ConfigName = reg, "needs-rerank" })
	want := []string{"rerank: model not installed (ms-marco-MiniLM-L-6-v2: not fetched)"}
	if h := s.Health(context.Background()); h.Status != StatusDegraded || !reflect.DeepEqual(h.DegradedStages, want) {
		t.Errorf("a server configured to rerank without the model: %s %q", h.Status, h.DegradedStages)
	}
	c := connectStdio(t, s)
	msg := callErr(t, c, ToolSearch, map[string]any{"query": "idempotency"})
	if !strings.Contains(msg, "model not installed") {
		t.Errorf("search: %q", msg)
	}
	var out searchOut
	callOK(t, c, ToolSearch, map[string]any{"query": "idempotency", "config": "test-hybrid"}, &out)
	if !reflect.DeepEqual(out.Degraded, want) {
		t.Errorf("a search result must carry the degraded stages: %q", out.Degraded)
	}
}

// TestHealthWithoutModels: with no model installed at all, a keyword-only
// served configuration is degraded only for the tools that need the
// embedder; the configurations that need a model are listed apart, and the
// cost stand-ins are not among the problems.
func TestHealthWithoutModels(t *testing.T) {
	reg, err := models.NewRegistry(t.TempDir(), models.SettingsFrom(os.Getenv).Runtime)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	s := newModelFreeServer(t, func(o *Options) { o.Registry, o.ConfigName = reg, "keyword" })
	h := s.Health(context.Background())
	emb := "stage %s needs " + models.DefaultEmbedder + " (embedder): not fetched"
	wantDegraded := []string{"vault_delta, vault_reindex: model not installed (" + models.DefaultEmbedder + ": not fetched)"}
	wantOthers := []ConfigHealth{
		{Name: "needs-rerank", CannotRun: []string{"stage rerank needs ms-marco-MiniLM-L-6-v2 (cross-encoder): not fetched"}},
		{Name: "test-hybrid", CannotRun: []string{fmt.Sprintf(emb, "vector")}},
		{Name: "vector", CannotRun: []string{fmt.Sprintf(emb, "vector")}},
	}
	if h.Status != StatusDegraded || !reflect.DeepEqual(h.DegradedStages, wantDegraded) || !reflect.DeepEqual(h.OtherConfigurations, wantOthers) {
		t.Errorf("health %s\ndegraded_stages %q\nwant %q\nother_configurations %+v\nwant %+v", h.Status, h.DegradedStages, wantDegraded, h.OtherConfigurations, wantOthers)
	}
	// The served configuration needing the embedder names its stage too.
	s = newModelFreeServer(t, func(o *Options) { o.Registry, o.ConfigName = reg, "test-hybrid" })
	want := []string{"vector, vault_delta, vault_reindex: model not installed (" + models.DefaultEmbedder + ": not fetched)"}
	if h := s.Health(context.Background()); h.Status != StatusDegraded || !reflect.DeepEqual(h.DegradedStages, want) {
		t.Errorf("health %s, degraded_stages %q; want degraded, %q", h.Status, h.DegradedStages, want)
	}
}

func TestModelsLoadOnceForConcurrentFirstCalls(t *testing.T) {
	reg := degradedRegistry(t) // a fresh registry: nothing loaded yet
	s := newServer(t, func(o *Options) { o.Registry = reg })
	c := connectHTTP(t, s)
	var wg sync.WaitGroup
	errs := make(chan string, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, isErr, err := callRaw(c, ToolDelta, map[string]any{"items": []any{map[string]any{"text": "retry budgets"}}})
			if err != nil {
				errs <- err.Error()
			} else if isErr {
				errs <- text
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("delta: %s", e)
	}
	if n := reg.Loads(); n != 1 {
		t.Errorf("6 concurrent first calls loaded the embedder %d times, want 1", n)
	}
}

func TestHTTPGuards(t *testing.T) {
	s := newModelFreeServer(t, nil)
	base := serveHTTP(t, s)
	port := base[strings.LastIndex(base, ":")+1:]
	do := func(method, host, origin string, body io.Reader, size int64) int {
		t.Helper()
		req, err := http.NewRequest(method, base+"/mcp", body)
		if err != nil {
			t.Fatal(err)
		}
		if method == http.MethodGet {
			req.URL.Path = "/health"
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.ContentLength = size
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	ping := func() io.Reader { return strings.NewReader(initMsg) }
	pingLen := int64(len(initMsg))
	cases := []struct {
		name         string
		method, host string
		origin       string
		want         int
	}{
		{"health on 127.0.0.1", "GET", "127.0.0.1:" + port, "", 200},
		{"health on localhost", "GET", "localhost:" + port, "", 200},
		{"health on [::1]", "GET", "[::1]:" + port, "", 200},
		{"foreign host", "GET", "evil.example:" + port, "", 403},
		{"rebinding host without port", "GET", "evil.example", "", 403},
		{"loopback host, wrong port", "GET", "localhost:1", "", 403},
		{"foreign origin", "POST", "", "https://evil.example", 403},
		{"null origin", "POST", "", "null", 403},
		{"origin lookalike", "POST", "", "http://localhost.evil.example", 403},
		{"file origin", "POST", "", "file://", 403},
		{"loopback origin, any port", "POST", "", "http://localhost:5173", 200},
		{"no origin", "POST", "", "", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			var size int64
			if tc.method == "POST" {
				body, size = ping(), pingLen
			}
			if got := do(tc.method, tc.host, tc.origin, body, size); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("oversized body", func(t *testing.T) {
		big := strings.Repeat("x", DefaultMaxBodyBytes+1)
		if got := do("POST", "", "", strings.NewReader(big), int64(len(big))); got != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", got)
		}
	})
	t.Run("oversized chunked body", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			chunk := []byte(strings.Repeat("x", 64<<10))
			for i := 0; i < 20; i++ { // 1.25 MiB, no Content-Length
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
			pw.Close()
		}()
		if got := do("POST", "", "", pr, -1); got != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", got)
		}
	})
}

func TestToken(t *testing.T) {
	s := newModelFreeServer(t, func(o *Options) { o.Token = "s3cret-token" })
	base := serveHTTP(t, s)
	for _, auth := range []string{"", "Bearer wrong", "Basic s3cret-token", "Bearer s3cret-tokenX"} {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("Authorization %q: %s, want 401 with a Bearer challenge", auth, resp.Status)
		}
	}
	c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer s3cret-token"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	initialize(t, c)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil || len(res.Tools) != len(Tools(nil, AllTools())) {
		t.Fatalf("with the token: %v, %v", res, err)
	}
}

func TestNonLoopbackNeedsToken(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:8848"} {
		s := newModelFreeServer(t, func(o *Options) { o.Addr = addr })
		err := s.ListenAndServe(context.Background())
		if !errors.Is(err, ErrNeedToken) || !strings.Contains(err.Error(), "VAULT_RAG_TOKEN") {
			t.Errorf("%s without a token: %v, want a refusal naming VAULT_RAG_TOKEN", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		if err := checkBind(addr, ""); err != nil {
			t.Errorf("%s is loopback: %v", addr, err)
		}
	}

	// With a token it serves on every interface, and wants the token.
	s := newModelFreeServer(t, func(o *Options) { o.Addr, o.Token = "0.0.0.0:0", "tok" })
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen on 0.0.0.0 here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	url := "http://127.0.0.1:" + ln.Addr().String()[strings.LastIndex(ln.Addr().String(), ":")+1:] + "/health"
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("health with the token on 0.0.0.0: %s", resp.Status)
	}

	// Serve checks the listener it is handed too.
	s2 := newModelFreeServer(t, nil)
	ln2, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Serve(context.Background(), ln2); !errors.Is(err, ErrNeedToken) {
		t.Errorf("Serve on 0.0.0.0 without a token: %v", err)
	}
}

// buildBinary builds vault-rag into bin.
func buildBinary(t *testing.T, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	needModels(t)
	build := exec.Command("go", "build", "-tags=sqlite_fts5", "-o", bin, "./cmd/vault-rag")
	build.Dir = fx.repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

// TestStdioBinary runs the real binary over stdio and checks that stdout
// carries protocol messages and nothing else.
func TestStdioBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "vault-rag")
	buildBinary(t, bin)
	data, err := filepath.Abs(fx.reg.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--transport", "stdio", "--watch=false")
	cmd.Dir = t.TempDir() // no .env, no configs/: everything from the environment
	cmd.Env = append(os.Environ(), "VAULT_PATH="+fx.vault, "DB_PATH="+fx.db, "VAULT_RAG_DATA="+data,
		"VAULT_RAG_ROOT="+fx.configs, "VAULT_RAG_CONFIG=test-hybrid")
	serveStdio(t, cmd, "test-hybrid")
}

// TestStdioFromAnotherFolder is how an MCP client starts the server: the
// binary of a built checkout, from the client's own folder, with VAULT_PATH
// the only setting. The data folder (models, ONNX Runtime, the vault's own
// index under indexes/) and configs/ are found beside the binary.
func TestStdioFromAnotherFolder(t *testing.T) {
	co := filepath.Join(t.TempDir(), "checkout")
	buildBinary(t, filepath.Join(co, "bin", "vault-rag"))
	data, err := filepath.Abs(fx.reg.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	// A checkout: the binary built there keeps its data in its data/ folder.
	for _, f := range []string{"go.mod", "models/manifest.json"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(co, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(co, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"models", "lib"} {
		if err := os.MkdirAll(filepath.Join(co, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(data, sub), filepath.Join(co, "data", sub)); err != nil {
			t.Fatal(err)
		}
	}
	// The vault's own index under the data folder: VAULT_PATH alone finds it.
	own, err := index.DefaultPath(filepath.Join(co, "data"), fx.vault)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(own), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vaultfs.CopyFile(fx.db, own, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := vaultfs.CopyTree(filepath.Join(fx.configs, "configs"), filepath.Join(co, "configs")); err != nil {
		t.Fatal(err)
	}
	shipping := "name: shipping\ndescription: the tests' shipping configuration\nstages:\n  - keyword: {limit: 40}\n  - vector: {limit: 40}\n  - rrf: {k: 60, limit: 30}\n"
	if err := os.WriteFile(filepath.Join(co, "configs", "shipping.yaml"), []byte(shipping), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(co, "bin", "vault-rag"), "serve", "--transport", "stdio", "--watch=false")
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "DB_PATH" && k != "ONNXRUNTIME_LIB" && !strings.HasPrefix(k, "VAULT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "VAULT_PATH="+fx.vault)
	serveStdio(t, cmd, "shipping")
}

// serveStdio starts cmd (a `vault-rag serve --transport stdio`), searches
// and reads through it, expecting the configuration wantConfig, and checks
// that stdout carried protocol messages only and that it exits on EOF.
func serveStdio(t *testing.T, cmd *exec.Cmd, wantConfig string) {
	t.Helper()
	srv := mcptest.StartStdio(t, cmd)
	c := srv.Client
	initialize(t, c)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil || len(res.Tools) != len(Tools(nil, nil)) {
		t.Fatalf("tools/list: %v %v\n%s", res, err, srv.Stderr())
	}
	var out searchOut
	callOK(t, c, ToolSearch, map[string]any{"query": "lease expiry storm"}, &out)
	if len(out.Notes) == 0 || out.Config != wantConfig {
		t.Errorf("search over the binary: %+v, want configuration %s", out, wantConfig)
	}
	if msg := callErr(t, c, ToolRead, map[string]any{"path": "../etc/passwd"}); !strings.Contains(msg, `".."`) {
		t.Errorf("read refusal: %q", msg)
	}
	if err := srv.Close(); err != nil {
		t.Error(err)
	}
	if !strings.Contains(srv.Stderr(), "serving MCP over stdio") {
		t.Errorf("logs should go to stderr; stderr was %q", srv.Stderr())
	}
}

// TestHealthLanguage: /health says which script the vault is written in and,
// when the index's embedder was not trained on it, warns — without changing
// the status: every stage still runs.
func TestHealthLanguage(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, note, script, lang string
		warn                     bool
	}{
		{"English vault", "# Leases\n\nA lease expires when its holder stops renewing it in time, and the server should check which node holds it.\n", "Latin", "English", false},
		{"Russian vault", "# Аренда\n\nАренда истекает, когда держатель перестаёт её продлевать вовремя, и это нужно знать.\n", "Cyrillic", "Russian", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vault := t.TempDir()
			vaulttest.WriteTree(t, vault, map[string]string{"a.md": tc.note, "b.md": tc.note}, fixedNow)
			db := filepath.Join(t.TempDir(), "vault.db")
			// The bag-of-words embedder under the English model's name: the
			// manifest says which scripts that model reads.
			emb := bow.Embedder{ModelName: models.DefaultEmbedder}
			if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: db}); err != nil {
				t.Fatal(err)
			}
			s := newModelFreeServer(t, func(o *Options) { o.VaultPath, o.DBPath, o.ConfigName = vault, db, "keyword" })
			h := s.Health(ctx)
			if h.Language == nil || h.Language.Script != tc.script || h.Language.Embedder != models.DefaultEmbedder || h.Language.Share < 0.9 {
				t.Fatalf("language %+v, want %s by %s", h.Language, tc.script, models.DefaultEmbedder)
			}
			if h.Language.Name != tc.lang {
				t.Errorf("language name %q, want %q (as the instructions name it)", h.Language.Name, tc.lang)
			}
			if got := h.Language.Warning != ""; got != tc.warn || (tc.warn && !strings.Contains(h.Language.Warning, "Cyrillic")) {
				t.Errorf("warning %q, want one: %v", h.Language.Warning, tc.warn)
			}
			if h.Status == StatusError {
				t.Errorf("status %s: the language must not make the index unreadable", h.Status)
			}
		})
	}
}
