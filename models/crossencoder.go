package models

import (
	"context"
	"fmt"
)

// CrossEncoder scores (query, passage) pairs jointly with a BERT sequence
// classifier: one signed logit per pair, higher is more relevant. It is safe for
// concurrent use.
type CrossEncoder struct {
	b *bert
}

// Name is the model's name, as in the manifest.
func (c *CrossEncoder) Name() string { return c.b.name }

// maxQueryTokens keeps a long query from crowding the passage out of the window.
const maxQueryTokens = 64

// Score returns one logit per passage for the query, in one batched pass.
// Each pair is [CLS] query [SEP] passage [SEP] with segment ids 0 then 1; the
// passage is truncated to what the window leaves.
func (c *CrossEncoder) Score(ctx context.Context, query string, passages []string) ([]float32, error) {
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
	out := make([]float32, len(passages))
	var bad error
	err := c.b.run(ctx, seqs, func(i int, logits []float32) {
		if len(logits) != 1 {
			bad = fmt.Errorf("%s: %d logits per pair, want 1", c.b.name, len(logits))
			return
		}
		out[i] = logits[0]
	})
	if err == nil {
		err = bad
	}
	return out, err
}
