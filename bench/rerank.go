package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// rerankPassages are the passage sources the rerank section times.
var rerankPassages = []string{"snippet", "chunk", "note", "window"}

// rerank times the rerank stage on the demo vault: on the demo index the
// latency section built, when it ran, or else on one built (once) with the
// default embedder.
func (r *runner) rerank(ctx context.Context) error {
	reg, err := r.registry()
	if err != nil {
		return err
	}
	demo, err := eval.OpenDataset("demo", eval.OpenOptions{Root: r.o.Root})
	if err != nil {
		return err
	}
	db := r.demoDB
	if db == "" {
		emb, err := reg.Embedder(ctx, "")
		if err != nil {
			return err
		}
		db = eval.IndexPath(r.work, "demo", emb.Name())
		if _, err := eval.EnsureIndex(ctx, emb, demo.VaultPath, db, r.logf); err != nil {
			return err
		}
	}
	return r.rerankCost(ctx, db, texts(demo.Queries, r.o.RerankQueries))
}

// rerankCost times the rerank stage alone (the step's own duration, after the
// hybrid stages) over 30 candidates per passage source, without the passage
// cache, through the real stage and cross-encoder code. Per query it runs every
// cross-encoder, the bi-encoder scorer on the same passages (not for chunk,
// whose bi-encoder passage is the stored vector, nor note, which costs ~10 s a
// query and is not a candidate) and a fixed reference, the bi-encoder over
// snippets, back to back: a time divided by the reference's from the same
// queries holds on a machine shared with other work even when the times
// themselves drift, and the reference's time on a quiet machine turns it back
// into milliseconds.
func (r *runner) rerankCost(ctx context.Context, dbPath string, queries []string) error {
	scorerModels, err := rerankModels()
	if err != nil {
		return err
	}
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	sm := &statsModels{Models: pipeline.ModelsOf(r.reg), reg: r.reg}
	env := stages.NewEnv(db, sm).WithoutPassageCache() // every query embeds its passages: that is the cost timed
	type run struct {
		name, scorer, model string
		cfg                 *pipeline.Config
		times               []time.Duration
		stats               []models.BatchStats
		failed              string
	}
	for _, passage := range rerankPassages {
		var runs []*run
		scorers := slices.Clone(scorerModels)
		if passage != "chunk" && passage != "note" {
			scorers = append(scorers, "bi-encoder")
		}
		if passage != "snippet" {
			scorers = append(scorers, "reference")
		}
		for _, m := range scorers {
			stage := fmt.Sprintf("{model: %s, passage: %s, candidates: 30}", m, passage)
			name := fmt.Sprintf("rerank 30 candidates, %s, %s", m, passage)
			switch m {
			case "bi-encoder":
				stage = fmt.Sprintf("{scorer: bi-encoder, passage: %s, candidates: 30}", passage)
				name = fmt.Sprintf("rerank 30 candidates, bi-encoder (%s), %s", db.Embedder(), passage)
			case "reference":
				stage = "{scorer: bi-encoder, passage: snippet, candidates: 30}"
			}
			cfg, err := pipeline.Parse("bench.yaml", []byte("stages:\n  - keyword: {limit: 40}\n  - vector: {limit: 40}\n  - rrf: {k: 60, limit: 30}\n  - rerank: "+stage+"\n"))
			if err != nil {
				return err
			}
			runs = append(runs, &run{name: name, scorer: m, model: m, cfg: cfg})
		}
		for i, q := range append([]string{queries[0]}, queries...) {
			for _, ru := range runs {
				if ru.failed != "" {
					continue
				}
				sm.last = models.BatchStats{}
				_, st, err := pipeline.Run(ctx, env, ru.cfg, pipeline.Request{Text: q, Now: eval.DefaultNow()})
				if errors.Is(err, models.ErrNotInstalled) {
					ru.failed = "model not installed"
					continue
				}
				if err != nil {
					return fmt.Errorf("%s: %w", ru.name, err)
				}
				if i > 0 { // the first run warms up
					ru.times = append(ru.times, st.Steps[len(st.Steps)-1].Duration)
					ru.stats = append(ru.stats, sm.last)
				}
			}
			r.logf("rerank %s: query %d of %d", passage, i, len(queries))
		}
		var ref float64 // the reference's p50 in this loop
		for _, ru := range runs {
			if (ru.scorer == "reference" || (passage == "snippet" && ru.scorer == "bi-encoder")) && ru.failed == "" {
				ref = measure.Millis(measure.Percentile(ru.times, 50))
			}
		}
		for _, ru := range runs {
			if ru.scorer == "reference" {
				continue
			}
			if ru.failed != "" {
				r.res.add("rerank", ru.name, "demo", 0, "ms", ru.failed)
				continue
			}
			p50 := measure.Millis(measure.Percentile(ru.times, 50))
			r.res.add("rerank", ru.name+" p50", "demo", p50, "ms", fmt.Sprintf("%d queries, no passage cache", len(ru.times)))
			r.res.add("rerank", ru.name+" p95", "demo", measure.Millis(measure.Percentile(ru.times, 95)), "ms", "")
			if ref > 0 {
				r.res.add("rerank", ru.name+" p50 ÷ bi-encoder snippet p50 (same queries, same minutes)", "demo", p50/ref, "x", "")
			}
			if ru.scorer == "bi-encoder" {
				continue
			}
			var tokens, padded, batches int
			for _, s := range ru.stats {
				tokens += s.Tokens
				padded += s.Padded
				batches += s.Batches
			}
			if n := float64(len(ru.stats)); batches > 0 {
				r.res.add("rerank", ru.name+", tokens per query", "demo", float64(tokens)/n, "", "")
				r.res.add("rerank", ru.name+", tokens fed per query (padding included)", "demo", float64(padded)/n, "", "")
				r.res.add("rerank", ru.name+", batches per query", "demo", float64(batches)/n, "", "")
				r.res.add("rerank", ru.name+", tokens fed per batch", "demo", float64(padded)/float64(batches), "", "")
			}
		}
	}
	return nil
}

// statsModels hands the rerank stage the registry's cross-encoders wrapped to
// keep the batch statistics of the last call: the stage's own code runs, and
// the bench sees how many tokens it cost.
type statsModels struct {
	stages.Models
	reg  *models.Registry
	last models.BatchStats
}

func (m *statsModels) CrossEncoder(ctx context.Context, name string) (stages.PairScorer, error) {
	ce, err := m.reg.CrossEncoder(ctx, name)
	if err != nil {
		return nil, err
	}
	return &statsScorer{ce: ce, m: m}, nil
}

type statsScorer struct {
	ce *models.CrossEncoder
	m  *statsModels
}

func (s *statsScorer) Score(ctx context.Context, q string, ps []string) ([]float32, error) {
	out, st, err := s.ce.ScoreStats(ctx, q, ps)
	s.m.last = st
	return out, err
}

func (s *statsScorer) CountTokens(text string) int { return s.ce.CountTokens(text) }
func (s *statsScorer) StandInFor() string          { return s.ce.StandInFor() }
