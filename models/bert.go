package models

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/vault-rag/vault-rag/models/wordpiece"
	ort "github.com/yalue/onnxruntime_go"
)

// bert is a BERT-family ONNX session with its WordPiece tokenizer: the part the
// embedder and the cross-encoder share.
type bert struct {
	name      string
	sess      *ort.DynamicAdvancedSession
	tokenizer *wordpiece.Tokenizer
	cls, sep  int64
	maxLen    int // the model's window, special tokens included
	rows      int // at most this many sequences per run
	output    Output
}

// maxBatchTokens bounds one ONNX run (sequences × padded length), which bounds
// the memory of the attention matrices.
const maxBatchTokens = 16384

func newBERT(name, modelPath, tokenizerPath string, output Output, maxLen int, rt Runtime) (*bert, error) {
	for _, p := range []string{modelPath, tokenizerPath} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%w: %s (missing %s; run `vault-rag models fetch`)", ErrNotInstalled, name, p)
		}
	}
	if err := initRuntime(rt.Lib); err != nil {
		return nil, err
	}
	// The file's own truncation and padding are ignored: vault-rag cuts and
	// pads by its own rules (a pair's passage, never its query; each batch to
	// its longest row), and some exports ship a tokenizer that cuts every text
	// at 128 tokens and pads it to 128 (all-MiniLM-L6-v2's does).
	tok, err := wordpiece.Load(tokenizerPath)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("session options: %w", err)
	}
	defer opts.Destroy()
	// Fixed, explicit threading: a run's numbers must not depend on scheduling.
	if err := opts.SetIntraOpNumThreads(rt.IntraOpThreads()); err != nil {
		return nil, err
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, err
	}
	sess, err := ort.NewDynamicAdvancedSession(modelPath,
		[]string{"input_ids", "attention_mask", "token_type_ids"}, []string{string(output)}, opts)
	if err != nil {
		return nil, fmt.Errorf("load %s from %s: %w", name, modelPath, err)
	}
	b := &bert{name: name, sess: sess, tokenizer: tok, maxLen: maxLen, output: output}
	cls, sep := tok.Specials()
	b.cls, b.sep = int64(cls), int64(sep)
	return b, nil
}

func (b *bert) close() {
	if b.sess != nil {
		b.sess.Destroy()
	}
}

// ids tokenizes text without special tokens.
func (b *bert) ids(text string) []int64 {
	raw := b.tokenizer.Encode(text)
	out := make([]int64, len(raw))
	for i, id := range raw {
		out[i] = int64(id)
	}
	return out
}

func (b *bert) batchRows() int {
	if b.rows > 0 {
		return b.rows
	}
	return maxBatchRows
}

// sequence is one model input row: token ids and their segment ids.
type sequence struct {
	ids, types []int64
}

// BatchStats says how one call was cut into ONNX runs: what a reranker's cost
// is made of.
type BatchStats struct {
	Rows    int // sequences (pairs, for a cross-encoder)
	Batches int // ONNX runs
	Tokens  int // real tokens, special tokens included
	Padded  int // tokens fed to the model: rows × the batch's longest, summed
	Longest int // the longest row
}

// emitFunc receives sequence i's output and its shape: [positions, width]
// hidden states (positions past the sequence's own are padding) or [width]
// logits, depending on the output's rank.
type emitFunc func(i int, out []float32, shape []int64)

// run feeds sequences to the model in length-sorted batches and calls emit with
// each row's output. Rows of one batch are padded to its longest.
func (b *bert) run(ctx context.Context, seqs []sequence, emit emitFunc) error {
	_, err := b.runStats(ctx, seqs, 0, emit)
	return err
}

// runStats is run with a bound on padding: with maxPad > 0 a batch is closed
// before a row that would make more than that fraction of it padding, so
// short pairs are not padded to a long one's length (sorting alone leaves
// that to chance at the batch boundaries).
func (b *bert) runStats(ctx context.Context, seqs []sequence, maxPad float64, emit emitFunc) (BatchStats, error) {
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return len(seqs[order[x]].ids) < len(seqs[order[y]].ids) })
	st := BatchStats{Rows: len(seqs)}
	for lo := 0; lo < len(order); {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		hi, real := lo+1, len(seqs[order[lo]].ids)
		for hi < len(order) && (hi-lo+1)*len(seqs[order[hi]].ids) <= maxBatchTokens && hi-lo < b.batchRows() {
			n := len(seqs[order[hi]].ids)
			if maxPad > 0 && float64((hi-lo+1)*n-(real+n)) > maxPad*float64((hi-lo+1)*n) {
				break
			}
			real += n
			hi++
		}
		width := len(seqs[order[hi-1]].ids)
		st.Batches++
		st.Tokens += real
		st.Padded += (hi - lo) * width
		st.Longest = max(st.Longest, width)
		if err := b.runBatch(seqs, order[lo:hi], emit); err != nil {
			return st, err
		}
		lo = hi
	}
	return st, nil
}

func (b *bert) runBatch(seqs []sequence, rows []int, emit emitFunc) error {
	width := 0
	for _, r := range rows {
		width = max(width, len(seqs[r].ids))
	}
	n := len(rows) * width
	ids, mask, types := make([]int64, n), make([]int64, n), make([]int64, n)
	for k, r := range rows {
		s := seqs[r]
		copy(ids[k*width:], s.ids)
		copy(types[k*width:], s.types)
		for j := range s.ids {
			mask[k*width+j] = 1
		}
	}
	shape := ort.NewShape(int64(len(rows)), int64(width))
	var inputs []ort.Value
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	for _, data := range [][]int64{ids, mask, types} {
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return fmt.Errorf("%s: input tensor: %w", b.name, err)
		}
		inputs = append(inputs, t)
	}
	outputs := []ort.Value{nil}
	if err := b.sess.Run(inputs, outputs); err != nil {
		return fmt.Errorf("%s: run: %w", b.name, err)
	}
	defer outputs[0].Destroy()
	out, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return fmt.Errorf("%s: output %s is not a float32 tensor", b.name, b.output)
	}
	data := out.GetData()
	per := len(data) / len(rows)
	rowShape := out.GetShape()[1:]
	for k, r := range rows {
		emit(r, data[k*per:(k+1)*per], rowShape)
	}
	return nil
}
