package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/gen"
	"github.com/vault-rag/vault-rag/models"
)

// Options say what to measure.
type Options struct {
	Root      string         // the repository: vault/, configs/, eval/
	DataDir   string         // where models are and benchmark vaults and indexes go
	Runtime   models.Runtime // the ONNX Runtime library and its threads
	Cranfield string         // a BEIR folder, or "" to skip
	Recall    []string       // more BEIR folders, indexed with the real embedder only for the binary-search recall check
	Sizes     []int          // generated vault sizes, e.g. 3000, 30000
	Queries   int            // queries per dataset for latency (default 50)
	Reps      int            // repetitions of the reindex measurements (default 3)
	Prepare   bool           // only generate and index the scale vaults (cached for later runs)
	Only      string         // one section alone (its name in sections), "" for all
	Embedder  string         // the model of the throughput, latency, first-answer and recall sections ("" for the default)
	// Throughput is the vault the throughput section embeds beside the
	// demo vault; it should hold 3,000 chunks or more for the figure to
	// mean something ("": the demo vault alone).
	Throughput string
	// FirstAnswer are vaults whose first build is timed to its first
	// answer and to its end; the largest of Sizes is timed to its first
	// answer, its end projected.
	FirstAnswer []string
	// RerankQueries is how many demo queries the rerank section times per
	// passage and scorer (default 10).
	RerankQueries int
	// RecallNotes, above 0, is the size of a generated vault embedded for
	// real (once, kept for later runs) to measure the binary first pass's
	// recall at scale, per oversampling factor (the recall section).
	RecallNotes int
	Log         func(string)
}

