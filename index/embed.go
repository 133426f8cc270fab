package index

import (
	"context"
	"fmt"
)

// embedItem is one text for the model.
type embedItem struct {
	hash string
	text string
	ids  []int32 // nil when the embedder takes text
	ntok int
}

func batchLimits(emb Embedder) (rows, tokens int) {
	rows, tokens = defaultBatchRows, defaultBatchTokens
	if bl, ok := emb.(BatchLimiter); ok {
		if r, t := bl.BatchLimits(); r > 0 && t > 0 {
			rows, tokens = r, t
		}
	}
	return rows, tokens
}

// planBatches cuts texts sorted by length (ntoks, ascending) into runs of
// the model: as many texts as fit the bounds, each padded to the longest.
// It is the rule the embedder applies itself, so each batch is one run.
func planBatches(ntoks []int, rows, tokens int) [][2]int {
	var out [][2]int
	for lo := 0; lo < len(ntoks); {
		hi := lo + 1
		for hi < len(ntoks) && hi-lo < rows && (hi-lo+1)*(ntoks[hi]+2) <= tokens {
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// runBatch embeds one batch, by ids when every item has them.
func runBatch(ctx context.Context, emb Embedder, items []embedItem) ([][]float32, error) {
	if te, ok := emb.(TokenEmbedder); ok {
		ids := make([][]int32, len(items))
		byIDs := true
		for i, it := range items {
			if it.ids == nil && it.text != "" {
				byIDs = false
				break
			}
			ids[i] = it.ids
		}
		if byIDs {
			return te.EmbedTokens(ctx, ids)
		}
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.text
	}
	return emb.EmbedPassages(ctx, texts)
}

// embedSorted embeds texts sorted by length (ntoks, ascending) in the batches
// planBatches cuts, committing each batch to the cache as soon as the model
// returns it, so a killed build loses at most the batch in flight. batch
// hands over the texts [lo, hi), only one batch of them in memory at a time;
// done, when set, receives each batch's vectors after the cache has them. Progress counts the texts
// and their tokens; reused is passed through.
func embedSorted(ctx context.Context, emb Embedder, cache *embedCache, ntoks []int, reused int, progress func(Progress),
	batch func(lo, hi int) ([]embedItem, error), done func([]embedItem, [][]float32) error) error {
	totalTok, doneTok := 0, 0
	for _, n := range ntoks {
		totalTok += n
	}
	report := func(done int) {
		if progress != nil {
			progress(Progress{Phase: "embedding", Done: done, Total: len(ntoks), Tokens: doneTok, TotalTokens: totalTok, Reused: reused})
		}
	}
	report(0)
	rows, tokens := batchLimits(emb)
	for _, b := range planBatches(ntoks, rows, tokens) {
		if err := ctx.Err(); err != nil {
			return err
		}
		items, err := batch(b[0], b[1])
		if err != nil {
			return err
		}
		vecs, err := runBatch(ctx, emb, items)
		if err != nil {
			return fmt.Errorf("embed chunks: %w", err)
		}
		if len(vecs) != len(items) {
			return fmt.Errorf("embed chunks: %d vectors for %d texts", len(vecs), len(items))
		}
		hashes := make([]string, len(items))
		for i, it := range items {
			hashes[i] = it.hash
			doneTok += it.ntok
		}
		if err := cache.put(ctx, hashes, vecs); err != nil {
			return err
		}
		if done != nil {
			if err := done(items, vecs); err != nil {
				return err
			}
		}
		report(b[1])
	}
	return nil
}
