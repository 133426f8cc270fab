package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/gen"
	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
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
	Only      string         // one section alone (reindex, throughput, rerank, latency: sectionParts), "" for all
	Embedder  string         // the model of the throughput, latency and first-answer sections ("" for the default)
	// Throughput is the vault the throughput section embeds (default the
	// demo vault; it should hold 3,000 chunks or more for the figure to
	// mean something).
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
	// recall at scale, per oversampling factor (realRecall).
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

// parts are the measurements a run takes.
type parts struct {
	reindex    bool // the demo vault's reindex times, per embedder
	throughput bool // the embedding rate, raw and through the indexer
	latency    bool // query latency and index size, per dataset
	recall     bool // the binary vector search's recall, per dataset
	rerank     bool // the rerank stage's cost on the demo vault
	first      bool // a first build's time to its first answer
}

// sectionParts is what a run keeps with --only naming a section ("" for the
// full run).
func sectionParts(only string) (parts, error) {
	p, ok := map[string]parts{
		"":             {reindex: true, throughput: true, latency: true, recall: true, rerank: true, first: true},
		"reindex":      {reindex: true},
		"throughput":   {throughput: true},
		"rerank":       {rerank: true},
		"latency":      {latency: true},
		"first-answer": {first: true},
		"recall":       {recall: true},
	}[only]
	if !ok {
		return p, fmt.Errorf("bench: no section %q (reindex, throughput, rerank, latency, first-answer, recall)", only)
	}
	return p, nil
}

// runner is one run: its options, where it works and what it has measured.
type runner struct {
	o     Options
	res   *Results
	work  string // data/bench: the reindex, throughput and scale indexes
	vault string // the demo vault
	logf  func(string, ...any)
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
		work: filepath.Join(o.DataDir, "bench"), vault: filepath.Join(o.Root, "vault")}
	r.logf = func(format string, args ...any) {
		if o.Log != nil {
			o.Log(fmt.Sprintf(format, args...))
		}
	}
	if err := os.MkdirAll(r.work, 0o755); err != nil {
		return nil, err
	}
	if o.Prepare {
		for _, n := range o.Sizes {
			if _, err := scaleIndex(ctx, r.work, n, r.logf); err != nil {
				return nil, err
			}
		}
		return r.res, nil
	}
	p, err := sectionParts(o.Only)
	if err != nil {
		return nil, err
	}
	if err := r.run(ctx, p); err != nil {
		return nil, err
	}
	return r.res, nil
}

// run takes the parts p names, in a full run's order: a rerank section alone
// has its own setup (onlyRerank).
func (r *runner) run(ctx context.Context, p parts) error {
	if p == (parts{rerank: true}) {
		return onlyRerank(ctx, r.o, r.res, r.work, r.logf)
	}
	if p.reindex {
		// Per embedder: cold (a new registry, so the model load is
		// included), warm, and incremental after one note changes.
		for _, name := range []string{"bge-small-en-v1.5-q", "bge-small-en-v1.5"} { // int8 (the default), fp32
			if err := reindexFigures(ctx, r.o, r.res, r.work, r.vault, name, r.logf); err != nil {
				return err
			}
		}
	}
	if p.first {
		for _, v := range r.o.FirstAnswer {
			if err := firstAnswer(ctx, r.o, r.res, v, vaultName(v), true, r.logf); err != nil {
				return err
			}
		}
		if n := slices.Max(append([]int{0}, r.o.Sizes...)); n > 0 {
			v, err := genVault(ctx, r.work, n, r.logf)
			if err != nil {
				return err
			}
			if err := firstAnswer(ctx, r.o, r.res, v, fmt.Sprintf("gen-%d", n), false, r.logf); err != nil {
				return err
			}
		}
	}
	if !p.throughput && !p.latency && !(p.recall && r.o.RecallNotes > 0) {
		return nil
	}
	reg, err := models.NewRegistry(r.o.DataDir, r.o.Runtime)
	if err != nil {
		return err
	}
	defer reg.Close()
	emb, err := reg.Embedder(ctx, r.o.Embedder)
	if err != nil {
		return err
	}
	if p.throughput {
		v := r.vault
		if r.o.Throughput != "" {
			v = r.o.Throughput
		}
		if err := throughput(ctx, r.res, emb, v, r.work, r.logf); err != nil {
			return err
		}
	}
	if p.latency {
		if err := r.datasets(ctx, p, reg, emb); err != nil {
			return err
		}
	}
	if p.recall && r.o.RecallNotes > 0 {
		return realRecall(ctx, r.res, emb, r.work, r.o.RecallNotes, r.o.Queries, r.logf)
	}
	return nil
}

