package models

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestRegistryLoadsOnce(t *testing.T) {
	requireRealModel(t)
	r, err := NewRegistry(testEnv().DataDir, testEnv().Runtime)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Loaded(DefaultEmbedder) || r.Loads() != 0 {
		t.Fatalf("a fresh registry has loaded something: %d loads", r.Loads())
	}

	const n = 8
	got := make([]*Embedder, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = r.Embedder(context.Background(), "")
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if got[i] == nil || got[i] != got[0] {
			t.Errorf("caller %d got %p, caller 0 got %p: want one shared model", i, got[i], got[0])
		}
	}
	if l := r.Loads(); l != 1 {
		t.Errorf("Loads() = %d after %d concurrent first calls, want 1", l, n)
	}
	again, err := r.Embedder(context.Background(), DefaultEmbedder)
	if err != nil || again != got[0] || r.Loads() != 1 {
		t.Errorf("a later call by name = %p, %v, %d loads; want the same model, 1 load", again, err, r.Loads())
	}
	if !r.Loaded(DefaultEmbedder) || r.Loaded(DefaultCrossEncoder) {
		t.Errorf("Loaded(embedder) = %v, Loaded(cross-encoder) = %v; want true, false", r.Loaded(DefaultEmbedder), r.Loaded(DefaultCrossEncoder))
	}
	if _, err := got[0].EmbedPassages(context.Background(), []string{"works"}); err != nil {
		t.Errorf("the shared model does not embed: %v", err)
	}
	r.Close()
	if r.Loaded(DefaultEmbedder) {
		t.Error("still loaded after Close")
	}
}

func TestRegistryCrossEncoderNotInstalled(t *testing.T) {
	requireRuntime(t)
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := m.Lookup(DefaultCrossEncoder)
	if err != nil {
		t.Fatal(err)
	}
	if Check(testEnv().DataDir, spec).Installed {
		t.Skipf("%s is installed in %s; this test needs it absent", DefaultCrossEncoder, testEnv().DataDir)
	}
	r, err := NewRegistry(testEnv().DataDir, testEnv().Runtime)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ce, err := r.CrossEncoder(context.Background(), "")
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("CrossEncoder = %v, %v; want an error wrapping ErrNotInstalled", ce, err)
	}
	if !strings.Contains(err.Error(), DefaultCrossEncoder) || !strings.Contains(err.Error(), "models fetch") {
		t.Errorf("error %q should name the model and how to fetch it", err)
	}
	if r.Loads() != 0 || r.Loaded(DefaultCrossEncoder) {
		t.Errorf("%d loads after a failed load", r.Loads())
	}
}

// fakeInstall makes Check accept a model without its real bytes: sparse files
// of the pinned sizes and a stamp with the pinned hashes.
func fakeInstall(t *testing.T, dataDir string, s Spec) {
	t.Helper()
	dir := ModelDir(dataDir, s.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st := &stamp{Source: "fake", SHA256: map[string]string{}}
	for _, f := range s.Files {
		fh, err := os.Create(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if err := fh.Truncate(f.Size); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		st.SHA256[f.Name] = f.SHA256
	}
	install(t, dataDir, s, nil, st)
	if !Check(dataDir, s).Installed {
		t.Fatal("fake install not accepted by Check")
	}
}

func TestRegistryErrors(t *testing.T) {
	requireRuntime(t)
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	for _, s := range m.Models {
		fakeInstall(t, dataDir, s)
	}
	r, err := NewRegistry(dataDir, testEnv().Runtime)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	tests := []struct {
		name string
		load func() error
		want string
	}{
		{"unknown model", func() error { _, err := r.Embedder(ctx, "no-such-model"); return err }, "unknown model"},
		{"cross-encoder as embedder", func() error { _, err := r.Embedder(ctx, DefaultCrossEncoder); return err }, "not an embedder"},
		{"embedder as cross-encoder", func() error { _, err := r.CrossEncoder(ctx, DefaultEmbedder); return err }, "not a cross-encoder"},
		{"files that are not a model", func() error { _, err := r.Embedder(ctx, ""); return err }, DefaultEmbedder},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // a failure is not cached: the second call fails the same way
				err := tc.load()
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error = %v, want it to contain %q", err, tc.want)
				}
				if errors.Is(err, ErrNotInstalled) {
					t.Errorf("error %v wraps ErrNotInstalled for an installed model", err)
				}
			}
		})
	}
	if r.Loads() != 0 || r.Loaded(DefaultEmbedder) || r.Loaded(DefaultCrossEncoder) {
		t.Errorf("%d loads after failures only", r.Loads())
	}
}

// A model missing at the first call and fetched later is picked up.
func TestRegistryFailedLoadNotCached(t *testing.T) {
	requireRealModel(t)
	dataDir := t.TempDir()
	r, err := NewRegistry(dataDir, testEnv().Runtime)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Embedder(context.Background(), ""); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Embedder on an empty data folder = %v, want ErrNotInstalled", err)
	}
	// "Fetch" it: link the installed files in.
	src := ModelDir(testEnv().DataDir, DefaultEmbedder)
	dst := ModelDir(dataDir, DefaultEmbedder)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"model.onnx", "tokenizer.json", stampName} {
		abs, err := filepath.Abs(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dst, name)); err != nil {
			t.Fatal(err)
		}
	}
	e, err := r.Embedder(context.Background(), "")
	if err != nil || e == nil {
		t.Fatalf("Embedder after the fetch = %v, %v", e, err)
	}
	if r.Loads() != 1 {
		t.Errorf("Loads() = %d, want 1", r.Loads())
	}
}

// The files are looked for before ONNX Runtime is touched: this needs no model
// and no runtime, and never skips.
func TestOpenMissingFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenEmbedder(Spec{Name: "nothing-here"}, dir, testEnv().Runtime); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("OpenEmbedder on an empty folder = %v, want ErrNotInstalled", err)
	}
	if _, err := OpenCrossEncoder(Spec{Name: "nothing-here"}, dir, testEnv().Runtime); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("OpenCrossEncoder on an empty folder = %v, want ErrNotInstalled", err)
	}
}

func TestLazyLoadsOnFirstUse(t *testing.T) {
	requireRealModel(t)
	reg, err := NewRegistry(testEnv().DataDir, testEnv().Runtime)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	l, err := reg.Lazy("")
	if err != nil {
		t.Fatal(err)
	}
	if l.Name() != DefaultEmbedder || l.Dim() != 384 || reg.Loads() != 0 {
		t.Fatalf("before use: name %q dim %d loads %d, want %q 384 0", l.Name(), l.Dim(), reg.Loads(), DefaultEmbedder)
	}
	if n := l.CountTokens("compaction stalled overnight"); n < 3 || reg.Loads() != 1 {
		t.Fatalf("after CountTokens: %d tokens, %d loads; want ≥3 tokens and 1 load", n, reg.Loads())
	}
	vecs, err := l.EmbedPassages(context.Background(), []string{"a", "b"})
	if err != nil || len(vecs) != 2 || reg.Loads() != 1 {
		t.Fatalf("EmbedPassages: %d vectors, err %v, %d loads; want 2, nil, 1", len(vecs), err, reg.Loads())
	}
	if _, err := reg.Lazy(DefaultCrossEncoder); err == nil {
		t.Error("Lazy accepted a cross-encoder")
	}
	if _, err := reg.Lazy("no-such-model"); err == nil {
		t.Error("Lazy accepted an unknown model")
	}
}
