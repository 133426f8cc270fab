package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
)

// firstAnswerTail is how long a first build goes on embedding after its first
// answer when the whole build is projected rather than waited for.
const firstAnswerTail = 60 * time.Second

// firstAnswer times a vault's first build as a user meets it: from the
// start (a new registry, so the model load counts) to the first search that
// returns a note, polled every 100 ms with the shipping configuration. Before
// staged builds the first answer came when the whole build ended; that time
// is measured too when whole is set, and otherwise projected from the tokens
// embedded in the minute after the first answer (the progress line's ETA
// rule: batches run shortest first).
func (r *runner) firstAnswer(ctx context.Context, vault, name string, whole bool) error {
	o := r.o
	reg, err := models.NewRegistry(o.DataDir, o.Runtime)
	if err != nil {
		return err
	}
	defer reg.Close()
	embName := o.Embedder
	if embName == "" {
		embName = models.DefaultEmbedder
	}
	cfg, err := pipeline.Find(o.Root, "shipping")
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp(r.work, "first-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	db := filepath.Join(work, "index.db")
	query, err := firstTitle(vault)
	if err != nil {
		return err
	}

	start := time.Now()
	emb, err := reg.Lazy(embName)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var last index.Progress
	buildCtx, stop := context.WithCancel(ctx)
	defer stop()
	type result struct {
		rep index.Report
		err error
	}
	built := make(chan result, 1)
	go func() {
		rep, err := index.Build(buildCtx, emb, index.BuildOptions{VaultPath: vault, DBPath: db, Progress: func(p index.Progress) {
			mu.Lock()
			last = p
			mu.Unlock()
		}})
		built <- result{rep, err}
	}()
	first, err := pollFirstAnswer(ctx, reg, cfg, db, query)
	if err != nil {
		return err
	}
	tFirst := time.Since(start)
	r.res.add("first answer", "first answer: the keyword index in place, vectors still embedding", name, tFirst.Seconds(), "s", fmt.Sprintf("%s, model load included; query %q", embName, query))
	r.logf("first answer on %s after %s (%d notes found)", name, tFirst.Round(time.Millisecond), first)

	var tWhole time.Duration
	note := ""
	if whole {
		b := <-built
		if b.err != nil {
			return b.err
		}
		tWhole = time.Since(start)
		note = fmt.Sprintf("measured: %d chunks", b.rep.Chunks)
	} else {
		mu.Lock()
		at := last
		mu.Unlock()
		t0 := time.Now()
		select {
		case b := <-built:
			if b.err != nil {
				return b.err
			}
			tWhole, note = time.Since(start), fmt.Sprintf("measured: %d chunks", b.rep.Chunks)
		case <-time.After(firstAnswerTail):
			stop()
			<-built
			mu.Lock()
			now := last
			mu.Unlock()
			done := now.Tokens - at.Tokens
			if done <= 0 || now.TotalTokens == 0 {
				return fmt.Errorf("first answer on %s: no tokens embedded in %s after the first answer", name, firstAnswerTail)
			}
			spent := time.Since(t0)
			rest := time.Duration(float64(spent) * float64(now.TotalTokens-now.Tokens) / float64(done))
			tWhole = time.Since(start) + rest
			note = fmt.Sprintf("projected: %d chunks, %.1f%% of their tokens embedded in the %s measured", now.Total, 100*float64(done)/float64(now.TotalTokens), spent.Round(time.Second))
		}
	}
	r.res.add("first answer", "the whole build (the first answer before staged builds)", name, tWhole.Seconds(), "s", note)
	r.res.add("first answer", "first answer / whole build", name, 100*tFirst.Seconds()/tWhole.Seconds(), "%", "")
	return nil
}

// pollFirstAnswer runs query through cfg on the index at db every 100 ms,
// once it exists, until it returns a note, and returns how many it returned.
func pollFirstAnswer(ctx context.Context, reg *models.Registry, cfg *pipeline.Config, db, query string) (int, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if n, err := answer(ctx, reg, cfg, db, query); err != nil {
			return 0, err
		} else if n > 0 {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}

// firstTitle is a query that finds a note of the vault: the name of its
// first markdown file, as words.
func firstTitle(vault string) (string, error) {
	var name string
	err := filepath.WalkDir(vault, func(p string, d fs.DirEntry, err error) error {
		if err != nil || name != "" {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != vault {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			name = strings.NewReplacer("_", " ", "-", " ").Replace(strings.TrimSuffix(d.Name(), ".md"))
			return fs.SkipAll
		}
		return nil
	})
	if err == nil && name == "" {
		err = fmt.Errorf("no markdown file in %s", vault)
	}
	return name, err
}

// answer opens the index at db, if there is one, and counts the notes query
// finds there; 0 without an index.
func answer(ctx context.Context, reg *models.Registry, cfg *pipeline.Config, db, query string) (int, error) {
	d, err := index.Open(ctx, db)
	if errors.Is(err, index.ErrNoIndex) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer d.Close()
	env := pipeline.NewEnv(d, reg)
	res, _, err := pipeline.Run(ctx, env, cfg, pipeline.Request{Text: query, K: 10, Now: time.Now().UTC()})
	if err != nil {
		return 0, err
	}
	return len(res.Notes), nil
}
