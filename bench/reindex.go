package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/models"
)

// reindexFigures times the demo vault's reindex with one embedder, o.Reps
// times each way, and records the medians and the index's size.
func (r *runner) reindexFigures(ctx context.Context, embedder string) error {
	o, res := r.o, r.res
	var cold, warm, unchanged, incr []time.Duration
	db := filepath.Join(r.work, "reindex-"+embedder+".db")
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
		if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: r.vault, DBPath: db}); err != nil {
			reg.Close()
			return err
		}
		cold = append(cold, time.Since(t0))
		// Unchanged: a full build that finds every vector in the cache.
		t0 = time.Now()
		rep, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: r.vault, DBPath: db})
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
		if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: r.vault, DBPath: db, NoCache: true}); err != nil {
			reg.Close()
			return err
		}
		warm = append(warm, time.Since(t0))
		d, err := r.incremental(ctx, emb)
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
	r.logf("reindex %s: cold %s, warm %s, unchanged %s, incremental %s", embedder, mCold, mWarm, mUnchanged, mIncr)
	return nil
}

// incremental copies the vault, indexes it, changes one note and times the
// incremental build that follows.
func (r *runner) incremental(ctx context.Context, emb index.Embedder) (time.Duration, error) {
	tmp, err := os.MkdirTemp(r.work, "incr-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	v := filepath.Join(tmp, "vault")
	if err := vaultfs.CopyTree(r.vault, v); err != nil {
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
