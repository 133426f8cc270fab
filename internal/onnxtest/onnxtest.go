// Package onnxtest writes tiny ONNX models with deterministic weights that
// stand in for real BERT-style models in tests. The models have the same
// input and output names, types and shapes as the ONNX exports of
// cross-encoder/ms-marco-MiniLM-L-6-v2 (a reranker) and BAAI/bge-small-en-v1.5
// (an embedder), so ONNX loading, pair tokenization and batching code can be
// exercised without the real weights.
//
// The ONNX protobuf is encoded by hand with protowire; the models use opset 17
// and IR version 8. CrossEncoderLogit and EmbedderHidden compute in Go what the
// models compute, so tests can assert exact outputs.
package onnxtest

import "os"

// DefaultVocabSize is the BERT uncased vocabulary size, used when a vocabSize
// argument is not positive.
const DefaultVocabSize = 30522

// DefaultDim is the hidden size of bge-small-en-v1.5, used when a dim argument
// is not positive.
const DefaultDim = 384

// TokenTypeWeight is added, per position, times the token type id, to every
// component of a token's weight, so that segment ids change the outputs.
const TokenTypeWeight = 0.005

// SelfWeight scales a position's own token vector in the embedder's output,
// which is otherwise the sequence mean; keeping it small makes CLS pooling
// mostly reflect the whole input.
const SelfWeight = 0.25

// Input and output names shared with the real model exports.
const (
	InputIDs      = "input_ids"
	AttentionMask = "attention_mask"
	TokenTypeIDs  = "token_type_ids"
	Logits        = "logits"
	LastHidden    = "last_hidden_state"
)

const (
	seedCrossEncoder = 0x5EED_C0DE_0000_0001
	seedEmbedder     = 0x5EED_C0DE_0000_0002
)

// splitmix64 is the SplitMix64 finalizer, a fixed integer hash.
func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// weight returns a pseudo-random value in [-1, 1) that is exactly
// representable as a float32 (a multiple of 2^-23).
func weight(seed uint64, id int64, j int) float32 {
	h := splitmix64(splitmix64(seed^uint64(id)) ^ uint64(j))
	return float32(int64(h>>40)-1<<23) / (1 << 23)
}

// CrossEncoderWeight returns the cross-encoder's weight for token id.
func CrossEncoderWeight(id int64) float32 { return weight(seedCrossEncoder, id, 0) }

// EmbeddingWeight returns component j of the embedder's vector for token id.
// It does not depend on the model's dim, so models of different dims share
// prefixes.
func EmbeddingWeight(id int64, j int) float32 { return weight(seedEmbedder, id, j) }

// CrossEncoderLogit returns the logit the cross-encoder model computes for one
// row: the sum over positions p of
// mask[p] * (CrossEncoderWeight(ids[p]) + TokenTypeWeight*typeIDs[p]).
// Padded positions (mask 0) do not contribute.
func CrossEncoderLogit(ids, mask, typeIDs []int64) float32 {
	var sum float64
	for p, id := range ids {
		e := float64(CrossEncoderWeight(id)) + TokenTypeWeight*float64(typeIDs[p])
		sum += float64(mask[p]) * e
	}
	return float32(sum)
}

// EmbedderHidden returns the last_hidden_state the embedder model computes for
// one row, as [len(ids)][dim]. With
// e[p][j] = EmbeddingWeight(ids[p], j) + TokenTypeWeight*typeIDs[p] and m the
// mask-weighted mean of e over positions (the divisor is at least 1), the
// output is mask[p] * (SelfWeight*e[p][j] + m[j]). Position 0 (CLS) thus
// mostly reflects the whole input, and padded positions are zero.
func EmbedderHidden(ids, mask, typeIDs []int64, dim int) [][]float32 {
	if dim <= 0 {
		dim = DefaultDim
	}
	e := make([][]float64, len(ids))
	mean := make([]float64, dim)
	var count float64
	for p, id := range ids {
		e[p] = make([]float64, dim)
		for j := range dim {
			e[p][j] = float64(EmbeddingWeight(id, j)) + TokenTypeWeight*float64(typeIDs[p])
			mean[j] += float64(mask[p]) * e[p][j]
		}
		count += float64(mask[p])
	}
	count = max(count, 1)
	out := make([][]float32, len(ids))
	for p := range ids {
		out[p] = make([]float32, dim)
		for j := range dim {
			out[p][j] = float32(float64(mask[p]) * (SelfWeight*e[p][j] + mean[j]/count))
		}
	}
	return out
}

// inputs returns the three int64 [batch_size, sequence_length] graph inputs.
func inputs() []msg {
	var vs []msg
	for _, name := range []string{InputIDs, AttentionMask, TokenTypeIDs} {
		vs = append(vs, valueInfo(name, dtInt64, "batch_size", "sequence_length"))
	}
	return vs
}

// commonInits returns the small constant initializers used by embedNodes.
func commonInits() []msg {
	return []msg{
		int64Tensor("axis1", []int64{1}, []int64{1}),
		int64Tensor("axis2", []int64{1}, []int64{2}),
		floatTensor("tt_weight", nil, []float32{TokenTypeWeight}),
	}
}

