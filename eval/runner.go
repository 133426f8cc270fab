package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/server"
	"github.com/vault-rag/vault-rag/stages"
)

// DefaultNow returns the clock every eval query runs at unless Options.Now
// says otherwise, so recency is reproducible. It lies before any checkout's
// file times, so a note dated by its file time (no frontmatter date, no date
// in its name) counts as new on every machine.
func DefaultNow() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }

// Depth is how many notes each query asks for: the metrics read the top 10,
// the TREC run file holds them all.
const Depth = 100

// AnswerDepth is how many notes answer@1's and the bytes' answer holds:
// vault_search's default k.
const AnswerDepth = pipeline.DefaultK

// answerScores are a query's answer@1 and the size of the text of
// vault_search's answer for its first AnswerDepth notes, at the default
// detail.
func answerScores(a Answers, id string, res *pipeline.Result) (answer, size float64, err error) {
	top := res.Notes[:min(AnswerDepth, len(res.Notes))]
	raw := server.SearchAnswer(&pipeline.Result{Config: res.Config, Notes: top}, false).Text()
	if len(top) > 0 {
		var shown []string
		for _, p := range top[0].Passages {
			shown = append(shown, p.Text)
		}
		if a.HoldsAnswer(id, top[0].Path, strings.Join(shown, "\n")) {
			answer = 1
		}
	}
	return answer, float64(len(raw)), nil
}

// Options configure a run.
type Options struct {
	Configs  []*pipeline.Config
	Registry *models.Registry
	WorkDir  string // where dataset indexes are kept (data/eval)
	// Embedder is the model datasets are indexed with; "" is each
	// dataset's gate model (GateModel: the fp32 original, whose scores
	// agree across CPUs, of the model its users' first index would choose).
	Embedder string
	Now      time.Time
	Log      func(string)
	// Variants are the rows run for a configuration that reads the client's
	// expansions: "" (none), the names of Variants and those of the
	// dataset's ExpansionSets. Nil runs every one the dataset has
	// expansions for; a sweep runs one.
	Variants []string

	// IndexWith and Models stand in for Registry (tests use the models/bow
	// embedder): datasets are indexed with IndexWith and stages get their
	// models from Models. Both or neither.
	IndexWith index.Embedder
	Models    stages.Models
}

// DatasetRun is every configuration's run over one dataset.
type DatasetRun struct {
	Dataset  *Dataset
	Embedder string // the model the dataset was indexed with
	Stamp    string // the index's build stamp
	Notes    int
	Chunks   int
	Configs  []*ConfigRun
}

// ConfigRun is one configuration over one dataset.
type ConfigRun struct {
	Name        string // the row: the configuration's name, with " +variant" when run with expansions
	Config      string // the configuration's own name
	Variant     string // "", one of Variants or the name of one of the dataset's ExpansionSets
	Description string
	File        string
	Skipped     string // why it did not run ("model not installed: ...")
	Mean        Scores
	ByKind      map[string]Scores
	Queries     []QueryRun
	Latency     []time.Duration // per query, in query order
}

// QueryRun is one query through one configuration.
type QueryRun struct {
	ID            string
	Kind          string
	Ranked        []string  // note paths, best first, up to Depth
	Scores        []float64 // the final score of each ranked note
	Score         Scores
	RelevantRanks []int                // ranks (≤ 10) of the relevant notes found in the top 10
	RelevantFound map[string]int       // the same by note path
	Stages        []pipeline.StageRank // rank of the first relevant note after each stage
	Miss          string               // "" (a relevant note in the top 10), "recall" or "ranking"
	// NearTies are the notes of the top 20 that took part in a near-tie at
	// any stage (pipeline.NearTies): where another CPU may order this query
	// otherwise.
	NearTies []string
}

// ShortStamp is an index stamp (DatasetRun.Stamp) cut to its first 12
// characters, as reports and the gate's lines show it.
func ShortStamp(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return strings.TrimSpace(s)
}