// dataset is one collection the latency and recall parts measure.
type dataset struct {
	name    string
	db      string
	timed   []string        // the queries latency times
	all     []string        // the queries recall checks
	models  stages.Models   // what latency runs the configurations with (nil: the registry)
	vectors stages.Embedder // what the index's vectors were embedded with
}

// datasets measures query latency, index size, recall and the rerank cost on
// each dataset: the demo vault, Cranfield, the recall-only BEIR folders and the
// generated vaults.
func (r *runner) datasets(ctx context.Context, p parts, reg *models.Registry, emb *models.Embedder) error {
	cfgs, err := configs(r.o.Root)
	if err != nil {
		return err
	}
	figures := func(d dataset, timed bool) error {
		if timed {
			if err := queryEmbedding(ctx, r.res, emb, d.name, d.timed); err != nil {
				return err
			}
			lo := latencyOptions{Registry: reg, Models: d.models, Configs: cfgs, Dataset: d.name, DBPath: d.db, Queries: d.timed, Logf: r.logf}
			if err := latency(ctx, r.res, lo); err != nil {
				return err
			}
		}
		if p.recall {
			return recallFigures(ctx, r.res, d.vectors, d.name, d.db, d.all, r.logf)
		}
		return nil
	}
	demo, err := eval.LoadDemo(r.o.Root)
	if err != nil {
		return err
	}
	d := dataset{name: "demo", db: eval.IndexPath(r.work, "demo", emb.Name()),
		timed: texts(demo.Queries, r.o.Queries), all: texts(demo.Queries, len(demo.Queries)), vectors: emb}
	if _, err := eval.EnsureIndex(ctx, emb, demo.VaultPath, d.db, r.logf); err != nil {
		return err
	}
	if err := figures(d, true); err != nil {
		return err
	}
	if p.rerank {
		if err := rerankCost(ctx, r.res, reg, d.db, texts(demo.Queries, r.o.RerankQueries), r.logf); err != nil {
			return err
		}
	}
	if r.o.Cranfield != "" {
		d, err := r.beir(ctx, emb, r.o.Cranfield, "cranfield")
		if err != nil {
			return err
		}
		if err := figures(d, true); err != nil {
			return err
		}
	}
	for _, dir := range r.o.Recall {
		if !p.recall {
			break // the folders are for the recall check alone
		}
		d, err := r.beir(ctx, emb, dir, filepath.Base(filepath.Clean(dir)))
		if err != nil {
			return err
		}
		if err := figures(d, false); err != nil {
			return err
		}
	}
	for _, n := range r.o.Sizes {
		d := dataset{name: fmt.Sprintf("gen-%d", n), vectors: hashEmbedder,
			models: scaleModels{Models: pipeline.ModelsOf(reg), cost: QueryCost{Embedder: hashEmbedder, Real: emb}}}
		if d.db, err = scaleIndex(ctx, r.work, n, r.logf); err != nil {
			return err
		}
		if d.timed, err = scaleQueries(ctx, d.db, r.o.Queries); err != nil {
			return err
		}
		d.all = d.timed
		if err := figures(d, true); err != nil {
			return err
		}
	}
	return nil
}

