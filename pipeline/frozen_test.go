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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/eval/gate"
	"github.com/vault-rag/vault-rag/eval/report"
	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/modeltest"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/models"
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

// fingerprint is what the fixture's numbers depend on. The first five fields
// say what was searched: when one differs the fixture is of another index and
// the test fails until it is updated. The last two say how the numbers were
// computed: another ONNX Runtime or another instruction set picks other
// kernels, which move scores in their last digits, so the results are then
// compared within the configuration's tolerance (pipeline.Tolerance) and the
// test says so.
type fingerprint struct {
	Notes       int    `json:"notes"`
	Chunks      int    `json:"chunks"`
	ContentHash string `json:"content_hash"` // the index's meta fingerprint: every note's path and content hash
	Embedder    string `json:"embedder"`
	ModelSHA256 string `json:"model_sha256"` // of the embedder's model.onnx
	ONNXRuntime string `json:"onnxruntime"`
	ISA         string `json:"isa"` // models.ISA(): the CPU extensions ONNX Runtime's kernels depend on
}

// differs names the fields in which two fingerprints differ, split three
// ways: those that make the fixture incomparable (another corpus or another
// model: its numbers are of something else), those that are a change of the
// code (the same notes chunked otherwise), and those that only move the last
// digits (other kernels).
func (f fingerprint) differs(o fingerprint) (incomparable, changed, kernels []string) {
	add := func(list *[]string, name string, a, b any) {
		if a != b {
			*list = append(*list, fmt.Sprintf("%s (fixture %v, here %v)", name, a, b))
		}
	}
	add(&incomparable, "notes", f.Notes, o.Notes)
	add(&incomparable, "content hash", f.ContentHash, o.ContentHash)
	add(&incomparable, "embedder", f.Embedder, o.Embedder)
	add(&incomparable, "model sha256", f.ModelSHA256, o.ModelSHA256)
	add(&changed, "chunks", f.Chunks, o.Chunks)
	add(&kernels, "ONNX Runtime", f.ONNXRuntime, o.ONNXRuntime)
	add(&kernels, "instruction set", f.ISA, o.ISA)
	return incomparable, changed, kernels
}

// frozenQuery is one query's top k ("score path", best first) and the notes
// that took part in a near-tie at any stage of that run.
type frozenQuery struct {
	Ranked   []string `json:"ranked"`
	NearTies []string `json:"near_ties,omitempty"`
}

type frozen struct {
	HowToUpdate string                            `json:"how_to_update"`
	Now         string                            `json:"now"`
	K           int                               `json:"k"`
	Tolerance   float64                           `json:"tolerance"`
	Fingerprint fingerprint                       `json:"fingerprint"`
	Results     map[string]map[string]frozenQuery `json:"results"` // config → query → ranking
}

var (
	realOnce sync.Once
	realEnvV *stages.Env
	realErr  error
	realFP   fingerprint
	realReg  *models.Registry
)

