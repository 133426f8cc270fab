package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/models/modeltest"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

var update = flag.Bool("update", false, "rewrite testdata/frozen.json from the current results")

const frozenPath = "testdata/frozen.json"

const updateCommand = `CGO_ENABLED=1 CGO_LDFLAGS="-L$PWD/data/lib" go test -tags=sqlite_fts5 ./pipeline -run TestFrozenBaseline -update`

// frozenConfigs are the configurations the baseline records: those that run
// on the embedder alone. hybrid-recency is there so the fixed clock matters.
var frozenConfigs = []string{"keyword", "vector", "hybrid", "shipping", "hybrid-recency"}

// frozenQueries are the baseline's queries; a scoped one carries its scope.
var frozenQueries = []struct {
	text  string
	scope string
}{
	{"why did writes get slow in the middle of the night", ""},
	{"FERR-4102", ""},
	{"a task ran twice because another worker picked it up while the first was still busy", ""},
	{"lease_ttl_ms", ""},
	{"what went wrong overnight", "personal/"},
	{"how do I rotate the pager", ""},
	{"retention deleted data from the wrong shard", ""},
	{"feeding a sourdough starter", ""},
}

// frozenNow is the baseline's clock.
var frozenNow = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

const frozenK = 10

type fingerprint struct {
	Notes       int    `json:"notes"`
	Chunks      int    `json:"chunks"`
	ContentHash string `json:"content_hash"` // the index's meta fingerprint: every note's path and content hash
	// CPU is the processor model: ONNX Runtime picks kernels by instruction
	// set, and another CPU may move a score in its last digits.
	CPU string `json:"cpu"`
}

// cpuModel reads the processor's model name ("" where /proc/cpuinfo is absent).
func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

type frozen struct {
	HowToUpdate string                         `json:"how_to_update"`
	Now         string                         `json:"now"`
	K           int                            `json:"k"`
	Fingerprint fingerprint                    `json:"fingerprint"`
	Results     map[string]map[string][]string `json:"results"` // config → query → "score path", best first
}

var (
	realOnce sync.Once
	realEnvV *stages.Env
	realErr  error
)

// realEnv indexes the demo vault with the real embedder, once per process.
func realEnv(t *testing.T) *stages.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("indexes the demo vault with the real model (~25 s); skipped with -short")
	}
	realOnce.Do(func() {
		reg, err := models.NewRegistry(models.DataDir(), models.RuntimeLibrary())
		if realErr = err; err != nil {
			return
		}
		atExit(reg.Close)
		emb, err := reg.Embedder(context.Background(), "")
		if realErr = err; err != nil {
			return
		}
		db, err := openIndex(context.Background(), emb, filepath.Join(repoRoot, "vault"), filepath.Join(sharedDir, "demo-real.db"))
		if realErr = err; err != nil {
			return
		}
		atExit(func() { db.Close() })
		realEnvV = &stages.Env{DB: db, Models: pipeline.RegistryModels{R: reg}, Passages: stages.NewVectorCache(20000)}
	})
	if errors.Is(realErr, models.ErrNotInstalled) {
		modeltest.Missing(t, "the real embedder is not installed (run `make setup`): %v", realErr)
	}
	if realErr != nil {
		t.Fatalf("index the demo vault with the real embedder: %v", realErr)
	}
	return realEnvV
}

func queryKey(text, scope string) string {
	if scope == "" {
		return text
	}
	return fmt.Sprintf("%s [path: %s]", text, scope)
}

// runFrozen runs every frozen query through every frozen configuration. A
// configuration whose model is not installed here is left out and named.
func runFrozen(t *testing.T, env *stages.Env) (map[string]map[string][]string, []string) {
	t.Helper()
	out := map[string]map[string][]string{}
	var missing []string
	for _, name := range frozenConfigs {
		cfg := config(t, name)
		byQuery := map[string][]string{}
		for _, q := range frozenQueries {
			res, _, err := pipeline.Run(context.Background(), env, cfg, pipeline.Request{
				Text: q.text, Filter: index.Filter{PathPrefix: q.scope}, Now: frozenNow, K: frozenK,
			})
			if errors.Is(err, models.ErrNotInstalled) {
				missing = append(missing, name)
				byQuery = nil
				break
			}
			if err != nil {
				t.Fatalf("%s: %q: %v", name, q.text, err)
			}
			lines := []string{}
			for _, n := range res.Notes {
				lines = append(lines, fmt.Sprintf("%.6f %s", n.Score, n.Path))
			}
			byQuery[queryKey(q.text, q.scope)] = lines
		}
		if byQuery != nil {
			out[name] = byQuery
		}
	}
	return out, missing
}

func currentFingerprint(t *testing.T, db *index.DB) fingerprint {
	t.Helper()
	s, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return fingerprint{Notes: s.Notes, Chunks: s.Chunks, ContentHash: db.Meta("fingerprint"), CPU: cpuModel()}
}

