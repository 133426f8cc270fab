package models

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry loads models on first use, once per process: concurrent first
// callers wait for one load and share it. A failed load is not cached, so a
// model fetched later is picked up by the next call.
type Registry struct {
	dataDir  string
	rt       Runtime
	manifest Manifest

	mu      sync.Mutex
	entries map[string]*entry
	loads   atomic.Int64
}

// entry is one model's slot. Its lock is a channel so that a caller waiting
// for another's load can give up when its context ends.
type entry struct {
	lock chan struct{} // holds one token while the slot is in use
	val  any
}

func newEntry() *entry { return &entry{lock: make(chan struct{}, 1)} }

// acquire takes the slot, or returns ctx's error if ctx ends first.
func (e *entry) acquire(ctx context.Context) error {
	select {
	case e.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *entry) release() { <-e.lock }

// NewRegistry returns a registry over the models under dataDir, run as rt
// says.
func NewRegistry(dataDir string, rt Runtime) (*Registry, error) {
	m, err := LoadManifest()
	if err != nil {
		return nil, err
	}
	return &Registry{dataDir: dataDir, rt: rt, manifest: m, entries: map[string]*entry{}}, nil
}

// Loads counts the model loads this registry has performed.
func (r *Registry) Loads() int64 { return r.loads.Load() }

// Manifest is the registry's model list.
func (r *Registry) Manifest() Manifest { return r.manifest }

// DataDir is the folder the registry reads models from.
func (r *Registry) DataDir() string { return r.dataDir }

// Loaded reports whether a model is loaded in this process.
func (r *Registry) Loaded(name string) bool {
	r.mu.Lock()
	e := r.entries[name]
	r.mu.Unlock()
	if e == nil {
		return false
	}
	e.acquire(context.Background())
	defer e.release()
	return e.val != nil
}

// load returns the loaded model, loading it on first use. A caller whose
// context ends while it waits for the model (another caller's load, or its
// own turn) gets ctx's error; a load under way is not interrupted.
func (r *Registry) load(ctx context.Context, name string, open func(Spec, string) (any, error)) (any, error) {
	r.mu.Lock()
	e := r.entries[name]
	if e == nil {
		e = newEntry()
		r.entries[name] = e
	}
	r.mu.Unlock()
	if err := e.acquire(ctx); err != nil {
		return nil, err
	}
	defer e.release()
	if e.val != nil {
		return e.val, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	spec, err := r.manifest.Lookup(name)
	if err != nil {
		return nil, err
	}
	if st := Check(r.dataDir, spec); !st.Installed {
		return nil, fmt.Errorf("%w: %s (%s; run `vault-rag models fetch`)", ErrNotInstalled, name, st.Problem)
	}
	v, err := open(spec, ModelDir(r.dataDir, name))
	if err != nil {
		return nil, err
	}
	r.loads.Add(1)
	e.val = v
	return v, nil
}

// Embedder returns the named embedding model (DefaultEmbedder when name is "").
func (r *Registry) Embedder(ctx context.Context, name string) (*Embedder, error) {
	if name == "" {
		name = DefaultEmbedder
	}
	v, err := r.load(ctx, name, func(s Spec, dir string) (any, error) {
		if s.Role != RoleEmbedder {
			return nil, fmt.Errorf("model %s is a %s, not an embedder", s.Name, s.Role)
		}
		return OpenEmbedder(s, dir, r.rt)
	})
	if err != nil {
		return nil, err
	}
	return v.(*Embedder), nil
}

// CrossEncoder returns the named cross-encoder (DefaultCrossEncoder when name
// is ""), or a cost stand-in for one, which runs the same code (its
// StandInFor says its scores mean nothing).
func (r *Registry) CrossEncoder(ctx context.Context, name string) (*CrossEncoder, error) {
	if name == "" {
		name = DefaultCrossEncoder
	}
	v, err := r.load(ctx, name, func(s Spec, dir string) (any, error) {
		if s.Role != RoleCrossEncoder && s.Role != RoleCostStandIn {
			return nil, fmt.Errorf("model %s is a %s, not a cross-encoder", s.Name, s.Role)
		}
		return OpenCrossEncoder(s, dir, r.rt)
	})
	if err != nil {
		return nil, err
	}
	return v.(*CrossEncoder), nil
}

// Close releases every loaded model.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		e.acquire(context.Background())
		switch v := e.val.(type) {
		case *Embedder:
			v.b.close()
		case *CrossEncoder:
			v.b.close()
		}
		e.val = nil
		e.release()
	}
}