// beir loads a BEIR folder and indexes it with emb (once per content).
func (r *runner) beir(ctx context.Context, emb *models.Embedder, dir, name string) (dataset, error) {
	ds, err := eval.LoadBEIR(dir, filepath.Join(r.o.DataDir, "eval", name))
	if err != nil {
		return dataset{}, err
	}
	d := dataset{name: name, db: eval.IndexPath(filepath.Join(r.o.DataDir, "eval"), name, emb.Name()),
		timed: texts(ds.Queries, r.o.Queries), all: texts(ds.Queries, len(ds.Queries)), vectors: emb}
	_, err = eval.EnsureIndex(ctx, emb, ds.VaultPath, d.db, r.logf)
	return d, err
}

// scaleIndex generates a vault of n notes (once) and indexes it with the hash
// embedder (once per content), returning the index path.
func scaleIndex(ctx context.Context, work string, n int, logf func(string, ...any)) (string, error) {
	name := fmt.Sprintf("gen-%d", n)
	v, err := genVault(ctx, work, n, logf)
	if err != nil {
		return "", err
	}
	db := filepath.Join(work, name, "index.db")
	t0 := time.Now()
	if _, err := eval.EnsureIndex(ctx, hashEmbedder, v, db, logf); err != nil {
		return "", err
	}
	logf("%s index ready in %s", name, time.Since(t0).Round(time.Millisecond))
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
func genVault(ctx context.Context, work string, n int, logf func(string, ...any)) (string, error) {
	name := fmt.Sprintf("gen-%d", n)
	dir := filepath.Join(work, name)
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
	logf("generated %s: %d notes in %s", name, sum.Notes, time.Since(t0).Round(time.Millisecond))
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

// configs are the configurations whose latency is reported.
func configs(root string) ([]*pipeline.Config, error) {
	var out []*pipeline.Config
	for _, n := range []string{"keyword", "vector", "hybrid", "hybrid-rerank", "shipping"} {
		c, err := pipeline.Find(root, n)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		if n == "vector" {
			// The exact float scan beside the default binary path, same run.
			c, err := pipeline.Parse("vector-exact.yaml", []byte("name: vector-exact\nstages:\n  - vector: {limit: 40, search: exact}\n"))
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func reindexFigures(ctx context.Context, o Options, res *Results, work, vault, embedder string, logf func(string, ...any)) error {
	var cold, warm, unchanged, incr []time.Duration
	db := filepath.Join(work, "reindex-"+embedder+".db")
	for i := 0; i < o.Reps; i++ {
		reg, err := models.NewRegistry(o.DataDir, o.Runtime)
		if err != nil {
			return err
		}
		// Cold: no stored vector either.
		for _, s := range []string{"", "-wal", "-shm"} {
			os.Remove(index.CachePath(db) + s)
		}
		t0 := time.Now()
		emb, err := reg.Embedder(ctx, embedder)
		if err != nil {
			reg.Close()
			if errors.Is(err, models.ErrNotInstalled) {
				res.add("reindex", "demo reindex, cold (model load included)", "demo", 0, "s", "model not installed: "+embedder)
				return nil
			}
			return err
		}
		if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: db}); err != nil {
			reg.Close()
			return err
		}
		cold = append(cold, time.Since(t0))
		// Unchanged: a full build that finds every vector in the cache.
		t0 = time.Now()
		rep, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: db})
		if err != nil {
			reg.Close()
			return err
		}
		unchanged = append(unchanged, time.Since(t0))
		if rep.Embedded != 0 {
			reg.Close()
			return fmt.Errorf("reindex benchmark: a full build of the unchanged vault embedded %d chunks", rep.Embedded)
		}
		// Warm: the model loaded, every chunk embedded (no cache).
		t0 = time.Now()
		if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: db, NoCache: true}); err != nil {
			reg.Close()
			return err
		}
		warm = append(warm, time.Since(t0))
		d, err := incremental(ctx, emb, vault, work)
		reg.Close()
		if err != nil {
			return err
		}
		incr = append(incr, d)
	}
	note := "median of " + fmt.Sprint(o.Reps)
	mCold, mWarm, mUnchanged, mIncr := measure.Percentile(cold, 50), measure.Percentile(warm, 50), measure.Percentile(unchanged, 50), measure.Percentile(incr, 50)
	res.add("reindex", "demo reindex, cold (model load included) ["+embedder+"]", "demo", mCold.Seconds(), "s", note)
	res.add("reindex", "demo reindex, warm, no embedding cache ["+embedder+"]", "demo", mWarm.Seconds(), "s", note)
	res.add("reindex", "full reindex of the unchanged vault (every vector from the cache) ["+embedder+"]", "demo", mUnchanged.Seconds(), "s", note)
	res.add("reindex", "unchanged full reindex / cold ["+embedder+"]", "demo", 100*mUnchanged.Seconds()/mCold.Seconds(), "%", "target ≤ 5 %")
	res.add("reindex", "incremental reindex after one note changes ["+embedder+"]", "demo", mIncr.Seconds(), "s", note)
	if fi, err := os.Stat(db); err == nil {
		res.add("size", "index size on disk ["+embedder+"]", "demo", float64(fi.Size())/(1<<20), "MiB", "")
	}
	logf("reindex %s: cold %s, warm %s, unchanged %s, incremental %s", embedder, mCold, mWarm, mUnchanged, mIncr)
	return nil
}

