package models

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/onnxtest"
	"github.com/vault-rag/vault-rag/models/wordpiece"
)

// These tests run the code paths of the models on the tiny deterministic ONNX
// models of package onnxtest, with the real tokenizer.json, and compare each
// output with what onnxtest computes in Go from the expected model input.

// tinyDir writes an onnxtest model as model.onnx beside a copy of the real
// tokenizer.json and returns the folder and a tokenizer for the expectations.
func tinyDir(t *testing.T, write func(path string) error) (string, *wordpiece.Tokenizer) {
	t.Helper()
	requireRuntime(t)
	tokPath := realTokenizer(t)
	dir := t.TempDir()
	if err := write(filepath.Join(dir, "model.onnx")); err != nil {
		t.Fatal(err)
	}
	copyFile(t, tokPath, filepath.Join(dir, "tokenizer.json"))
	tok, err := wordpiece.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	return dir, tok
}

// encode tokenizes without special tokens.
func encode(tok *wordpiece.Tokenizer, s string) []int64 {
	raw := tok.Encode(s)
	out := make([]int64, len(raw))
	for i, id := range raw {
		out[i] = int64(id)
	}
	return out
}

// specials returns [CLS] and [SEP] as the tokenizer's template adds them.
func specials(t *testing.T, tok *wordpiece.Tokenizer) (cls, sep int64) {
	t.Helper()
	ids := tok.EncodeWithSpecials("")
	if len(ids) != 2 {
		t.Fatalf("tokenizer wraps the empty text in %v, want [CLS] [SEP]", ids)
	}
	return int64(ids[0]), int64(ids[1])
}

func ones(n int) []int64 {
	m := make([]int64, n)
	for i := range m {
		m[i] = 1
	}
	return m
}

// pairInput is the expected cross-encoder input: [CLS] q [SEP] p [SEP] with
// type ids 0 for [CLS] q [SEP] and 1 after, the query cut to 64 tokens and
// the passage to what a window of maxLen leaves.
func pairInput(t *testing.T, tok *wordpiece.Tokenizer, q, p string, maxLen int) (ids, types []int64) {
	cls, sep := specials(t, tok)
	qi, pi := encode(tok, q), encode(tok, p)
	if len(qi) > 64 {
		qi = qi[:64]
	}
	if room := maxLen - 3 - len(qi); len(pi) > room {
		pi = pi[:room]
	}
	ids = slices.Concat([]int64{cls}, qi, []int64{sep}, pi, []int64{sep})
	types = make([]int64, len(ids))
	for i := len(qi) + 2; i < len(ids); i++ {
		types[i] = 1
	}
	return ids, types
}

func tinyCrossEncoder(t *testing.T) (*CrossEncoder, *wordpiece.Tokenizer) {
	t.Helper()
	dir, tok := tinyDir(t, func(p string) error { return onnxtest.WriteCrossEncoder(p, 0) })
	ce, err := OpenCrossEncoder(Spec{Name: "tiny-cross-encoder", MaxTokens: 512, Output: "logits"}, dir, testEnv().Runtime)
	if err != nil {
		t.Fatalf("OpenCrossEncoder: %v", err)
	}
	t.Cleanup(ce.b.close)
	return ce, tok
}

// logitTol is how far a logit of the pair ids may be from CrossEncoderLogit's.
// The model sums up to 512 float32 terms in ONNX Runtime, in an order that
// depends on the padded width; CrossEncoderLogit sums in float64. The rounding
// grows with the sum of the terms' magnitudes (logits reach ±200), so the
// tolerance does too: about 1e-3 for a full window, 1e-4 for a short pair.
// A wrong token moves a logit by ~0.5 and each wrong type id by 0.005, far
// above it.
func logitTol(ids []int64) float64 {
	s := 0.0
	for _, id := range ids {
		s += math.Abs(float64(onnxtest.CrossEncoderWeight(id)))
	}
	return 1e-4 + 1e-5*s
}