// OpenEmbedder loads an embedder from a folder holding model.onnx and
// tokenizer.json, without the manifest's install check (tests use it on models
// they build).
func OpenEmbedder(s Spec, dir string, rt Runtime) (*Embedder, error) {
	pooling, err := s.poolingAmong(embedderPoolings)
	if err != nil {
		return nil, err
	}
	b, err := newBERT(s.Name, filepath.Join(dir, "model.onnx"), filepath.Join(dir, "tokenizer.json"), cmp.Or(s.Output, OutputHidden), maxOr(s.MaxTokens), rt)
	if err != nil {
		return nil, err
	}
	b.rows = s.BatchRows
	dim := s.Dim
	if dim == 0 {
		dim = 384
	}
	return &Embedder{b: b, dim: dim, pooling: pooling, queryPrefix: s.QueryPrefix}, nil
}

// OpenCrossEncoder loads a cross-encoder from a folder holding model.onnx and
// tokenizer.json.
func OpenCrossEncoder(s Spec, dir string, rt Runtime) (*CrossEncoder, error) {
	pooling, err := s.poolingAmong(pairPoolings)
	if err != nil {
		return nil, err
	}
	b, err := newBERT(s.Name, filepath.Join(dir, "model.onnx"), filepath.Join(dir, "tokenizer.json"), cmp.Or(s.Output, OutputLogits), maxOr(s.MaxTokens), rt)
	if err != nil {
		return nil, err
	}
	return &CrossEncoder{b: b, pooling: pooling, standInFor: s.StandInFor}, nil
}

func maxOr(n int) int {
	if n <= 0 {
		return 512
	}
	return n
}

// Lazy is an embedder that loads its model on first use, for a build that may
// find nothing to embed: an incremental reindex of an unchanged vault then
// never loads the model (and an idle daemon stays small).
type Lazy struct {
	r    *Registry
	spec Spec
}

// Lazy returns the named embedder (DefaultEmbedder when name is ""), unloaded.
func (r *Registry) Lazy(name string) (*Lazy, error) {
	if name == "" {
		name = DefaultEmbedder
	}
	spec, err := r.manifest.Lookup(name)
	if err != nil {
		return nil, err
	}
	if spec.Role != RoleEmbedder {
		return nil, fmt.Errorf("model %s is a %s, not an embedder", spec.Name, spec.Role)
	}
	return &Lazy{r: r, spec: spec}, nil
}

// Name is the model's name, known without loading it.
func (l *Lazy) Name() string { return l.spec.Name }

// Dim is the vector width, from the manifest.
func (l *Lazy) Dim() int {
	if l.spec.Dim == 0 {
		return 384
	}
	return l.spec.Dim
}

// CountTokens loads the model's tokenizer and counts. If the model cannot be
// loaded it over-estimates (two tokens a word); the embedding that follows
// reports the load error.
func (l *Lazy) CountTokens(text string) int {
	e, err := l.r.Embedder(context.Background(), l.spec.Name)
	if err != nil {
		return 2 * len(strings.Fields(text))
	}
	return e.CountTokens(text)
}

// EmbedPassages loads the model and embeds.
func (l *Lazy) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	e, err := l.r.Embedder(ctx, l.spec.Name)
	if err != nil {
		return nil, err
	}
	return e.EmbedPassages(ctx, texts)
}