func encodeFrozen(f frozen) []byte {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// TestFrozenBaseline compares search results on the demo vault, with the real
// embedder, to testdata/frozen.json, byte for byte, while the vault is the one
// the fixture was made from (same note and chunk counts, same content hash).
// Once the vault changes the fixture is stale: the test then checks that two
// runs agree exactly, says the fixture is stale, and passes. -update rewrites
// the fixture.
func TestFrozenBaseline(t *testing.T) {
	env := realEnv(t)
	fp := currentFingerprint(t, env.DB)
	results, missing := runFrozen(t, env)
	got := frozen{
		HowToUpdate: "run from the repository root: " + updateCommand,
		Now:         frozenNow.Format(time.RFC3339),
		K:           frozenK,
		Fingerprint: fp,
		Results:     results,
	}
	current := encodeFrozen(got)

	if *update {
		if len(missing) > 0 {
			t.Fatalf("not updating: configurations %v need models not installed here", missing)
		}
		if err := os.MkdirAll(filepath.Dir(frozenPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(frozenPath, current, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d configurations × %d queries, fingerprint %+v", frozenPath, len(results), len(frozenQueries), fp)
		return
	}

	raw, err := os.ReadFile(frozenPath)
	var want frozen
	if err == nil {
		err = json.Unmarshal(raw, &want)
	}
	if err != nil || want.Fingerprint != fp {
		why := fmt.Sprintf("the vault or the CPU changed: fixture %+v, now %+v", want.Fingerprint, fp)
		if err != nil {
			why = fmt.Sprintf("no usable fixture (%v)", err)
		}
		t.Logf("STALE FIXTURE: %s is not compared (%s); checking that two runs agree instead. Update it with:\n\t%s", frozenPath, why, updateCommand)
		again, _ := runFrozen(t, env)
		if a, b := encodeFrozen(frozen{Results: results}), encodeFrozen(frozen{Results: again}); !bytes.Equal(a, b) {
			t.Errorf("two runs over one index differ:\n%s", diffResults(results, again))
		}
		return
	}

	if len(missing) > 0 {
		for _, name := range missing {
			t.Logf("configuration %s needs a model not installed here: not compared", name)
			delete(want.Results, name)
		}
	}
	if d := diffResults(want.Results, results); d != "" {
		t.Errorf("results differ from %s (if the change is intended, update it with %s):\n%s", frozenPath, updateCommand, d)
	}
	if len(missing) == 0 && !bytes.Equal(raw, current) {
		t.Errorf("%s is not byte-identical to the current results (formatting or metadata changed); update it with %s", frozenPath, updateCommand)
	}
}

// diffResults lists, per configuration and query, what changed.
func diffResults(want, got map[string]map[string][]string) string {
	var b strings.Builder
	names := map[string]bool{}
	for k := range want {
		names[k] = true
	}
	for k := range got {
		names[k] = true
	}
	var sorted []string
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		w, g := want[name], got[name]
		if w == nil || g == nil {
			fmt.Fprintf(&b, "%s: in one result set only\n", name)
			continue
		}
		queries := map[string]bool{}
		for q := range w {
			queries[q] = true
		}
		for q := range g {
			queries[q] = true
		}
		var qs []string
		for q := range queries {
			qs = append(qs, q)
		}
		sort.Strings(qs)
		for _, q := range qs {
			wl, gl := strings.Join(w[q], "\n    "), strings.Join(g[q], "\n    ")
			if wl != gl {
				fmt.Fprintf(&b, "%s / %q:\n  want:\n    %s\n  got:\n    %s\n", name, q, wl, gl)
			}
		}
	}
	return b.String()
}

// TestRealModelScope: on the demo vault with the real embedder, a scoped
// vector search finds every note in scope and reports how it ended.
func TestRealModelScope(t *testing.T) {
	env := realEnv(t)
	ctx := context.Background()
	scope := index.Filter{PathPrefix: "personal/"}
	rows, total, err := env.DB.List(ctx, scope, 0, 100)
	if err != nil || total == 0 {
		t.Fatalf("no personal notes in the demo vault: %v", err)
	}
	res, _, err := pipeline.Run(ctx, env, config(t, "vector"), pipeline.Request{Text: "what went wrong overnight", Filter: scope, Now: frozenNow})
	if err != nil {
		t.Fatal(err)
	}
	if info := stageInfo(t, res, "vector"); !strings.HasPrefix(info, stages.OutcomeFilled+":") {
		t.Errorf("vector info %q, want filled", info)
	}
	var want []string
	for _, r := range rows {
		want = append(want, r.Path)
	}
	if got := sortedPaths(res); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("notes %v, want every personal note %v", got, want)
	}
}
