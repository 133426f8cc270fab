package gate_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/eval/gate"
	"github.com/vault-rag/vault-rag/eval/report"
	"github.com/vault-rag/vault-rag/internal/modeltest"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// recorder wraps the real gate embedder. It remembers every vector the model
// computed, keyed by text, so later builds of the same texts cost nothing; it
// can stand in for another CPU by adding seeded noise of a given size to each
// vector (a text gets the same noise every time, as a CPU would give it the
// same vector), and for another chunking rule by counting every text's tokens
// scale times over (sections split at a fraction of the model's window).
type recorder struct {
	inner *models.Embedder
	memo  *sync.Map // text → []float32, shared by the variants of one test
	noise float64   // σ of the Gaussian noise added per component, before renormalising
	scale int       // token count multiplier (1: the model's own)
}

func (r recorder) Name() string { return r.inner.Name() }
func (r recorder) Dim() int     { return r.inner.Dim() }
func (r recorder) CountTokens(text string) int {
	return r.inner.CountTokens(text) * max(1, r.scale)
}

func (r recorder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var todo []string
	var at []int
	for i, t := range texts {
		if v, ok := r.memo.Load("p\x00" + t); ok {
			out[i] = r.perturb(t, v.([]float32))
			continue
		}
		todo, at = append(todo, t), append(at, i)
	}
	if len(todo) > 0 {
		vs, err := r.inner.EmbedPassages(ctx, todo)
		if err != nil {
			return nil, err
		}
		for j, v := range vs {
			r.memo.Store("p\x00"+todo[j], v)
			out[at[j]] = r.perturb(todo[j], v)
		}
	}
	return out, nil
}

func (r recorder) EmbedQuery(ctx context.Context, q string) ([]float32, error) {
	if v, ok := r.memo.Load("q\x00" + q); ok {
		return r.perturb(q, v.([]float32)), nil
	}
	v, err := r.inner.EmbedQuery(ctx, q)
	if err != nil {
		return nil, err
	}
	r.memo.Store("q\x00"+q, v)
	return r.perturb(q, v), nil
}