// Figure is one measured number.
type Figure struct {
	Section string  `json:"section"`
	Name    string  `json:"name"`
	Dataset string  `json:"dataset"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	Note    string  `json:"note,omitempty"`
}

// Results are every figure of a run, with the machine they came from.
type Results struct {
	Machine string    `json:"machine"`
	Started time.Time `json:"started"`
	Figures []Figure  `json:"figures"`
}

func (r *Results) add(section, name, dataset string, value float64, unit, note string) {
	r.Figures = append(r.Figures, Figure{section, name, dataset, value, unit, note})
}

// Machine describes this machine in one line, with the ONNX Runtime threads
// the models run on.
func Machine(threads int) string {
	cpu := ""
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		fmt.Sscanf(strings.SplitN(string(raw), "\n", 2)[0], "MemTotal: %d kB", &kb)
		mem = fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
	}
	return fmt.Sprintf("%d cores (%s)%s, %s/%s, ONNX Runtime threads %d", runtime.NumCPU(), cpu, mem, runtime.GOOS, runtime.GOARCH, threads)
}

// section is one part of a run: the name --only gives it, what it measures
// (for --only's help) and the method that measures it.
type section struct {
	name, about string
	run         func(*runner, context.Context) error
}

// sections are the parts of a run, in a full run's order: the reindex and
// first-answer sections load their models themselves (a cold load is part of
// what they time); the others share the runner's registry, and rerank times
// on the demo index latency built.
var sections = []section{
	{"listing", "the bytes of the MCP server's instructions and tools/list", (*runner).listing},
	{"reindex", "the demo vault's reindex times, per embedder", (*runner).reindex},
	{"first-answer", "a first build's time to its first answer", (*runner).firstAnswers},
	{"throughput", "the embedding rate, raw and through the indexer", (*runner).throughput},
	{"latency", "query latency and index size", (*runner).latency},
	{"rerank", "the rerank cost on the demo vault", (*runner).rerank},
	{"recall", "the binary vector search's recall at scale, with --recall-notes", (*runner).recallAtScale},
}

// Sections are the names --only takes, in a full run's order.
func Sections() []string {
	out := make([]string, len(sections))
	for i, s := range sections {
		out[i] = s.name
	}
	return out
}

// SectionHelp lists the sections with what each measures, for --only's help.
func SectionHelp() string {
	parts := make([]string, len(sections))
	for i, s := range sections {
		parts[i] = fmt.Sprintf("%s (%s)", s.name, s.about)
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// chosen is what a run with --only set to only takes: every section for "".
func chosen(only string) ([]section, error) {
	if only == "" {
		return sections, nil
	}
	for _, s := range sections {
		if s.name == only {
			return []section{s}, nil
		}
	}
	return nil, fmt.Errorf("bench: no section %q (%s)", only, strings.Join(Sections(), ", "))
}

// runner is one run: its options, where it works and what it has measured.
type runner struct {
	o     Options
	res   *Results
	work  string // data/bench: the reindex, throughput and scale indexes
	vault string // the demo vault
	logf  func(string, ...any)
	// full is set when every section runs: latency then also checks the
	// binary vector search's recall on each dataset it indexes, and on the
	// recall-only BEIR folders.
	full bool

	reg    *models.Registry // the registry the sections share, opened on first use
	emb    *models.Embedder // o.Embedder, loaded on first use
	demoDB string           // the demo index latency built, "" until it has
}

// Run takes every measurement of the section o.Only names, or of them all.
func Run(ctx context.Context, o Options) (*Results, error) {
	if o.Queries == 0 {
		o.Queries = 50
	}
	if o.Reps == 0 {
		o.Reps = 3
	}
	if o.RerankQueries == 0 {
		o.RerankQueries = 10
	}
	r := &runner{o: o, res: &Results{Machine: Machine(o.Runtime.IntraOpThreads()), Started: time.Now().UTC()},
		work: filepath.Join(o.DataDir, "bench"), vault: filepath.Join(o.Root, "vault"), full: o.Only == ""}
	r.logf = func(format string, args ...any) {
		if o.Log != nil {
			o.Log(fmt.Sprintf(format, args...))
		}
	}
	defer r.close()
	if err := os.MkdirAll(r.work, 0o755); err != nil {
		return nil, err
	}
	if o.Prepare {
		for _, n := range o.Sizes {
			if _, err := r.scaleIndex(ctx, n); err != nil {
				return nil, err
			}
		}
		return r.res, nil
	}
	secs, err := chosen(o.Only)
	if err != nil {
		return nil, err
	}
	for _, s := range secs {
		if err := s.run(r, ctx); err != nil {
			return nil, fmt.Errorf("bench section %s: %w", s.name, err)
		}
	}
	return r.res, nil
}

// registry is the registry the sections share, opened on first use.
func (r *runner) registry() (*models.Registry, error) {
	if r.reg == nil {
		reg, err := models.NewRegistry(r.o.DataDir, r.o.Runtime)
		if err != nil {
			return nil, err
		}
		r.reg = reg
	}
	return r.reg, nil
}

// embedder is o.Embedder from the shared registry, loaded on first use: the
// model of the throughput, latency and recall sections.
func (r *runner) embedder(ctx context.Context) (*models.Embedder, error) {
	if r.emb != nil {
		return r.emb, nil
	}
	reg, err := r.registry()
	if err != nil {
		return nil, err
	}
	emb, err := reg.Embedder(ctx, r.o.Embedder)
	if err != nil {
		return nil, err
	}
	r.emb = emb
	return emb, nil
}

func (r *runner) close() {
	if r.reg != nil {
		r.reg.Close()
	}
}

// reindex times the demo vault's reindex per embedder: cold (a new
// registry, so the model load is included), warm, and incremental after one
// note changes.
func (r *runner) reindex(ctx context.Context) error {
	names, err := reindexModels()
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := r.reindexFigures(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// firstAnswers times the first build of each FirstAnswer vault to its first
// answer and to its end, and the largest generated vault's to its first
// answer (its end projected).
func (r *runner) firstAnswers(ctx context.Context) error {
	for _, v := range r.o.FirstAnswer {
		if err := r.firstAnswer(ctx, v, vaultName(v), true); err != nil {
			return err
		}
	}
	if n := slices.Max(append([]int{0}, r.o.Sizes...)); n > 0 {
		v, err := r.genVault(ctx, n)
		if err != nil {
			return err
		}
		if err := r.firstAnswer(ctx, v, fmt.Sprintf("gen-%d", n), false); err != nil {
			return err
		}
	}
	return nil
}

// scaleIndex generates a vault of n notes (once) and indexes it with
// scaleEmbedder (once per content), returning the index path.
func (r *runner) scaleIndex(ctx context.Context, n int) (string, error) {
	name := fmt.Sprintf("gen-%d", n)
	v, err := r.genVault(ctx, n)
	if err != nil {
		return "", err
	}
	db := filepath.Join(r.work, name, "index.db")
	t0 := time.Now()
	if _, err := eval.EnsureIndex(ctx, scaleEmbedder, v, db, r.logf); err != nil {
		return "", err
	}
	r.logf("%s index ready in %s", name, time.Since(t0).Round(time.Millisecond))
	return db, nil
}

// vaultName names a vault folder in the tables: its own name, or its
// parent's when it is called vault (a dataset's DATASET/vault).
func vaultName(v string) string {
	v = filepath.Clean(v)
	if filepath.Base(v) == "vault" {
		return filepath.Base(filepath.Dir(v))
	}
	return filepath.Base(v)
}

// genVault generates a vault of n notes once, and returns its folder.
func (r *runner) genVault(ctx context.Context, n int) (string, error) {
	name := fmt.Sprintf("gen-%d", n)
	dir := filepath.Join(r.work, name)
	v := filepath.Join(dir, "vault")
	if _, err := os.Stat(filepath.Join(dir, "generated")); err == nil {
		return v, nil
	}
	os.RemoveAll(v)
	t0 := time.Now()
	sum, err := gen.Generate(ctx, v, gen.Options{Notes: n, Seed: 1})
	if err != nil {
		return "", err
	}
	r.logf("generated %s: %d notes in %s", name, sum.Notes, time.Since(t0).Round(time.Millisecond))
	if err := os.WriteFile(filepath.Join(dir, "generated"), nil, 0o644); err != nil {
		return "", err
	}
	return v, nil
}

func texts(qs []eval.Query, n int) []string {
	var out []string
	for _, q := range qs[:min(n, len(qs))] {
		out = append(out, q.Text)
	}
	return out
}
