package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// dataset is one collection the latency section measures.
type dataset struct {
	name    string
	db      string
	timed   []string        // the queries latency times
	all     []string        // the queries recall checks
	models  stages.Models   // what latency runs the configurations with (nil: the registry)
	vectors stages.Embedder // what the index's vectors were embedded with
}

// latency measures query latency and index size on each dataset: the demo
// vault, Cranfield and the generated vaults; in a full run, the binary vector
// search's recall on each of them and on the recall-only BEIR folders too.
func (r *runner) latency(ctx context.Context) error {
	emb, err := r.embedder(ctx)
	if err != nil {
		return err
	}
	cfgs, err := configs(r.o.Root)
	if err != nil {
		return err
	}
	demo, err := eval.OpenDataset("demo", eval.OpenOptions{Root: r.o.Root})
	if err != nil {
		return err
	}
	d := dataset{name: "demo", db: eval.IndexPath(r.work, "demo", emb.Name()),
		timed: texts(demo.Queries, r.o.Queries), all: texts(demo.Queries, len(demo.Queries)), vectors: emb}
	if _, err := eval.EnsureIndex(ctx, emb, demo.VaultPath, d.db, r.logf); err != nil {
		return err
	}
	r.demoDB = d.db
	if err := r.figures(ctx, cfgs, d, true); err != nil {
		return err
	}
	if r.o.Cranfield != "" {
		d, err := r.beir(ctx, emb, r.o.Cranfield)
		if err != nil {
			return err
		}
		if err := r.figures(ctx, cfgs, d, true); err != nil {
			return err
		}
	}
	for _, dir := range r.o.Recall {
		if !r.full {
			break // the folders are for the recall check alone
		}
		d, err := r.beir(ctx, emb, dir)
		if err != nil {
			return err
		}
		if err := r.figures(ctx, cfgs, d, false); err != nil {
			return err
		}
	}
	for _, n := range r.o.Sizes {
		d := dataset{name: fmt.Sprintf("gen-%d", n), vectors: scaleEmbedder,
			models: scaleModels{Models: pipeline.ModelsOf(r.reg), cost: QueryCost{Embedder: scaleEmbedder, Real: emb}}}
		if d.db, err = r.scaleIndex(ctx, n); err != nil {
			return err
		}
		if d.timed, err = scaleQueries(ctx, d.db, r.o.Queries); err != nil {
			return err
		}
		d.all = d.timed
		if err := r.figures(ctx, cfgs, d, true); err != nil {
			return err
		}
	}
	return nil
}

// figures records one dataset's figures: when timed, the query embedding's
// and each configuration's latency and the index's size; in a full run, the
// binary vector search's recall.
func (r *runner) figures(ctx context.Context, cfgs []*pipeline.Config, d dataset, timed bool) error {
	if timed {
		if err := r.queryEmbedding(ctx, r.emb, d.name, d.timed); err != nil {
			return err
		}
		if err := r.timeConfigs(ctx, cfgs, d); err != nil {
			return err
		}
	}
	if r.full {
		return r.recallFigures(ctx, d.vectors, d.name, d.db, d.all)
	}
	return nil
}