func TestCrossEncoderScoresPairs(t *testing.T) {
	ce, tok := tinyCrossEncoder(t)
	if ce.Name() != "tiny-cross-encoder" {
		t.Errorf("Name = %q", ce.Name())
	}
	long := wordsText("passage", 1500)
	tests := []struct {
		name     string
		query    string
		passages []string
		pairLen  int // expected length of the pair of the last passage, when > 0
	}{
		{
			name:  "passages of different lengths",
			query: "what is the capital of france",
			passages: []string{
				"Paris is the capital and most populous city of France.",
				"",
				"Paris.",
				"Crème brûlée, 日本語のノート and an emoji 🙂 in a passage.",
				wordsText("medium", 80),
				"A database index speeds up reads and slows down writes.",
			},
		},
		{
			name:     "a passage longer than the window is cut so the pair is 512 tokens",
			query:    "long passages",
			passages: []string{"short one", long},
			pairLen:  512,
		},
		{
			name:     "a long query is cut to 64 tokens",
			query:    wordsText("query", 120),
			passages: []string{"a passage", long},
			pairLen:  512,
		},
		{
			name:     "empty query",
			query:    "",
			passages: []string{"anything at all"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scores, err := ce.Score(context.Background(), tc.query, tc.passages)
			if err != nil {
				t.Fatal(err)
			}
			if len(scores) != len(tc.passages) {
				t.Fatalf("%d scores for %d passages", len(scores), len(tc.passages))
			}
			for i, p := range tc.passages {
				ids, types := pairInput(t, tok, tc.query, p, 512)
				if tc.pairLen > 0 && i == len(tc.passages)-1 && len(ids) != tc.pairLen {
					t.Fatalf("expected pair has %d tokens, want %d", len(ids), tc.pairLen)
				}
				want := onnxtest.CrossEncoderLogit(ids, ones(len(ids)), types)
				if math.Abs(float64(scores[i]-want)) > logitTol(ids) {
					t.Errorf("passage %d: score %v, want %v (pair of %d tokens)", i, scores[i], want, len(ids))
				}
				// A wrong segment layout would be caught: all-zero types differ.
				if zero := onnxtest.CrossEncoderLogit(ids, ones(len(ids)), make([]int64, len(ids))); math.Abs(float64(scores[i]-zero)) <= logitTol(ids) {
					t.Errorf("passage %d: score %v does not reflect the segment ids", i, scores[i])
				}
			}
		})
	}

	// Truncation is at the window: more text beyond it changes nothing.
	a, err := ce.Score(context.Background(), "q", []string{long, long + " tail words the model never sees"})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(a[0]-a[1])) > 1e-3 {
		t.Errorf("text beyond the window changed the score: %v vs %v", a[0], a[1])
	}
}