// perturb returns v plus noise seeded by the text, renormalised; v itself
// when the recorder adds none.
func (r recorder) perturb(text string, v []float32) []float32 {
	if r.noise == 0 {
		return v
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	rng := rand.New(rand.NewPCG(h.Sum64(), 7))
	out := make([]float32, len(v))
	var norm float64
	for i, x := range v {
		y := float64(x) + r.noise*rng.NormFloat64()
		out[i] = float32(y)
		norm += y * y
	}
	norm = math.Sqrt(norm)
	for i := range out {
		out[i] = float32(float64(out[i]) / norm)
	}
	return out
}

// recorderModels gives the stages the recorder as their embedder.
type recorderModels struct{ r recorder }

func (m recorderModels) Embedder(context.Context, string) (stages.Embedder, error) { return m.r, nil }
func (m recorderModels) CrossEncoder(context.Context, string) (stages.PairScorer, error) {
	return nil, fmt.Errorf("%w: no cross-encoder in this test", models.ErrNotInstalled)
}

// repoRoot holds configs/ and the demo vault (tests run in eval/gate/).
const repoRoot = "../.."

// gateConfigs are the shipped configurations the mutation test runs.
func gateConfigs(t *testing.T) []*pipeline.Config {
	t.Helper()
	var out []*pipeline.Config
	for _, name := range []string{"keyword", "vector", "hybrid", "shipping"} {
		c, err := pipeline.Find(repoRoot, name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// mutate returns the configurations with one configuration's YAML text
// edited (old → new), parsed again under the same file name.
func mutate(t *testing.T, cfgs []*pipeline.Config, name, old, new string) []*pipeline.Config {
	t.Helper()
	out := append([]*pipeline.Config(nil), cfgs...)
	for i, c := range out {
		if c.Name != name {
			continue
		}
		raw, err := os.ReadFile(c.File)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), old) {
			t.Fatalf("%s holds no %q to mutate", c.File, old)
		}
		m, err := pipeline.Parse(c.File, []byte(strings.Replace(string(raw), old, new, 1)))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = m
		return out
	}
	t.Fatalf("no configuration %s", name)
	return nil
}

// TestGateMutations runs the regression gate (a baseline of the demo vault
// with the real gate embedder, then gate.DiffBaseline) against real changes and
// against another CPU. Each change must fail it: an RRF k, a title weight, a
// chunking rule, one edited note. Another CPU alone, simulated by noise five
// times the fp32 drift measured between an AMD EPYC (AVX2) and an Intel Xeon
// (AVX-512/AMX) (max 7e-7 on a cosine, docs/reproducibility.md), must pass it.
func TestGateMutations(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes the demo vault with the real fp32 model; skipped with -short")
	}
	ctx := context.Background()
	settings := models.SettingsFrom(os.Getenv)
	reg, err := models.NewRegistry(settings.DataDir, settings.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	emb, err := reg.Embedder(ctx, reg.Manifest().GateModel(models.DefaultEmbedder))
	if errors.Is(err, models.ErrNotInstalled) {
		modeltest.Missing(t, "the gate embedder is not installed (run `make setup`): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	ds, err := eval.LoadDemo(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	// The passage judgements too: answer@1 and the answer's bytes are gated
	// per query, and must hold on another CPU as the ranks do.
	if ds.Answers, err = eval.LoadAnswers(eval.AnswersPath(repoRoot, ds.Name), ds); err != nil || ds.Answers == nil {
		t.Fatalf("the demo's passage judgements: %v", err)
	}
	memo := &sync.Map{}
	run := func(ds *eval.Dataset, cfgs []*pipeline.Config, r recorder) *eval.DatasetRun {
		t.Helper()
		r.inner, r.memo = emb, memo
		// A work folder of its own: no index or embedding cache is shared
		// between variants, so each builds from its own embedder.
		res, err := eval.Run(ctx, ds, eval.Options{Configs: cfgs, WorkDir: t.TempDir(), IndexWith: r, Models: recorderModels{r}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	cfgs := gateConfigs(t)
	baseRun := run(ds, cfgs, recorder{})
	base := gate.BaselineOf(baseRun)
	if again := gate.DiffBaseline(base, gate.BaselineOf(run(ds, cfgs, recorder{}))); again.Failed() || len(again.Flips) > 0 {
		t.Fatalf("the same run twice differs: %q %q", report.FindingLines(again.Changes), report.FindingLines(again.Flips))
	}

	edited := t.TempDir()
	if err := vaultfs.CopyTree(ds.VaultPath, edited); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(edited, "knowledge", "engineering", "idempotency.md")
	raw, err := os.ReadFile(note)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(note, append(raw, "\nAlso see the scheduler's lease notes.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	editedDS := *ds
	editedDS.VaultPath = edited

	for _, tc := range []struct {
		name string
		ds   *eval.Dataset
		cfgs []*pipeline.Config
		r    recorder
	}{
		{"RRF k 60 → 30", ds, mutate(t, cfgs, "shipping", "k: 60", "k: 30"), recorder{}},
		{"title weight 3 → 1", ds, mutate(t, cfgs, "shipping", "title_weight: 3", "title_weight: 1"), recorder{}},
		{"chunking: sections split at a quarter of the window", ds, cfgs, recorder{scale: 4}},
		{"one note edited", &editedDS, cfgs, recorder{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := run(tc.ds, tc.cfgs, tc.r)
			d := gate.DiffBaseline(base, gate.BaselineOf(cur))
			if !d.Failed() {
				t.Fatalf("the gate passed a real change (%d compared, %d flipped)", d.Compared, d.Flipped)
			}
			t.Logf("failed as it should, %d differences, first: %s", len(d.Changes), report.FindingLine(d.Changes[0]))
		})
	}

	t.Run("another CPU alone", func(t *testing.T) {
		const sigma = 1e-6
		cur := run(ds, cfgs, recorder{noise: sigma})
		drift := maxScoreDrift(baseRun, cur, "vector")
		if drift == 0 || drift > 2e-5 {
			t.Fatalf("the simulated CPU moved vector scores by %.2g; want a drift of a few 1e-6", drift)
		}
		d := gate.DiffBaseline(base, gate.BaselineOf(cur))
		if d.Failed() {
			t.Fatalf("the gate failed on noise of %.0g (vector scores moved by at most %.2g): %q", sigma, drift, report.FindingLines(d.Changes))
		}
		t.Logf("passed: vector scores moved by up to %.2g, %d of %d results waved through as near-tie flips", drift, d.Flipped, d.Compared)
	})
}

// maxScoreDrift is the largest difference between two runs' final scores of
// one configuration, over the notes both ranked at the same place.
func maxScoreDrift(a, b *eval.DatasetRun, config string) float64 {
	find := func(r *eval.DatasetRun) *eval.ConfigRun {
		for _, c := range r.Configs {
			if c.Name == config {
				return c
			}
		}
		return nil
	}
	ca, cb := find(a), find(b)
	drift := 0.0
	for i, qa := range ca.Queries {
		qb := cb.Queries[i]
		for j := range min(len(qa.Ranked), len(qb.Ranked)) {
			if qa.Ranked[j] == qb.Ranked[j] {
				drift = math.Max(drift, math.Abs(qa.Scores[j]-qb.Scores[j]))
			}
		}
	}
	return drift
}