// Run indexes a dataset (reusing a cached index of the same content) and runs
// every configuration over its queries.
func Run(ctx context.Context, ds *Dataset, opts Options) (*DatasetRun, error) {
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			opts.Log(fmt.Sprintf(format, args...))
		}
	}
	now := opts.Now
	if now.IsZero() {
		now = DefaultNow()
	}
	var emb index.Embedder = opts.IndexWith
	mods := opts.Models
	if emb == nil || mods == nil {
		name := opts.Embedder
		if name == "" {
			var err error
			if name, err = GateModel(ctx, opts.Registry.Manifest(), ds); err != nil {
				return nil, err
			}
		}
		e, err := opts.Registry.Embedder(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("eval needs the embedder to index %s: %w", ds.Name, err)
		}
		emb, mods = e, pipeline.ModelsOf(opts.Registry)
	}
	dbPath := IndexPath(opts.WorkDir, ds.Name, emb.Name())
	stamp, err := EnsureIndex(ctx, emb, ds.VaultPath, dbPath, logf)
	if err != nil {
		return nil, err
	}
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	stats, err := db.Stats(ctx)
	if err != nil {
		return nil, err
	}
	env := stages.NewEnv(db, mods)
	out := &DatasetRun{Dataset: ds, Embedder: emb.Name(), Stamp: stamp, Notes: stats.Notes, Chunks: stats.Chunks}
	for _, cfg := range opts.Configs {
		var reg *models.Registry
		if opts.IndexWith == nil || opts.Models == nil {
			reg = opts.Registry
		}
		variants := []string{""}
		if ReadsExpansions(cfg) {
			variants = opts.Variants
			if variants == nil {
				variants = ds.variants()
			}
		}
		for _, v := range variants {
			cr, err := runConfig(ctx, env, ds, cfg, v, now, reg)
			if err != nil {
				return nil, err
			}
			if cr.Skipped != "" {
				logf("%s / %s: skipped (%s)", ds.Name, cr.Name, cr.Skipped)
			} else {
				line := fmt.Sprintf("%s / %s: nDCG@10 %.4f  MRR@10 %.4f  R@10 %.4f", ds.Name, cr.Name, cr.Mean.NDCG, cr.Mean.MRR, cr.Mean.Recall[10])
				if cr.Mean.Judged > 0 {
					line += fmt.Sprintf("  answer@1 %.4f  bytes %.0f", cr.Mean.Answer, cr.Mean.Bytes)
				}
				logf("%s", line)
			}
			out.Configs = append(out.Configs, cr)
		}
	}
	return out, nil
}

// IndexPath is where a dataset's index built with an embedder is kept, below
// workDir (data/eval): WORKDIR/DATASET/EMBEDDER/index.db.
func IndexPath(workDir, dataset, embedder string) string {
	return filepath.Join(workDir, dataset, embedder, "index.db")
}

// EnsureIndex builds the dataset's index with a full build unless one built
// from exactly these files exists: eval never uses an incremental build, whose
// note ids (the last tie-break) depend on history.
func EnsureIndex(ctx context.Context, emb index.Embedder, vaultPath, dbPath string, logf func(string, ...any)) (string, error) {
	files, _, err := vault.Scan(ctx, vaultPath, vault.ScanOptions{})
	if err != nil {
		return "", err
	}
	stamp := index.VaultStamp(files, emb.Name())
	stampFile := dbPath + ".stamp"
	if b, err := os.ReadFile(stampFile); err == nil && strings.TrimSpace(string(b)) == stamp {
		if db, err := index.Open(ctx, dbPath); err == nil {
			db.Close()
			return stamp, nil
		}
	}
	logf("indexing %s (%d files) into %s", vaultPath, len(files), dbPath)
	os.Remove(stampFile)
	rep, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vaultPath, DBPath: dbPath})
	if err != nil {
		return "", err
	}
	logf("indexed %d notes, %d chunks in %s", rep.Notes, rep.Chunks, rep.Duration.Round(time.Millisecond))
	return stamp, os.WriteFile(stampFile, []byte(stamp+"\n"), 0o644)
}