func TestCrossEncoderBatchEqualsAlone(t *testing.T) {
	ce, tok := tinyCrossEncoder(t)
	ctx := context.Background()
	const query = "how are notes ranked"
	var passages []string
	for i := range 30 {
		// Lengths from 1 word to well past the window, in no particular order.
		n := (i*37)%30*25 + 1
		passages = append(passages, fmt.Sprintf("candidate %d: %s", i, wordsText(fmt.Sprintf("c%d", i), n)))
	}
	batch, err := ce.Score(ctx, query, passages)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != 30 {
		t.Fatalf("%d scores, want 30", len(batch))
	}
	distinct := map[float32]bool{}
	for i, p := range passages {
		alone, err := ce.Score(ctx, query, []string{p})
		if err != nil {
			t.Fatal(err)
		}
		ids, types := pairInput(t, tok, query, p, 512)
		if math.Abs(float64(batch[i]-alone[0])) > logitTol(ids) {
			t.Errorf("candidate %d: batched %v, alone %v", i, batch[i], alone[0])
		}
		if want := onnxtest.CrossEncoderLogit(ids, ones(len(ids)), types); math.Abs(float64(batch[i]-want)) > logitTol(ids) {
			t.Errorf("candidate %d: score %v, want %v: not in input order?", i, batch[i], want)
		}
		distinct[batch[i]] = true
	}
	if len(distinct) < 25 {
		t.Errorf("only %d distinct scores among 30 candidates", len(distinct))
	}

	none, err := ce.Score(ctx, query, nil)
	if err != nil || len(none) != 0 {
		t.Errorf("Score with no passages = %v, %v; want none", none, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ce.Score(canceled, query, passages); err == nil {
		t.Error("Score with a canceled context succeeded")
	}
}

// The embedder's code path on the tiny embedder: [CLS] text [SEP], type ids
// 0, CLS pooling, L2 normalisation, truncation to the window, batching.
func TestEmbedderOnTinyModel(t *testing.T) {
	const dim = 32
	dir, tok := tinyDir(t, func(p string) error { return onnxtest.WriteEmbedder(p, 0, dim) })
	const prefix = "query: "
	e, err := OpenEmbedder(Spec{Name: "tiny-embedder", Dim: dim, MaxTokens: 512, Output: "last_hidden_state", QueryPrefix: prefix}, dir, testEnv().Runtime)
	if err != nil {
		t.Fatalf("OpenEmbedder: %v", err)
	}
	t.Cleanup(e.b.close)
	if e.Dim() != dim || e.Name() != "tiny-embedder" {
		t.Fatalf("Dim, Name = %d, %q", e.Dim(), e.Name())
	}
	cls, sep := specials(t, tok)
	expect := func(text string) []float32 {
		body := encode(tok, text)
		if len(body) > 510 {
			body = body[:510]
		}
		ids := slices.Concat([]int64{cls}, body, []int64{sep})
		h := onnxtest.EmbedderHidden(ids, ones(len(ids)), make([]int64, len(ids)), dim)
		return normalize(h[0])
	}
	texts := []string{"", "one", "The cat sat on the mat.", "Crème brûlée 日本語", wordsText("w", 100), wordsText("overlong", 800)}
	ctx := context.Background()
	batch, err := e.EmbedPassages(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		if d := maxDiff(batch[i], expect(s)); d > 1e-5 {
			t.Errorf("text %d: differs from the expected CLS vector by %g", i, d)
		}
		alone, err := e.EmbedPassages(ctx, []string{s})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(batch[i], alone[0]); d > 1e-6 {
			t.Errorf("text %d: batched differs from alone by %g", i, d)
		}
		if n := norm(batch[i]); math.Abs(n-1) > 1e-5 {
			t.Errorf("text %d: norm %v", i, n)
		}
	}
	q, err := e.EmbedQuery(ctx, "the cat")
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(q, expect(prefix+"the cat")); d > 1e-5 {
		t.Errorf("query vector differs from the prefixed text's by %g", d)
	}
	if d := maxDiff(q, expect("the cat")); d < 1e-3 {
		t.Error("the query prefix made no difference")
	}
	if n := e.CountTokens(strings.Repeat("cat ", 700)); n != 700 {
		t.Errorf("CountTokens(700 words) = %d, want 700", n)
	}
}

// An embedder pools as its spec says, on the tiny embedder whose padded
// positions hold values, as a real encoder's do: cls (the default) takes
// position 0, mean the mean of the positions the attention mask holds, the
// batch's padding left out. Texts of several lengths share a batch, so the
// shorter ones are padded.
func TestEmbedderPoolingOnTinyModel(t *testing.T) {
	const dim = 32
	dir, tok := tinyDir(t, func(p string) error { return onnxtest.WriteUnmaskedEmbedder(p, 0, dim) })
	cls, sep := specials(t, tok)
	hidden := func(text string) [][]float32 {
		ids := slices.Concat([]int64{cls}, encode(tok, text), []int64{sep})
		return onnxtest.EmbedderHidden(ids, ones(len(ids)), make([]int64, len(ids)), dim)
	}
	first := func(h [][]float32) []float32 { return h[0] }
	mean := func(h [][]float32) []float32 {
		out := make([]float32, dim)
		for j := range dim {
			var s float64
			for _, row := range h {
				s += float64(row[j])
			}
			out[j] = float32(s / float64(len(h)))
		}
		return out
	}
	texts := []string{"", "one", "The cat sat on the mat.", wordsText("w", 100)}
	ctx := context.Background()
	vectors := map[Pooling][][]float32{}
	for _, tc := range []struct {
		pooling Pooling
		want    func([][]float32) []float32
	}{
		{"", first},
		{PoolCLS, first},
		{PoolMean, mean},
	} {
		e, err := OpenEmbedder(Spec{Name: "tiny-embedder", Dim: dim, MaxTokens: 512, Output: OutputHidden, Pooling: tc.pooling}, dir, testEnv().Runtime)
		if err != nil {
			t.Fatalf("OpenEmbedder, pooling %q: %v", tc.pooling, err)
		}
		t.Cleanup(e.b.close)
		batch, err := e.EmbedPassages(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range texts {
			if d := maxDiff(batch[i], normalize(tc.want(hidden(s)))); d > 1e-5 {
				t.Errorf("pooling %q, text %d: differs from the expected vector by %g", tc.pooling, i, d)
			}
		}
		vectors[tc.pooling] = batch
	}
	for i := range texts {
		if d := maxDiff(vectors[PoolCLS][i], vectors[PoolMean][i]); d < 1e-3 {
			t.Errorf("text %d: cls and mean pooling agree to %g", i, d)
		}
	}
	// A pooling of the other kind of model is refused before the model is
	// read.
	if _, err := OpenEmbedder(Spec{Name: "tiny-embedder", Pooling: PoolLogit}, dir, testEnv().Runtime); err == nil || err.Error() != `load tiny-embedder: pooling "logit" is not one of cls, mean` {
		t.Errorf("an embedder pooling logit: %v", err)
	}
	if _, err := OpenCrossEncoder(Spec{Name: "tiny-cross-encoder", Pooling: PoolMean}, dir, testEnv().Runtime); err == nil || err.Error() != `load tiny-cross-encoder: pooling "mean" is not one of logit, cls0` {
		t.Errorf("a cross-encoder pooling mean: %v", err)
	}
}