// embedNodes returns nodes computing "emb" = Gather(table, input_ids) +
// TokenTypeWeight*token_type_ids, "mask3" = the float mask as [b, s, 1], and
// "emb_masked" = emb * mask3.
func embedNodes(table string) []msg {
	return []msg{
		node("Gather", "gathered", []string{table, InputIDs}),
		node("Cast", "mask_f", []string{AttentionMask}, intAttr("to", dtFloat)),
		node("Unsqueeze", "mask3", []string{"mask_f", "axis2"}),
		node("Cast", "tt_f", []string{TokenTypeIDs}, intAttr("to", dtFloat)),
		node("Unsqueeze", "tt3", []string{"tt_f", "axis2"}),
		node("Mul", "tt_scaled", []string{"tt3", "tt_weight"}),
		node("Add", "emb", []string{"gathered", "tt_scaled"}),
		node("Mul", "emb_masked", []string{"emb", "mask3"}),
	}
}

// CrossEncoderONNX returns the encoded cross-encoder model: inputs input_ids,
// attention_mask and token_type_ids (int64 [batch_size, sequence_length]),
// output logits (float32 [batch_size, 1]) as computed by CrossEncoderLogit.
// A non-positive vocabSize means DefaultVocabSize.
func CrossEncoderONNX(vocabSize int) []byte {
	if vocabSize <= 0 {
		vocabSize = DefaultVocabSize
	}
	w := make([]float32, vocabSize)
	for i := range w {
		w[i] = CrossEncoderWeight(int64(i))
	}
	inits := append(commonInits(), floatTensor("W", []int64{int64(vocabSize), 1}, w))
	nodes := append(embedNodes("W"),
		node("ReduceSum", Logits, []string{"emb_masked", "axis1"}, intAttr("keepdims", 0)))
	outputs := []msg{valueInfo(Logits, dtFloat, "batch_size", 1)}
	return model(graphProto("onnxtest_cross_encoder", nodes, inits, inputs(), outputs))
}

// EmbedderONNX returns the encoded embedder model: inputs input_ids,
// attention_mask and token_type_ids (int64 [batch_size, sequence_length]),
// output last_hidden_state (float32 [batch_size, sequence_length, dim]) as
// computed by EmbedderHidden. Non-positive vocabSize and dim mean
// DefaultVocabSize and DefaultDim. The embedding table takes 4*vocabSize*dim
// bytes, so tests may prefer a small dim.
func EmbedderONNX(vocabSize, dim int) []byte { return embedderONNX(vocabSize, dim, true) }

// UnmaskedEmbedderONNX is EmbedderONNX without the last product with the
// mask: a padded position's output is SelfWeight*e[p][j] + m[j], where
// EmbedderONNX's is zero, as a real encoder's padded positions hold values
// of their own. The positions the mask holds are EmbedderHidden's. A pooling
// that reads padding gets another vector from it than from the row alone.
func UnmaskedEmbedderONNX(vocabSize, dim int) []byte { return embedderONNX(vocabSize, dim, false) }

func embedderONNX(vocabSize, dim int, maskOutput bool) []byte {
	if vocabSize <= 0 {
		vocabSize = DefaultVocabSize
	}
	if dim <= 0 {
		dim = DefaultDim
	}
	e := make([]float32, vocabSize*dim)
	for i := range vocabSize {
		for j := range dim {
			e[i*dim+j] = EmbeddingWeight(int64(i), j)
		}
	}
	inits := append(commonInits(),
		floatTensor("E", []int64{int64(vocabSize), int64(dim)}, e),
		floatTensor("one", nil, []float32{1}),
		floatTensor("self_weight", nil, []float32{SelfWeight}))
	nodes := append(embedNodes("E"),
		node("ReduceSum", "sum", []string{"emb_masked", "axis1"}, intAttr("keepdims", 1)),
		node("ReduceSum", "count", []string{"mask3", "axis1"}, intAttr("keepdims", 1)),
		node("Max", "count1", []string{"count", "one"}),
		node("Div", "mean", []string{"sum", "count1"}),
		node("Mul", "self", []string{"emb", "self_weight"}),
	)
	if maskOutput {
		nodes = append(nodes,
			node("Add", "mixed", []string{"self", "mean"}),
			node("Mul", LastHidden, []string{"mixed", "mask3"}))
	} else {
		nodes = append(nodes, node("Add", LastHidden, []string{"self", "mean"}))
	}
	outputs := []msg{valueInfo(LastHidden, dtFloat, "batch_size", "sequence_length", dim)}
	return model(graphProto("onnxtest_embedder", nodes, inits, inputs(), outputs))
}

// WriteCrossEncoder writes the model returned by CrossEncoderONNX to path.
func WriteCrossEncoder(path string, vocabSize int) error {
	return os.WriteFile(path, CrossEncoderONNX(vocabSize), 0o644)
}

// WriteEmbedder writes the model returned by EmbedderONNX to path.
func WriteEmbedder(path string, vocabSize, dim int) error {
	return os.WriteFile(path, EmbedderONNX(vocabSize, dim), 0o644)
}

// WriteUnmaskedEmbedder writes the model returned by UnmaskedEmbedderONNX to
// path.
func WriteUnmaskedEmbedder(path string, vocabSize, dim int) error {
	return os.WriteFile(path, UnmaskedEmbedderONNX(vocabSize, dim), 0o644)
}