// runConfig runs one configuration over a dataset's queries, with the
// client's expansions of the variant ("" for none); reg (nil under test
// doubles) is asked up front which models are missing.
func runConfig(ctx context.Context, env *stages.Env, ds *Dataset, cfg *pipeline.Config, variant string, now time.Time, reg *models.Registry) (*ConfigRun, error) {
	cr := &ConfigRun{Name: VariantName(cfg.Name, variant), Config: cfg.Name, Variant: variant, Description: cfg.Description, File: cfg.File}
	db, err := env.Index()
	if err != nil {
		return nil, err
	}
	// A variant the dataset has no expansions for would run as the plain
	// configuration under another row's name.
	if !slices.Contains(ds.variants(), variant) {
		return nil, fmt.Errorf("run %s on %s: the dataset has no client expansions for the variant %q", cfg.Name, ds.Name, variant)
	}
	var shuffled []int
	if variant == VariantMismatched {
		shuffled = Mismatch(ds.Name, len(ds.Queries))
	}
	tol := pipeline.ScoreTolerance
	if reg != nil {
		tol = pipeline.Tolerance(cfg, reg.Manifest(), db.Embedder())
		missing, err := pipeline.MissingModels(cfg, reg, db.Embedder())
		if err != nil {
			return nil, err
		}
		if len(missing) > 0 {
			cr.Skipped = "model not installed: " + strings.Join(missing, "; ")
			return cr, nil
		}
	}
	// One untimed query first, so the first timed one does not pay for a
	// model load or a cold cache.
	if len(ds.Queries) > 0 {
		_, _, err := pipeline.Run(ctx, env, cfg, pipeline.Request{Text: ds.Queries[0].Text, Now: now, K: Depth})
		if errors.Is(err, models.ErrNotInstalled) {
			cr.Skipped = "model not installed: " + err.Error()
			return cr, nil
		}
	}
	var all []Scores
	byKind := map[string][]Scores{}
	for i, q := range ds.Queries {
		x := expansionFor(ds, variant, i, shuffled)
		t0 := time.Now()
		res, st, err := pipeline.Run(ctx, env, cfg, pipeline.Request{Text: q.Text, Keywords: x.Keywords, Answer: x.Answer, Now: now, K: Depth, PassageNotes: AnswerDepth})
		took := time.Since(t0)
		if errors.Is(err, models.ErrNotInstalled) {
			cr.Skipped = "model not installed: " + err.Error()
			return cr, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s, query %s: %w", ds.Name, q.ID, err)
		}
		qr := QueryRun{ID: q.ID, Kind: q.Kind}
		for _, n := range res.Notes {
			qr.Ranked = append(qr.Ranked, n.Path)
			qr.Scores = append(qr.Scores, n.Score)
		}
		qr.Score = Score(qr.Ranked, q.Relevant)
		if _, ok := ds.Answers[q.ID]; ok {
			qr.Score.Judged = 1
			if qr.Score.Answer, qr.Score.Bytes, err = answerScores(ds.Answers, q.ID, res); err != nil {
				return nil, fmt.Errorf("%s, query %s: %w", ds.Name, q.ID, err)
			}
		}
		for i, p := range qr.Ranked[:min(10, len(qr.Ranked))] {
			if q.Relevant[p] > 0 {
				qr.RelevantRanks = append(qr.RelevantRanks, i+1)
				if qr.RelevantFound == nil {
					qr.RelevantFound = map[string]int{}
				}
				qr.RelevantFound[p] = i + 1
			}
		}
		qr.Stages, qr.Miss = diagnose(ctx, db, st, q)
		tied, err := pipeline.TiedPaths(ctx, db, pipeline.NearTies(st.Steps, tol))
		if err != nil {
			return nil, fmt.Errorf("%s, query %s: %w", ds.Name, q.ID, err)
		}
		// Only a near-tied note near the top 10 can have moved a relevant note
		// within it: a flip moves a fused score by one rank's share, a few
		// places at most, so the top 20 is kept (the rest is noise the
		// measures do not see, and would only widen what the gate forgives).
		top := map[string]bool{}
		for _, p := range qr.Ranked[:min(20, len(qr.Ranked))] {
			top[p] = true
		}
		for _, p := range tied {
			if top[p] {
				qr.NearTies = append(qr.NearTies, p)
			}
		}
		cr.Queries = append(cr.Queries, qr)
		cr.Latency = append(cr.Latency, took)
		all = append(all, qr.Score)
		if q.Kind != "" {
			byKind[q.Kind] = append(byKind[q.Kind], qr.Score)
		}
	}
	cr.Mean = Mean(all)
	if len(byKind) > 0 {
		cr.ByKind = map[string]Scores{}
		for k, v := range byKind {
			cr.ByKind[k] = Mean(v)
		}
	}
	return cr, nil
}

// diagnose finds the rank of the first relevant note after each stage, and
// classifies a query with no relevant note in the final top 10: a recall miss
// when no retrieval stage found one at all, a ranking miss when one was found
// and ranked out.
func diagnose(ctx context.Context, db *index.DB, st *stages.State, q Query) ([]pipeline.StageRank, string) {
	ids := map[int64]bool{}
	for _, s := range st.Steps {
		for _, it := range s.Items {
			ids[it.NoteID] = true
		}
	}
	list := make([]int64, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	sort.Slice(list, func(i, j int) bool { return list[i] < list[j] })
	notes, err := db.Notes(ctx, list)
	if err != nil {
		return nil, ""
	}
	relevant := func(id int64) bool { return q.Relevant[notes[id].Path] > 0 }
	ranks := pipeline.RankAfter(st.Steps, relevant)
	final := 0
	if len(ranks) > 0 {
		final = ranks[len(ranks)-1].Rank
	}
	if final >= 1 && final <= 10 {
		return ranks, ""
	}
	for _, r := range ranks {
		if r.Rank > 0 {
			return ranks, "ranking"
		}
	}
	return ranks, "recall"
}

// GateModel is the model a dataset is scored with by default: the fp32
// original (models.Manifest.GateModel) of the embedder a first index of its
// vault would choose by its script, so a Chinese vault is scored with the
// Chinese model, as its users' index would be.
func GateModel(ctx context.Context, m models.Manifest, ds *Dataset) (string, error) {
	script, _, err := vault.DetectScript(ctx, ds.VaultPath)
	if err != nil {
		return "", fmt.Errorf("the script of %s: %w", ds.Name, err)
	}
	return m.GateModel(m.EmbedderFor(script)), nil
}
