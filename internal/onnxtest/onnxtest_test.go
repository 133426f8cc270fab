package onnxtest

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/vault-rag/vault-rag/internal/modeltest"
	"github.com/vault-rag/vault-rag/models"
)

// ortSkip is non-empty when the ONNX Runtime library is unavailable.
var ortSkip string

func TestMain(m *testing.M) {
	lib := models.SettingsFrom(os.Getenv).Runtime.Lib // $ONNXRUNTIME_LIB, else the data folder's, named for this OS
	if _, err := os.Stat(lib); err != nil {
		ortSkip = fmt.Sprintf("ONNX Runtime shared library not available (set ONNXRUNTIME_LIB): %v", err)
		os.Exit(m.Run())
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(); err != nil {
		fmt.Fprintf(os.Stderr, "initializing ONNX Runtime from %s: %v\n", lib, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := ort.DestroyEnvironment(); err != nil {
		fmt.Fprintf(os.Stderr, "destroying ONNX Runtime environment: %v\n", err)
	}
	os.Exit(code)
}

func requireORT(t *testing.T) {
	t.Helper()
	if ortSkip != "" {
		modeltest.Missing(t, "%s", ortSkip)
	}
}

// batch is a padded batch of tokenized rows.
type batch struct {
	ids, mask, types [][]int64
}

// pad builds a batch from unpadded rows of ids and token types, padding with
// id 0, mask 0 and type 0 to the longest row.
func pad(ids, types [][]int64) batch {
	n := 0
	for _, r := range ids {
		n = max(n, len(r))
	}
	var b batch
	for i, r := range ids {
		id, mask, tt := make([]int64, n), make([]int64, n), make([]int64, n)
		copy(id, r)
		copy(tt, types[i])
		for p := range r {
			mask[p] = 1
		}
		b.ids, b.mask, b.types = append(b.ids, id), append(b.mask, mask), append(b.types, tt)
	}
	return b
}

// run runs the model at path on b and returns the single output's shape and
// data.
func run(t *testing.T, path, output string, b batch) (ort.Shape, []float32) {
	t.Helper()
	sess, err := ort.NewDynamicAdvancedSession(path,
		[]string{InputIDs, AttentionMask, TokenTypeIDs}, []string{output}, nil)
	if err != nil {
		t.Fatalf("NewDynamicAdvancedSession: %v", err)
	}
	defer sess.Destroy()
	shape := ort.NewShape(int64(len(b.ids)), int64(len(b.ids[0])))
	var in []ort.Value
	for _, rows := range [][][]int64{b.ids, b.mask, b.types} {
		tensor, err := ort.NewTensor(shape, slices.Concat(rows...))
		if err != nil {
			t.Fatalf("NewTensor: %v", err)
		}
		defer tensor.Destroy()
		in = append(in, tensor)
	}
	out := []ort.Value{nil}
	if err := sess.Run(in, out); err != nil {
		t.Fatalf("Run: %v", err)
	}
	defer out[0].Destroy()
	tensor, ok := out[0].(*ort.Tensor[float32])
	if !ok {
		t.Fatalf("output is %T, want *ort.Tensor[float32]", out[0])
	}
	return tensor.GetShape(), slices.Clone(tensor.GetData())
}

func near(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-5 }

// checkIO checks the model's declared inputs and outputs.
func checkIO(t *testing.T, path, output string, outDims ort.Shape) {
	t.Helper()
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		t.Fatalf("GetInputOutputInfo: %v", err)
	}
	if len(ins) != 3 || len(outs) != 1 {
		t.Fatalf("got %d inputs, %d outputs; want 3, 1", len(ins), len(outs))
	}
	for i, name := range []string{InputIDs, AttentionMask, TokenTypeIDs} {
		in := ins[i]
		if in.Name != name || in.DataType != ort.TensorElementDataTypeInt64 ||
			!in.Dimensions.Equals(ort.NewShape(-1, -1)) {
			t.Errorf("input %d = %v %v %v, want %s int64 [-1 -1]", i, in.Name, in.DataType, in.Dimensions, name)
		}
	}
	out := outs[0]
	if out.Name != output || out.DataType != ort.TensorElementDataTypeFloat || !out.Dimensions.Equals(outDims) {
		t.Errorf("output = %v %v %v, want %s float %v", out.Name, out.DataType, out.Dimensions, output, outDims)
	}
}

// Token ids from the bert-base-uncased vocabulary.
var (
	// [CLS] what is retrieval augmented generation [SEP] it combines search with generation [SEP]
	pairLong      = []int64{101, 2054, 2003, 26384, 19335, 4245, 102, 2009, 13585, 3945, 2007, 4245, 102}
	pairLongTypes = []int64{0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	// [CLS] what is rag [SEP] a cat [SEP]
	pairShort      = []int64{101, 2054, 2003, 17768, 102, 1037, 4937, 102}
	pairShortTypes = []int64{0, 0, 0, 0, 0, 1, 1, 1}
)

func TestCrossEncoder(t *testing.T) {
	requireORT(t)
	path := filepath.Join(t.TempDir(), "cross.onnx")
	if err := WriteCrossEncoder(path, 0); err != nil {
		t.Fatal(err)
	}
	checkIO(t, path, Logits, ort.NewShape(-1, 1))

	b := pad([][]int64{pairLong, pairShort}, [][]int64{pairLongTypes, pairShortTypes})
	shape, got := run(t, path, Logits, b)
	if !shape.Equals(ort.NewShape(2, 1)) {
		t.Fatalf("logits shape = %v, want [2 1]", shape)
	}
	for i := range 2 {
		want := CrossEncoderLogit(b.ids[i], b.mask[i], b.types[i])
		if !near(got[i], want) {
			t.Errorf("logit[%d] = %v, want %v", i, got[i], want)
		}
		t.Logf("logit[%d] = %v", i, got[i])
	}
	if near(got[0], got[1]) {
		t.Errorf("different pairs got the same logit %v", got[0])
	}

	// The padded row scores the same as when run alone without padding.
	_, alone := run(t, path, Logits, pad([][]int64{pairShort}, [][]int64{pairShortTypes}))
	if !near(alone[0], got[1]) {
		t.Errorf("unpadded logit = %v, padded logit = %v", alone[0], got[1])
	}

	// Segment ids matter.
	_, noTypes := run(t, path, Logits, pad([][]int64{pairShort}, [][]int64{make([]int64, len(pairShort))}))
	if want := alone[0] - 3*TokenTypeWeight; !near(noTypes[0], want) {
		t.Errorf("logit with zero token types = %v, want %v", noTypes[0], want)
	}

	// Ids outside the vocabulary are rejected, as by a real model.
	small := filepath.Join(t.TempDir(), "small.onnx")
	if err := WriteCrossEncoder(small, 100); err != nil {
		t.Fatal(err)
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer opts.Destroy()
	// ORT logs the expected Gather failure; keep the test output quiet.
	if err := opts.SetLogSeverityLevel(ort.LoggingLevelFatal); err != nil {
		t.Fatal(err)
	}
	sess, err := ort.NewDynamicAdvancedSession(small,
		[]string{InputIDs, AttentionMask, TokenTypeIDs}, []string{Logits}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Destroy()
	ids, _ := ort.NewTensor(ort.NewShape(1, 1), []int64{100})
	defer ids.Destroy()
	ones, _ := ort.NewTensor(ort.NewShape(1, 1), []int64{1})
	defer ones.Destroy()
	out := []ort.Value{nil}
	if err := sess.Run([]ort.Value{ids, ones, ones}, out); err == nil {
		out[0].Destroy()
		t.Error("Run with id == vocabSize succeeded, want an error")
	}
}

func TestEmbedder(t *testing.T) {
	requireORT(t)
	const dim = 32
	path := filepath.Join(t.TempDir(), "embed.onnx")
	if err := WriteEmbedder(path, 0, dim); err != nil {
		t.Fatal(err)
	}
	checkIO(t, path, LastHidden, ort.NewShape(-1, -1, dim))

	rows := [][]int64{
		{101, 1996, 4937, 2938, 2006, 1996, 13523, 102}, // [CLS] the cat sat on the mat [SEP]
		{101, 1037, 4937, 2938, 2006, 1037, 13523, 102}, // [CLS] a cat sat on a mat [SEP]
		{101, 4518, 3006, 7597, 3062, 102},              // [CLS] stock market prices fell [SEP]
	}
	types := make([][]int64, len(rows))
	for i, r := range rows {
		types[i] = make([]int64, len(r))
	}
	b := pad(rows, types)
	seq := len(b.ids[0])
	shape, got := run(t, path, LastHidden, b)
	if !shape.Equals(ort.NewShape(3, int64(seq), dim)) {
		t.Fatalf("last_hidden_state shape = %v, want [3 %d %d]", shape, seq, dim)
	}
	checkHidden(t, got, b, dim, func(int, int, int, [][]float32) float64 { return 0 })

	// The padded row's CLS vector equals the one computed without padding.
	_, alone := run(t, path, LastHidden, pad(rows[2:], types[2:]))
	padded := got[2*seq*dim : 2*seq*dim+dim]
	for j := range dim {
		if !near(alone[j], padded[j]) {
			t.Fatalf("CLS[%d] unpadded = %v, padded = %v", j, alone[j], padded[j])
		}
	}

	// CLS pooling reflects content: texts sharing words are closer.
	cls := func(i int) []float32 { return got[i*seq*dim : i*seq*dim+dim] }
	ab, ac := cosine(cls(0), cls(1)), cosine(cls(0), cls(2))
	t.Logf("cos(cat, cat) = %.4f, cos(cat, stocks) = %.4f", ab, ac)
	if ab <= ac {
		t.Errorf("cos(similar) = %v <= cos(unrelated) = %v", ab, ac)
	}
}

// The unmasked embedder's positions the mask holds are EmbedderHidden's; its
// padded positions hold SelfWeight*e[p] + m, not zero.
func TestUnmaskedEmbedder(t *testing.T) {
	requireORT(t)
	const dim = 16
	path := filepath.Join(t.TempDir(), "unmasked.onnx")
	if err := WriteUnmaskedEmbedder(path, 0, dim); err != nil {
		t.Fatal(err)
	}
	checkIO(t, path, LastHidden, ort.NewShape(-1, -1, dim))
	rows := [][]int64{
		{101, 1996, 4937, 2938, 2006, 1996, 13523, 102}, // [CLS] the cat sat on the mat [SEP]
		{101, 4518, 3006, 102},                          // [CLS] stock market [SEP]
	}
	types := [][]int64{make([]int64, len(rows[0])), {0, 0, 1, 1}}
	b := pad(rows, types)
	_, got := run(t, path, LastHidden, b)
	checkHidden(t, got, b, dim, func(i, p, j int, want [][]float32) float64 {
		// m[j] is position 0's output less its own share.
		e0 := float64(EmbeddingWeight(b.ids[i][0], j)) + TokenTypeWeight*float64(b.types[i][0])
		m := float64(want[0][j]) - SelfWeight*e0
		return SelfWeight*float64(EmbeddingWeight(b.ids[i][p], j)) + m
	})
}

// checkHidden compares an embedder's output for b with EmbedderHidden at the
// positions the mask holds and with padded(row, position, component,
// EmbedderHidden's row) at the others.
func checkHidden(t *testing.T, got []float32, b batch, dim int, padded func(i, p, j int, want [][]float32) float64) {
	t.Helper()
	seq := len(b.ids[0])
	for i := range b.ids {
		want := EmbedderHidden(b.ids[i], b.mask[i], b.types[i], dim)
		for p := range seq {
			for j := range dim {
				g := got[(i*seq+p)*dim+j]
				if b.mask[i][p] == 1 && !near(g, want[p][j]) {
					t.Fatalf("hidden[%d][%d][%d] = %v, want %v", i, p, j, g, want[p][j])
				}
				if pad := padded(i, p, j, want); b.mask[i][p] == 0 && math.Abs(float64(g)-pad) > 1e-5 {
					t.Fatalf("padded hidden[%d][%d][%d] = %v, want %v", i, p, j, g, pad)
				}
			}
		}
	}
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	read := func(name string, write func(string) error) []byte {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := write(path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	cross := func(p string) error { return WriteCrossEncoder(p, 1000) }
	embed := func(p string) error { return WriteEmbedder(p, 1000, 16) }
	if a, b := read("c1.onnx", cross), read("c2.onnx", cross); !bytes.Equal(a, b) {
		t.Error("WriteCrossEncoder output differs between calls")
	}
	if a, b := read("e1.onnx", embed), read("e2.onnx", embed); !bytes.Equal(a, b) {
		t.Error("WriteEmbedder output differs between calls")
	}
	if a, b := CrossEncoderONNX(0), CrossEncoderONNX(DefaultVocabSize); !bytes.Equal(a, b) {
		t.Error("CrossEncoderONNX(0) differs from CrossEncoderONNX(DefaultVocabSize)")
	}
	if err := WriteCrossEncoder(filepath.Join(dir, "missing", "x.onnx"), 10); err == nil {
		t.Error("WriteCrossEncoder into a missing directory succeeded")
	}
}

func TestWeights(t *testing.T) {
	seen := map[float32]bool{}
	for i := range int64(1000) {
		w := CrossEncoderWeight(i)
		if w < -1 || w >= 1 {
			t.Fatalf("CrossEncoderWeight(%d) = %v, want in [-1, 1)", i, w)
		}
		seen[w] = true
	}
	if len(seen) < 990 {
		t.Errorf("only %d distinct weights among 1000 ids", len(seen))
	}
	if EmbeddingWeight(5, 0) == EmbeddingWeight(5, 1) || EmbeddingWeight(5, 0) == EmbeddingWeight(6, 0) {
		t.Error("embedding weights repeat")
	}
}