// incremental copies the vault, indexes it, changes one note and times the
// incremental build that follows.
func incremental(ctx context.Context, emb index.Embedder, vault, work string) (time.Duration, error) {
	tmp, err := os.MkdirTemp(work, "incr-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	v := filepath.Join(tmp, "vault")
	if err := vaultfs.CopyTree(vault, v); err != nil {
		return 0, err
	}
	db := filepath.Join(tmp, "index.db")
	if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: v, DBPath: db}); err != nil {
		return 0, err
	}
	note := filepath.Join(v, "knowledge", "operations", "backpressure.md")
	f, err := os.OpenFile(note, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(f, "\nOne more line, added by the benchmark to change this note.\n")
	f.Close()
	t0 := time.Now()
	rep, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: v, DBPath: db, Incremental: true})
	if err != nil {
		return 0, err
	}
	if rep.Changed != 1 {
		return 0, fmt.Errorf("incremental benchmark: %d notes changed, want 1", rep.Changed)
	}
	return time.Since(t0), nil
}

// throughputReps is how many times the throughput section embeds its vault
// each way, alternating: each pass embeds thousands of chunks.
const throughputReps = 2

// throughput compares the indexer's embedding rate with the raw ONNX session's
// on the same chunks, alternating the two so a shared machine's load falls
// on both alike.
func throughput(ctx context.Context, res *Results, emb *models.Embedder, vault, work string, logf func(string, ...any)) error {
	chunkTexts, err := index.ChunkTexts(ctx, vault, emb)
	if err != nil {
		return err
	}
	prep := emb.Prepare(chunkTexts)
	if err := emb.RunPrepared(ctx, emb.Prepare(chunkTexts[:min(64, len(chunkTexts))])); err != nil { // warm
		return err
	}
	var raw, indexer []time.Duration
	db := filepath.Join(work, "throughput.db")
	for i := 0; i < throughputReps; i++ {
		t0 := time.Now()
		if err := emb.RunPrepared(ctx, prep); err != nil {
			return err
		}
		raw = append(raw, time.Since(t0))
		t0 = time.Now()
		// No cache: the indexer must run the model on every chunk, as the raw run does.
		rep, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: db, NoCache: true})
		if err != nil {
			return err
		}
		indexer = append(indexer, time.Since(t0))
		if rep.Embedded != len(chunkTexts) {
			return fmt.Errorf("throughput: the indexer embedded %d chunks, the raw run %d", rep.Embedded, len(chunkTexts))
		}
	}
	n := float64(len(chunkTexts))
	r, ix := measure.Percentile(raw, 50), measure.Percentile(indexer, 50)
	name := vaultName(vault)
	res.add("throughput", "raw ONNX session (pre-tokenized, length-sorted over all chunks)", name, n/r.Seconds(), "chunks/s", fmt.Sprintf("%d chunks, %s, median of %d", len(chunkTexts), emb.Name(), throughputReps))
	res.add("throughput", "indexer (scan, parse, chunk, tokenize, embed, write)", name, n/ix.Seconds(), "chunks/s", "")
	res.add("throughput", "indexer / raw", name, 100*r.Seconds()/ix.Seconds(), "%", "")
	logf("throughput: raw %.1f chunks/s, indexer %.1f chunks/s", n/r.Seconds(), n/ix.Seconds())
	return nil
}

