package models

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vault-rag/vault-rag/internal/modeltest"
)

// testEnv is this test process's model settings, read from its environment
// as the binary reads them (VAULT_RAG_DATA, ONNXRUNTIME_LIB, ...).
func testEnv() Settings { return SettingsFrom(os.Getenv) }

// requireRuntime skips (fails under VAULT_RAG_REQUIRE_MODELS=1) when ONNX Runtime is not on this machine (`make setup`
// puts it in data/lib).
func requireRuntime(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(testEnv().Runtime.Lib); err != nil {
		modeltest.Missing(t, "ONNX Runtime not installed (%v); run `make setup`", err)
	}
}

// realTokenizer is the path of the embedder's tokenizer.json, which is
// byte-identical to the cross-encoder's; it skips when absent.
func realTokenizer(t *testing.T) string {
	t.Helper()
	p := filepath.Join(ModelDir(testEnv().DataDir, DefaultEmbedder), "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		modeltest.Missing(t, "tokenizer.json of %s not installed (%v); run `make setup`", DefaultEmbedder, err)
	}
	return p
}

// requireRealModel skips when the default embedder or ONNX Runtime is not
// installed.
func requireRealModel(t *testing.T) {
	t.Helper()
	requireRuntime(t)
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Lookup(DefaultEmbedder)
	if err != nil {
		t.Fatal(err)
	}
	if st := Check(testEnv().DataDir, s); !st.Installed {
		modeltest.Missing(t, "%s not installed in %s (%s); run `make setup`", DefaultEmbedder, testEnv().DataDir, st.Problem)
	}
}

var shared struct {
	once sync.Once
	reg  *Registry
	emb  *Embedder
	err  error
}

// realEmbedder is the installed default embedder, loaded once for the tests
// that only use it.
func realEmbedder(t *testing.T) *Embedder {
	t.Helper()
	requireRealModel(t)
	shared.once.Do(func() {
		shared.reg, shared.err = NewRegistry(testEnv().DataDir, testEnv().Runtime)
		if shared.err == nil {
			shared.emb, shared.err = shared.reg.Embedder(t.Context(), "")
		}
	})
	if shared.err != nil {
		t.Fatalf("load %s: %v", DefaultEmbedder, shared.err)
	}
	return shared.emb
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// wordsText returns n distinct-ish words.
func wordsText(prefix string, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = fmt.Sprintf("%s%d", prefix, i%97)
	}
	return strings.Join(ws, " ")
}
