package models

import (
	"context"
	"fmt"
)

// CrossEncoder scores (query, passage) pairs jointly with a BERT sequence
// classifier: one signed logit per pair, higher is more relevant. It is safe for
// concurrent use.
type CrossEncoder struct {
	b          *bert
	pooling    Pooling
	standInFor string
}

// Name is the model's name, as in the manifest.
func (c *CrossEncoder) Name() string { return c.b.name }

// StandInFor names the cross-encoder this model only stands in for, as a
// measure of cost ("" for a real cross-encoder). A stand-in's scores mean
// nothing as relevance.
func (c *CrossEncoder) StandInFor() string { return c.standInFor }

// CountTokens counts text's tokens without special tokens.
func (c *CrossEncoder) CountTokens(text string) int { return len(c.b.ids(text)) }

// maxQueryTokens keeps a long query from crowding the passage out of the window.
const maxQueryTokens = 64

// maxPadding is the share of a cross-encoder batch that may be padding: pairs
// are sorted by length and a batch ends before a pair that would pad it more.
// Batches of similar lengths cost what their tokens cost; one batch of a
// 20-token pair and a 500-token pair costs two 500-token pairs.
const maxPadding = 0.2

// Score returns one logit per passage for the query, in one batched pass.
// Each pair is [CLS] query [SEP] passage [SEP] with segment ids 0 then 1; the
// passage is truncated to what the window leaves.
func (c *CrossEncoder) Score(ctx context.Context, query string, passages []string) ([]float32, error) {
	out, _, err := c.ScoreStats(ctx, query, passages)
	return out, err
}

// ScoreStats is Score, also saying how the pairs were batched.
func (c *CrossEncoder) ScoreStats(ctx context.Context, query string, passages []string) ([]float32, BatchStats, error) {
	seqs := c.pairs(query, passages)
	out := make([]float32, len(passages))
	var bad error
	st, err := c.b.runStats(ctx, seqs, maxPadding, func(i int, row []float32, _ []int64) {
		switch {
		case c.pooling == PoolCLS0 && len(row) > 0:
			out[i] = row[0] // [CLS] is position 0, its first component is row[0]
		case c.pooling != PoolCLS0 && len(row) == 1:
			out[i] = row[0]
		default:
			bad = fmt.Errorf("%s: %d output values per pair, want 1 (pooling %q)", c.b.name, len(row), c.pooling)
		}
	})
	if err == nil {
		err = bad
	}
	return out, st, err
}

// pairs tokenizes each (query, passage) pair as the model reads it: the query
// cut to maxQueryTokens, the passage to what the window leaves, never the
// other way round.
func (c *CrossEncoder) pairs(query string, passages []string) []sequence {
	q := c.b.ids(query)
	if len(q) > maxQueryTokens {
		q = q[:maxQueryTokens]
	}
	room := c.b.maxLen - 3 - len(q)
	seqs := make([]sequence, len(passages))
	for i, p := range passages {
		pid := c.b.ids(p)
		if len(pid) > room {
			pid = pid[:room]
		}
		ids := make([]int64, 0, len(q)+len(pid)+3)
		ids = append(ids, c.b.cls)
		ids = append(ids, q...)
		ids = append(ids, c.b.sep)
		types := make([]int64, len(ids), cap(ids))
		ids = append(ids, pid...)
		ids = append(ids, c.b.sep)
		for len(types) < len(ids) {
			types = append(types, 1)
		}
		seqs[i] = sequence{ids: ids, types: types}
	}
	return seqs
}