// latencyOptions is what latency times: configurations over one dataset's
// index.
type latencyOptions struct {
	Registry *models.Registry   // the installed models: a configuration needing a missing one is recorded, not run
	Models   stages.Models      // what the configurations run with; nil: the Registry's models
	Configs  []*pipeline.Config // each timed in turn
	Dataset  string             // the name the figures are recorded under
	DBPath   string             // the dataset's index
	Queries  []string           // the queries timed, each once per configuration
	Logf     func(string, ...any)
}

// latency runs every query once per configuration (after one untimed query)
// and records p50 and p95.
func latency(ctx context.Context, res *Results, o latencyOptions) error {
	reg, m, dataset, queries, logf := o.Registry, o.Models, o.Dataset, o.Queries, o.Logf
	db, err := index.Open(ctx, o.DBPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if m == nil {
		m = pipeline.ModelsOf(reg)
	}
	env := stages.NewEnv(db, m)
	now := eval.DefaultNow
	for _, cfg := range o.Configs {
		indexed := db.Embedder()
		if indexed == HashName {
			indexed = models.DefaultEmbedder // QueryCost runs it for every query
		}
		missing, err := pipeline.MissingModels(cfg, reg, indexed)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			res.add("latency", cfg.Name+" p50", dataset, 0, "ms", "model not installed")
			res.add("latency", cfg.Name+" p95", dataset, 0, "ms", "model not installed")
			continue
		}
		reqs := make([]pipeline.Request, len(queries))
		for i, q := range queries {
			reqs[i] = pipeline.Request{Text: q, Now: now}
		}
		if err := timeRequests(ctx, res, env, cfg, cfg.Name, dataset, reqs, logf); err != nil {
			return err
		}
		if eval.ReadsExpansions(cfg) {
			// The same questions with what a client sends beside them.
			client := eval.VariantName(cfg.Name, eval.VariantClient)
			if err := timeRequests(ctx, res, env, cfg, client, dataset, withStandInExpansions(reqs), logf); err != nil {
				return err
			}
			// And with every client term searched, in the same run: what
			// the keyword stage's postings budget saves.
			if every, ok := everyClientTerm(cfg); ok {
				if err := timeRequests(ctx, res, env, every, client+", every client term", dataset, withStandInExpansions(reqs), logf); err != nil {
					return err
				}
			}
		}
	}
	if err := keywordReference(ctx, res, db, dataset, queries, logf); err != nil {
		return err
	}
	st, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	res.add("size", "notes", dataset, float64(st.Notes), "", "")
	res.add("size", "chunks", dataset, float64(st.Chunks), "", "")
	res.add("size", "index size on disk", dataset, float64(st.Bytes)/(1<<20), "MiB", db.Embedder())
	return nil
}

// timeRequests runs every request once (after one untimed run of the first)
// and records p50 and p95 under name.
func timeRequests(ctx context.Context, res *Results, env *stages.Env, cfg *pipeline.Config, name, dataset string, reqs []pipeline.Request, logf func(string, ...any)) error {
	if _, _, err := pipeline.Run(ctx, env, cfg, reqs[0]); err != nil {
		return fmt.Errorf("%s on %s: %w", name, dataset, err)
	}
	var ds []time.Duration
	for _, r := range reqs {
		t0 := time.Now()
		if _, _, err := pipeline.Run(ctx, env, cfg, r); err != nil {
			return fmt.Errorf("%s on %s: %w", name, dataset, err)
		}
		ds = append(ds, time.Since(t0))
	}
	p50, p95 := measure.Millis(measure.Percentile(ds, 50)), measure.Millis(measure.Percentile(ds, 95))
	res.add("latency", name+" p50", dataset, p50, "ms", fmt.Sprintf("%d queries", len(ds)))
	res.add("latency", name+" p95", dataset, p95, "ms", "")
	logf("latency %s %s: p50 %.1f ms, p95 %.1f ms", dataset, name, p50, p95)
	return nil
}