// realEnv indexes the demo vault with the real embedder, once per process.
func realEnv(t *testing.T) *stages.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("indexes the demo vault with the real model (~25 s); skipped with -short")
	}
	realOnce.Do(func() {
		settings := models.SettingsFrom(os.Getenv)
		reg, err := models.NewRegistry(settings.DataDir, settings.Runtime)
		if realErr = err; err != nil {
			return
		}
		atExit(reg.Close)
		realReg = reg
		// The gate's embedder: the fp32 original of the default one, whose
		// scores agree across CPUs (docs/reproducibility.md).
		emb, err := reg.Embedder(context.Background(), reg.Manifest().GateModel(models.DefaultEmbedder))
		if realErr = err; err != nil {
			return
		}
		db, err := stagetest.Open(context.Background(), emb, filepath.Join(repoRoot, "vault"), filepath.Join(sharedDir, "demo-real.db"))
		if realErr = err; err != nil {
			return
		}
		atExit(func() { db.Close() })
		realEnvV = pipeline.NewEnv(db, reg)
		spec, _ := reg.Manifest().Lookup(emb.Name())
		realFP = fingerprint{
			Embedder:    emb.Name(),
			ModelSHA256: models.Check(reg.DataDir(), spec).SHA256["model.onnx"],
			ONNXRuntime: models.RuntimeVersion(),
			ISA:         models.ISA(),
		}
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
func runFrozen(t *testing.T, env *stages.Env) (map[string]map[string]frozenQuery, []string) {
	t.Helper()
	ctx := context.Background()
	out := map[string]map[string]frozenQuery{}
	var missing []string
	for _, name := range frozenConfigs {
		cfg := config(t, name)
		byQuery := map[string]frozenQuery{}
		for _, q := range frozenQueries {
			res, st, err := pipeline.Run(ctx, env, cfg, pipeline.Request{
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
			fq := frozenQuery{Ranked: []string{}}
			for _, n := range res.Notes {
				fq.Ranked = append(fq.Ranked, fmt.Sprintf("%.6f %s", n.Score, n.Path))
			}
			if fq.NearTies, err = pipeline.TiedPaths(ctx, stagetest.DB(t, env), pipeline.NearTies(st.Steps, tolerance(t, cfg, env))); err != nil {
				t.Fatal(err)
			}
			byQuery[queryKey(q.text, q.scope)] = fq
		}
		if byQuery != nil {
			out[name] = byQuery
		}
	}
	return out, missing
}

// tolerance is the configuration's score tolerance with this index.
func tolerance(t *testing.T, cfg *pipeline.Config, env *stages.Env) float64 {
	t.Helper()
	return pipeline.Tolerance(cfg, realReg.Manifest(), stagetest.DB(t, env).Embedder())
}

func currentFingerprint(t *testing.T, db *index.DB) fingerprint {
	t.Helper()
	s, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fp := realFP
	fp.Notes, fp.Chunks, fp.ContentHash = s.Notes, s.Chunks, db.Meta("fingerprint")
	return fp
}

func encodeFrozen(f frozen) []byte {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// parseScored reads "score path" lines back.
func parseScored(t *testing.T, lines []string) []gate.Scored {
	t.Helper()
	var out []gate.Scored
	for _, l := range lines {
		score, path, ok := strings.Cut(l, " ")
		f, err := strconv.ParseFloat(score, 64)
		if !ok || err != nil {
			t.Fatalf("fixture line %q is not \"score path\"", l)
		}
		out = append(out, gate.Scored{Path: path, Score: f})
	}
	return out
}

// TestFrozenBaseline compares search results on the demo vault, with the real
// embedder, to testdata/frozen.json. The fixture must be of this index (same
// notes, content, embedder and model file), else the test fails and says what
// differs. Results are compared by gate.CompareRanked: scores within
// the configuration's tolerance (pipeline.Tolerance), order exact except among notes that took part in a
// near-tie in both runs (reported as flips, not failures) — so the test holds
// on any CPU of the kind and still catches a real change. Where nothing moved
// at all, the file must also be byte-identical to what -update would write.
func TestFrozenBaseline(t *testing.T) {
	env := realEnv(t)
	fp := currentFingerprint(t, stagetest.DB(t, env))
	results, missing := runFrozen(t, env)
	got := frozen{
		HowToUpdate: "run from the repository root: " + updateCommand,
		Now:         frozenNow.Format(time.RFC3339),
		K:           frozenK,
		Tolerance:   tolerance(t, config(t, "vector"), env),
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
	if err != nil {
		t.Fatalf("no usable fixture %s (%v); write it with %s", frozenPath, err, updateCommand)
	}
	incomparable, changed, kernels := want.Fingerprint.differs(fp)
	if len(incomparable) > 0 {
		// Another corpus or another model: the fixture's numbers are of
		// something else. Say so, and check what still holds: two runs of
		// this code on this index agree byte for byte.
		again, _ := runFrozen(t, env)
		if twice := encodeFrozen(frozen{Results: again}); !bytes.Equal(twice, encodeFrozen(frozen{Results: results})) {
			t.Errorf("two runs on the same index differ: the pipeline is not deterministic")
		}
		t.Logf("%s cannot be compared: it is of another corpus or model (%s); checked instead that two runs agree. Update it with %s", frozenPath, strings.Join(incomparable, ", "), updateCommand)
		return
	}
	if len(changed) > 0 {
		t.Errorf("the same notes were chunked otherwise (%s): a change of the code; if intended, update the fixture with %s", strings.Join(changed, ", "), updateCommand)
	}
	if len(kernels) > 0 {
		t.Logf("the fixture was made with other kernels: %s; scores are compared within each configuration's tolerance (%g for the embedder)", strings.Join(kernels, ", "), got.Tolerance)
	}
	for _, name := range missing {
		t.Logf("configuration %s needs a model not installed here: not compared", name)
		delete(want.Results, name)
	}
	exact := len(missing) == 0 && len(kernels) == 0
	maxDrift := 0.0
	compared, flipped := 0, 0
	for _, name := range sortedNames(want.Results, results) {
		w, g := want.Results[name], results[name]
		if w == nil || g == nil {
			t.Errorf("%s: in the fixture or in this run only", name)
			exact = false
			continue
		}
		for _, q := range sortedNames(w, g) {
			wq, gq := w[q], g[q]
			tied := gate.NearTiedInBoth(wq.NearTies, gq.NearTies)
			c := gate.CompareRanked(parseScored(t, wq.Ranked), parseScored(t, gq.Ranked), tied, tolerance(t, config(t, name), env))
			maxDrift = max(maxDrift, c.Drift)
			compared += len(wq.Ranked)
			flipped += len(c.Flips)
			if len(c.Changes) > 0 || len(c.Flips) > 0 || c.Drift > 0 {
				exact = false
			}
			for _, f := range report.FindingLines(c.Flips) {
				t.Logf("%s / %q: near-tie flip, allowed: %s", name, q, f)
			}
			if len(c.Changes) > 0 {
				why := "same kernels, so this is a change in the code or the data"
				if len(kernels) > 0 {
					why = "beyond what other kernels explain (" + strings.Join(kernels, ", ") + ")"
				}
				t.Errorf("%s / %q differs from %s, %s:\n  %s\n  want:\n    %s\n  got:\n    %s\nIf the change is intended, update it with %s",
					name, q, frozenPath, why, strings.Join(report.FindingLines(c.Changes), "\n  "),
					strings.Join(wq.Ranked, "\n    "), strings.Join(gq.Ranked, "\n    "), updateCommand)
			}
		}
	}
	t.Logf("largest score difference from the fixture: %.2g (embedder tolerance %g); %d of %d ranked entries moved by near-tie flips", maxDrift, got.Tolerance, flipped, compared)
	if flipped > gate.MaxFlipped(compared) {
		t.Errorf("%d of %d ranked entries moved by near-tie flips, more than %g %%: a change, not another CPU's rounding", flipped, compared, 100*gate.MaxFlippedShare)
	}
	if exact && !bytes.Equal(raw, current) {
		t.Errorf("%s is not byte-identical to the current results (formatting or metadata changed); update it with %s", frozenPath, updateCommand)
	}
}

// sortedNames is the sorted union of two maps' keys.
func sortedNames[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestRealModelScope: on the demo vault with the real embedder, a scoped
// vector search finds every note in scope and reports how it ended.
func TestRealModelScope(t *testing.T) {
	env := realEnv(t)
	ctx := context.Background()
	scope := index.Filter{PathPrefix: "personal/"}
	rows, total, err := stagetest.DB(t, env).List(ctx, scope, 0, 100)
	if err != nil || total == 0 {
		t.Fatalf("no personal notes in the demo vault: %v", err)
	}
	res, _, err := pipeline.Run(ctx, env, config(t, "vector"), pipeline.Request{Text: "what went wrong overnight", Filter: scope, Now: frozenNow})
	if err != nil {
		t.Fatal(err)
	}
	if got := stageOutcome(t, res, "vector"); got != index.ScopeFilled {
		t.Errorf("vector outcome %q (%s), want filled", got, stageInfo(t, res, "vector"))
	}
	var want []string
	for _, r := range rows {
		want = append(want, r.Path)
	}
	if got := sortedPaths(res); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("notes %v, want every personal note %v", got, want)
	}
}
