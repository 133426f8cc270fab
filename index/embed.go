package index

import (
	"context"
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