// Words in the stand-in expansions: the mean sizes of the client expansions
// in ../shared/client-expansions (9 keywords, 24–33 words of answer).
const (
	standInKeywords = 10
	standInAnswer   = 30
)

// withStandInExpansions gives each request the size of what a client sends
// beside it — about 10 keywords and a 30-word answer — made of the words of
// the following questions, so the timed work (terms to score, a longer text
// to embed) is a real client's without a client on every dataset.
func withStandInExpansions(reqs []pipeline.Request) []pipeline.Request {
	var words []string
	for _, r := range reqs {
		words = append(words, strings.Fields(r.Text)...)
	}
	out := make([]pipeline.Request, len(reqs))
	at := 0
	take := func(n int) string {
		if len(words) == 0 {
			return ""
		}
		part := make([]string, n)
		for i := range part {
			part[i] = words[at%len(words)]
			at++
		}
		return strings.Join(part, " ")
	}
	for i, r := range reqs {
		r.Keywords, r.Answer = take(standInKeywords), take(standInAnswer)
		out[i] = r
	}
	return out
}

// keywordReference times the keyword search's index call both ways on the
// same queries, alternating: on the postings (what every keyword stage runs)
// and by FTS5 alone (bm25 over every matching row: the path it replaced, and
// the one a match the postings cannot run still takes). Their answers are
// the same (index tests); the ratio is the speed-up, measured in one run.
func keywordReference(ctx context.Context, res *Results, db *index.DB, dataset string, queries []string, logf func(string, ...any)) error {
	var post, fts []time.Duration
	for i, q := range append(queries[:1:1], queries...) {
		m := stages.MatchExpr(q)
		if m == "" {
			continue
		}
		t0 := time.Now()
		if _, err := db.Keyword(ctx, index.KeywordQuery{Match: m, Limit: 40}); err != nil {
			return err
		}
		t1 := time.Now()
		if _, err := db.Keyword(ctx, index.KeywordQuery{Match: m, Limit: 40, Engine: index.FTS5}); err != nil {
			return err
		}
		if i > 0 { // the first is a warm-up
			post, fts = append(post, t1.Sub(t0)), append(fts, time.Since(t1))
		}
	}
	if len(post) == 0 {
		return nil
	}
	p50, f50 := measure.Percentile(post, 50), measure.Percentile(fts, 50)
	res.add("latency", "keyword index call p50", dataset, measure.Millis(p50), "ms", "bm25 on the postings, limit 40")
	res.add("latency", "keyword index call p95", dataset, measure.Millis(measure.Percentile(post, 95)), "ms", "")
	res.add("latency", "keyword index call by FTS5 p50", dataset, measure.Millis(f50), "ms", fmt.Sprintf("the same search by FTS5 alone, alternating: %.1fx the postings", float64(f50)/float64(max(p50, 1))))
	res.add("latency", "keyword index call by FTS5 p95", dataset, measure.Millis(measure.Percentile(fts, 95)), "ms", "")
	logf("latency %s keyword index call: postings p50 %.2f ms, FTS5 p50 %.2f ms", dataset, measure.Millis(p50), measure.Millis(f50))
	return nil
}