// beir loads a BEIR folder and indexes it with emb (once per content).
func (r *runner) beir(ctx context.Context, emb *models.Embedder, dir string) (dataset, error) {
	work := filepath.Join(r.o.DataDir, "eval")
	ds, err := eval.OpenDataset(dir, eval.OpenOptions{WorkDir: work})
	if err != nil {
		return dataset{}, err
	}
	d := dataset{name: ds.Name, db: eval.IndexPath(work, ds.Name, emb.Name()),
		timed: texts(ds.Queries, r.o.Queries), all: texts(ds.Queries, len(ds.Queries)), vectors: emb}
	_, err = eval.EnsureIndex(ctx, emb, ds.VaultPath, d.db, r.logf)
	return d, err
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

// timeConfigs runs every query of d once per configuration (after one
// untimed query) and records p50 and p95, then the keyword index call's
// reference times and the index's size.
func (r *runner) timeConfigs(ctx context.Context, cfgs []*pipeline.Config, d dataset) error {
	db, err := index.Open(ctx, d.db)
	if err != nil {
		return err
	}
	defer db.Close()
	m := d.models
	if m == nil {
		m = pipeline.ModelsOf(r.reg)
	}
	env := stages.NewEnv(db, m)
	now := eval.DefaultNow()
	dataset, queries := d.name, d.timed
	for _, cfg := range cfgs {
		indexed := db.Embedder()
		if indexed == scaleEmbedder.Name() {
			indexed = models.DefaultEmbedder // QueryCost runs it for every query
		}
		missing, err := pipeline.MissingModels(cfg, r.reg, indexed)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			r.res.add("latency", cfg.Name+" p50", dataset, 0, "ms", "model not installed")
			r.res.add("latency", cfg.Name+" p95", dataset, 0, "ms", "model not installed")
			continue
		}
		reqs := make([]pipeline.Request, len(queries))
		for i, q := range queries {
			reqs[i] = pipeline.Request{Text: q, Now: now}
		}
		if err := r.timeRequests(ctx, env, cfg, cfg.Name, dataset, reqs); err != nil {
			return err
		}
		if eval.ReadsExpansions(cfg) {
			// The same questions with what a client sends beside them.
			client := eval.VariantName(cfg.Name, eval.VariantClient)
			if err := r.timeRequests(ctx, env, cfg, client, dataset, withStandInExpansions(reqs)); err != nil {
				return err
			}
			// And with every client term searched, in the same run: what
			// the keyword stage's postings budget saves.
			if every, ok := everyClientTerm(cfg); ok {
				if err := r.timeRequests(ctx, env, every, client+", every client term", dataset, withStandInExpansions(reqs)); err != nil {
					return err
				}
			}
		}
	}
	if err := r.keywordReference(ctx, db, dataset, queries); err != nil {
		return err
	}
	st, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	r.res.add("size", "notes", dataset, float64(st.Notes), "", "")
	r.res.add("size", "chunks", dataset, float64(st.Chunks), "", "")
	r.res.add("size", "index size on disk", dataset, float64(st.Bytes)/(1<<20), "MiB", db.Embedder())
	return nil
}

// timeRequests runs every request once (after one untimed run of the first)
// and records p50 and p95 under name.
func (r *runner) timeRequests(ctx context.Context, env *stages.Env, cfg *pipeline.Config, name, dataset string, reqs []pipeline.Request) error {
	if _, _, err := pipeline.Run(ctx, env, cfg, reqs[0]); err != nil {
		return fmt.Errorf("%s on %s: %w", name, dataset, err)
	}
	var ds []time.Duration
	for _, req := range reqs {
		t0 := time.Now()
		if _, _, err := pipeline.Run(ctx, env, cfg, req); err != nil {
			return fmt.Errorf("%s on %s: %w", name, dataset, err)
		}
		ds = append(ds, time.Since(t0))
	}
	p50, p95 := measure.Millis(measure.Percentile(ds, 50)), measure.Millis(measure.Percentile(ds, 95))
	r.res.add("latency", name+" p50", dataset, p50, "ms", fmt.Sprintf("%d queries", len(ds)))
	r.res.add("latency", name+" p95", dataset, p95, "ms", "")
	r.logf("latency %s %s: p50 %.1f ms, p95 %.1f ms", dataset, name, p50, p95)
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
func (r *runner) keywordReference(ctx context.Context, db *index.DB, dataset string, queries []string) error {
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
		if _, err := db.Keyword(ctx, index.KeywordQuery{Match: m, Limit: 40, Engine: index.EngineFTS5}); err != nil {
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
	r.res.add("latency", "keyword index call p50", dataset, measure.Millis(p50), "ms", "bm25 on the postings, limit 40")
	r.res.add("latency", "keyword index call p95", dataset, measure.Millis(measure.Percentile(post, 95)), "ms", "")
	r.res.add("latency", "keyword index call by FTS5 p50", dataset, measure.Millis(f50), "ms", fmt.Sprintf("the same search by FTS5 alone, alternating: %.1fx the postings", float64(f50)/float64(max(p50, 1))))
	r.res.add("latency", "keyword index call by FTS5 p95", dataset, measure.Millis(measure.Percentile(fts, 95)), "ms", "")
	r.logf("latency %s keyword index call: postings p50 %.2f ms, FTS5 p50 %.2f ms", dataset, measure.Millis(p50), measure.Millis(f50))
	return nil
}

// queryEmbedding times the real embedder on each query alone: a part of every
// vector and hybrid figure, reported on its own line.
func (r *runner) queryEmbedding(ctx context.Context, emb stages.Embedder, dataset string, queries []string) error {
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
		r.res.add("latency", set.name+" p50", dataset, measure.Millis(measure.Percentile(ds, 50)), "ms", set.note)
		r.res.add("latency", set.name+" p95", dataset, measure.Millis(measure.Percentile(ds, 95)), "ms", "")
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
