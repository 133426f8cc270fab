package models

import (
	"context"
	"fmt"
)

// maxBatchRows bounds the rows of one ONNX run.
const maxBatchRows = 64

// Tokens returns text's token ids without special tokens, so an indexer that
// tokenized a text to decide where to split it can embed those ids without
// tokenizing it again.
func (e *Embedder) Tokens(text string) []int32 {
	return e.b.tokenizer.Encode(text)
}

// BatchLimits are the bounds of one ONNX run: at most rows sequences, and at
// most tokens in rows × the longest sequence (special tokens included). A
// caller that hands EmbedTokens batches within them, sorted by length, gets
// exactly one run per call.
func (e *Embedder) BatchLimits() (rows, tokens int) { return e.b.batchRows(), maxBatchTokens }

// Window is the longest token sequence embedded, special tokens excluded;
// longer ones are cut to it.
func (e *Embedder) Window() int { return e.b.maxLen - 2 }

// EmbedTokens embeds passages given as token ids (from Tokens), as
// EmbedPassages would embed their texts.
func (e *Embedder) EmbedTokens(ctx context.Context, ids [][]int32) ([][]float32, error) {
	seqs := make([]sequence, len(ids))
	for i, s := range ids {
		if len(s) > e.b.maxLen-2 {
			s = s[:e.b.maxLen-2]
		}
		row := make([]int64, 0, len(s)+2)
		row = append(row, e.b.cls)
		for _, id := range s {
			row = append(row, int64(id))
		}
		row = append(row, e.b.sep)
		seqs[i] = sequence{ids: row, types: make([]int64, len(row))}
	}
	return e.runSeqs(ctx, seqs)
}

func (e *Embedder) runSeqs(ctx context.Context, seqs []sequence) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	var bad error
	err := e.b.run(ctx, seqs, func(i int, hidden []float32, shape []int64) {
		v, err := e.pool(hidden, shape, len(seqs[i].ids))
		if err != nil {
			bad = err
			return
		}
		out[i] = normalize(v)
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pool makes one sequence's output, of the given shape, a vector of e.dim:
// position 0's ([CLS]), or with PoolMean the mean over the sequence's own
// tokens, the first positions, those its attention mask holds (runBatch).
func (e *Embedder) pool(hidden []float32, shape []int64, tokens int) ([]float32, error) {
	if e.pooling != PoolMean {
		if len(hidden) < e.dim {
			return nil, fmt.Errorf("%s: output row of %d values, want at least %d", e.b.name, len(hidden), e.dim)
		}
		return hidden[:e.dim], nil // position 0
	}
	if len(shape) != 2 || shape[0] < int64(tokens) || shape[1] < int64(e.dim) || tokens < 1 {
		return nil, fmt.Errorf("%s: output row of shape %v for %d tokens: mean pooling wants [positions ≥ %d, width ≥ %d]", e.b.name, shape, tokens, tokens, e.dim)
	}
	width := int(shape[1])
	sum := make([]float64, e.dim)
	for p := range tokens {
		for j, x := range hidden[p*width : p*width+e.dim] {
			sum[j] += float64(x)
		}
	}
	v := make([]float32, e.dim)
	for j, s := range sum {
		v[j] = float32(s / float64(tokens))
	}
	return v, nil
}

// Tokens loads the model's tokenizer and tokenizes; nil if the model cannot
// be loaded (EmbedTokens then reports why).
func (l *Lazy) Tokens(text string) []int32 {
	e, err := l.r.Embedder(context.Background(), l.spec.Name)
	if err != nil {
		return nil
	}
	return e.Tokens(text)
}

// BatchLimits are the loaded model's (see Embedder.BatchLimits); they do not
// need the model.
func (l *Lazy) BatchLimits() (rows, tokens int) {
	if l.spec.BatchRows > 0 {
		return l.spec.BatchRows, maxBatchTokens
	}
	return maxBatchRows, maxBatchTokens
}

// Window is the model's window less its special tokens, from the manifest.
func (l *Lazy) Window() int {
	return maxOr(l.spec.MaxTokens) - 2
}

// EmbedTokens loads the model and embeds token ids.
func (l *Lazy) EmbedTokens(ctx context.Context, ids [][]int32) ([][]float32, error) {
	e, err := l.r.Embedder(ctx, l.spec.Name)
	if err != nil {
		return nil, err
	}
	return e.EmbedTokens(ctx, ids)
}