// queryEmbedding times the real embedder on each query alone: a part of every
// vector and hybrid figure, reported on its own line.
func queryEmbedding(ctx context.Context, res *Results, emb stages.Embedder, dataset string, queries []string) error {
	if len(queries) == 0 {
		return nil
	}
	reqs := make([]pipeline.Request, len(queries))
	for i, q := range queries {
		reqs[i] = pipeline.Request{Text: q}
	}
	// The question alone, then composed with stand-in expansions as
	// shipping's vector stage embeds it: the part of +client's cost no
	// keyword setting touches.
	for _, set := range []struct {
		name, note string
		texts      []string
	}{
		{"query embedding", emb.Name() + ", in every vector and hybrid figure", queries},
		{"query embedding +client", "the question with stand-in expansions, as shipping's vector stage embeds it", composed(withStandInExpansions(reqs))},
	} {
		if _, err := emb.EmbedQuery(ctx, set.texts[0]); err != nil { // warm
			return err
		}
		var ds []time.Duration
		for _, q := range set.texts {
			t0 := time.Now()
			if _, err := emb.EmbedQuery(ctx, q); err != nil {
				return err
			}
			ds = append(ds, time.Since(t0))
		}
		res.add("latency", set.name+" p50", dataset, measure.Millis(measure.Percentile(ds, 50)), "ms", set.note)
		res.add("latency", set.name+" p95", dataset, measure.Millis(measure.Percentile(ds, 95)), "ms", "")
	}
	return nil
}

// recallFigures measures the binary vector search against the exact KNN on
// the index's own vectors: at the vector stage's default (first rung k = 160,
// 8 × 160 candidates) and at a strict setting (k = 10, MinCandidates), which
// on a small collection is the one that examines only a part of it.
func recallFigures(ctx context.Context, res *Results, emb stages.Embedder, dataset, dbPath string, queries []string, logf func(string, ...any)) error {
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if emb.Name() != db.Embedder() {
		return fmt.Errorf("recall on %s: the index was embedded with %s, the queries with %s", dataset, db.Embedder(), emb.Name())
	}
	var qvs [][]float32
	for _, q := range queries {
		v, err := emb.EmbedQuery(ctx, q)
		if err != nil {
			return err
		}
		qvs = append(qvs, v)
	}
	total, err := db.ChunkCount(ctx)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("%d queries, %s vectors, %d chunks", len(qvs), db.Embedder(), total)
	for _, c := range []struct {
		name          string
		k, candidates int
	}{
		{"default: k=160, 1280 candidates", 160, index.VectorQuery{}.Rescored(160)},
		{fmt.Sprintf("strict: k=10, %d candidates", index.MinCandidates), 10, index.VectorQuery{Oversample: 1}.Rescored(10)},
	} {
		r, err := VectorRecall(ctx, db, qvs, c.k, c.candidates, 10)
		if err != nil {
			return err
		}
		res.add("recall", "binary vs exact KNN recall@10 notes, "+c.name, dataset, r.Notes, "", note)
		res.add("recall", "binary vs exact KNN recall@10 chunks, "+c.name, dataset, r.Chunks, "", "")
		logf("recall %s %s: notes %.4f, chunks %.4f", dataset, c.name, r.Notes, r.Chunks)
	}
	return nil
}

// scaleQueries takes n note titles spread evenly over the index as queries.
func scaleQueries(ctx context.Context, dbPath string, n int) ([]string, error) {
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	all, total, err := db.List(ctx, index.Filter{}, 0, 1<<30)
	if err != nil {
		return nil, err
	}
	var out []string
	for i := 0; i < n && total > 0; i++ {
		out = append(out, all[i*total/n].Title)
	}
	return out, nil
}

// everyClientTerm is cfg with each keyword stage that holds the client's
// terms to a postings budget (client_terms: budget) searching all of them;
// ok false when cfg has no such stage.
func everyClientTerm(cfg *pipeline.Config) (*pipeline.Config, bool) {
	out := *cfg
	out.Stages = slices.Clone(cfg.Stages)
	ok := false
	for i, s := range out.Stages {
		if k, is := s.(*stages.Keyword); is && k.ClientTerms == stages.ClientTermsBudget {
			all := *k
			all.ClientTerms, all.ClientPostings = stages.ClientTermsAll, 0
			out.Stages[i], ok = &all, true
		}
	}
	return &out, ok
}
