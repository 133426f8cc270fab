package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/measure"
)

// throughputReps is how many times the throughput section embeds each vault
// each way, alternating: a pass over a large vault embeds thousands of chunks.
const throughputReps = 2

// throughput compares the indexer's embedding rate with the raw ONNX session's
// on the same chunks, alternating the two so a shared machine's load falls on
// both alike: on the demo vault, and on the Throughput vault (3,000 chunks or
// more, where the figure means something) when one is given.
func (r *runner) throughput(ctx context.Context) error {
	vaults := []string{r.vault}
	if r.o.Throughput != "" && r.o.Throughput != r.vault {
		vaults = append(vaults, r.o.Throughput)
	}
	for _, v := range vaults {
		if err := r.throughputOf(ctx, v); err != nil {
			return err
		}
	}
	return nil
}

// throughputOf measures one vault: the raw session over its chunks,
// pre-tokenized and sorted by length over all of them, against a full build
// of it with no cache.
func (r *runner) throughputOf(ctx context.Context, vault string) error {
	emb, err := r.embedder(ctx)
	if err != nil {
		return err
	}
	chunkTexts, err := index.ChunkTexts(ctx, vault, emb)
	if err != nil {
		return err
	}
	prep := emb.Prepare(chunkTexts)
	if err := emb.RunPrepared(ctx, emb.Prepare(chunkTexts[:min(64, len(chunkTexts))])); err != nil { // warm
		return err
	}
	name := vaultName(vault)
	if vault == r.vault {
		name = "demo"
	}
	var raw, indexer []time.Duration
	db := filepath.Join(r.work, "throughput-"+name+".db")
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
	rw, ix := measure.Percentile(raw, 50), measure.Percentile(indexer, 50)
	r.res.add("throughput", "raw ONNX session (pre-tokenized, length-sorted over all chunks)", name, n/rw.Seconds(), "chunks/s", fmt.Sprintf("%d chunks, %s, median of %d", len(chunkTexts), emb.Name(), throughputReps))
	r.res.add("throughput", "indexer (scan, parse, chunk, tokenize, embed, write)", name, n/ix.Seconds(), "chunks/s", "")
	r.res.add("throughput", "indexer / raw", name, 100*rw.Seconds()/ix.Seconds(), "%", "")
	r.logf("throughput, %s: raw %.1f chunks/s, indexer %.1f chunks/s", name, n/rw.Seconds(), n/ix.Seconds())
	return nil
}
