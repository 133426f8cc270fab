package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
)

// The values of Health.Status.
const (
	StatusOK       = "ok"       // every stage of the served configuration and every tool can run
	StatusDegraded = "degraded" // the index is served, but something of what is served cannot run (DegradedStages)
	StatusError    = "error"    // the index cannot be read (Health.Index says why)
)

// Health is what GET /health reports. It describes what this server serves:
// the index and the configuration vault_search runs by default. What other
// configurations would need is informational, in OtherConfigurations, and
// never changes Status.
type Health struct {
	Status    string `json:"status"` // StatusOK, StatusDegraded or StatusError
	Version   string `json:"version"`
	Vault     string `json:"vault"` // the vault served, absolute with symlinks resolved
	IndexPath string `json:"index_path"`
	Notes     int    `json:"notes"`
	Chunks    int    `json:"chunks"`
	// Vectors says how many chunks have their vector: fewer than Chunks
	// while a first build is still embedding (keyword search finds every
	// note meanwhile; vector search, the embedded ones). Null without an
	// index.
	Vectors         *Coverage     `json:"vectors"`
	IndexAgeSeconds *int64        `json:"index_age_seconds"` // null without an index
	BuiltAt         string        `json:"built_at,omitempty"`
	Index           string        `json:"index"` // "ok", or why it cannot be read
	Config          string        `json:"config"`
	Models          []ModelHealth `json:"models"`
	// DegradedStages lists what of the served configuration and the tools
	// cannot run, and why; empty when everything can.
	DegradedStages []string `json:"degraded_stages"`
	// OtherConfigurations lists the other configurations a client may name
	// (configs/, experiments/) that cannot run here, and why.
	OtherConfigurations []ConfigHealth `json:"other_configurations"`
	Reindex             ReindexStatus  `json:"reindex"`
	Watch               bool           `json:"watch"`
	// Language is the vault's dominant writing system and the index's
	// embedder; its Warning, when the embedder was not trained on that
	// script, says what works and what does not. It never changes Status:
	// every stage runs, the vector branch ranks poorly.
	Language *LanguageHealth `json:"language,omitempty"`
}

// LanguageHealth is what /health says of the vault's language.
type LanguageHealth struct {
	// Name names the notes' main languages ("English", "Chinese and
	// English"), as the instructions do; "" for an index that did not count
	// its notes by language.
	Name     string  `json:"name,omitempty"`
	Script   string  `json:"script"`       // "Latin", "Han", … (vault.ScriptOf)
	Share    float64 `json:"script_share"` // of the vault's letters, when last indexed
	Embedder string  `json:"embedder"`
	Warning  string  `json:"warning,omitempty"`
}

// ModelHealth is one model of the manifest in this process.
type ModelHealth struct {
	Name       string      `json:"name"`
	Role       models.Role `json:"role"`
	StandInFor string      `json:"stand_in_for,omitempty"`
	Installed  bool        `json:"installed"`
	Loaded     bool        `json:"loaded"`
	Problem    string      `json:"problem,omitempty"`
}

// ConfigHealth is a configuration other than the served one that cannot run
// here: CannotRun says why, one line per missing model ("stage rerank needs
// ms-marco-MiniLM-L-6-v2 (cross-encoder): not fetched"), or why it cannot be
// read.
type ConfigHealth struct {
	Name      string   `json:"name"`
	CannotRun []string `json:"cannot_run"`
}

// degradedStages lists what this server cannot do of what it serves, one line
// per missing model naming the served configuration's stages and the tools
// that need it ("rerank: model not installed (ms-marco-MiniLM-L-6-v2: not
// fetched)"), or why the served configuration cannot be read. Models only
// other configurations need are not in it (otherConfigurations).
func (s *Server) degradedStages() []string {
	out := []string{}
	var order []string            // missing models, first need first
	need := map[string][]string{} // model → the stages and tools needing it
	problem := map[string]string{}
	add := func(model, what, why string) {
		if _, ok := need[model]; !ok {
			order = append(order, model)
			problem[model] = why
		}
		need[model] = append(need[model], what)
	}
	cfg, err := pipeline.Find(s.opts.ConfigRoot, s.opts.ConfigName)
	if err != nil {
		out = append(out, fmt.Sprintf("vault_search: configuration %s: %v", s.opts.ConfigName, err))
	} else if missing, err := pipeline.Missing(cfg, s.opts.Registry, s.opts.Embedder); err != nil {
		out = append(out, "vault_search: "+err.Error())
	} else {
		for _, m := range missing {
			add(m.Model, m.Stage, m.Problem)
		}
	}
	reg := s.opts.Registry
	if spec, err := reg.Manifest().Lookup(s.opts.Embedder); err != nil {
		out = append(out, strings.Join(toolsNeeding(models.RoleEmbedder), ", ")+": "+err.Error())
	} else if st := models.Check(reg.DataDir(), spec); !st.Installed {
		for _, tool := range toolsNeeding(models.RoleEmbedder) {
			add(spec.Name, tool, st.Problem)
		}
	}
	for _, model := range order {
		out = append(out, fmt.Sprintf("%s: %v (%s: %s)", strings.Join(need[model], ", "), models.ErrNotInstalled, model, problem[model]))
	}
	return out
}

// otherConfigurations lists the configurations a client may name, but the
// served one, that cannot run here, and why.
func (s *Server) otherConfigurations() []ConfigHealth {
	out := []ConfigHealth{}
	names, err := pipeline.Names(s.opts.ConfigRoot)
	if err != nil {
		return append(out, ConfigHealth{Name: "configs/, experiments/", CannotRun: []string{err.Error()}})
	}
	for _, name := range names {
		if name == s.opts.ConfigName {
			continue
		}
		cfg, err := pipeline.Find(s.opts.ConfigRoot, name)
		if err != nil {
			out = append(out, ConfigHealth{Name: name, CannotRun: []string{err.Error()}})
			continue
		}
		missing, err := pipeline.Missing(cfg, s.opts.Registry, s.opts.Embedder)
		if err != nil {
			out = append(out, ConfigHealth{Name: name, CannotRun: []string{err.Error()}})
			continue
		}
		if len(missing) > 0 {
			c := ConfigHealth{Name: name}
			for _, m := range missing {
				c.CannotRun = append(c.CannotRun, m.String())
			}
			out = append(out, c)
		}
	}
	return out
}

// Health reports the server's state: the index, the models, what of the
// served configuration cannot run, what other configurations cannot, and the
// reindexer.
func (s *Server) Health(ctx context.Context) Health {
	if s.pending != nil {
		return s.pendingHealth(ctx)
	}
	h := Health{Version: Version(), Vault: s.realVault, IndexPath: s.opts.DBPath, Config: s.opts.ConfigName, Watch: s.opts.Watch, Reindex: s.reindex.status(), Models: []ModelHealth{}}
	reg := s.opts.Registry
	for _, spec := range reg.Manifest().Models {
		st := models.Check(reg.DataDir(), spec)
		h.Models = append(h.Models, ModelHealth{Name: spec.Name, Role: spec.Role, StandInFor: spec.StandInFor,
			Installed: st.Installed, Loaded: reg.Loaded(spec.Name), Problem: st.Problem})
	}
	h.DegradedStages = s.degradedStages()
	h.OtherConfigurations = s.otherConfigurations()
	h.Index = "ok"
	if hd, release, err := s.acquire(ctx); err != nil {
		h.Index = err.Error()
	} else {
		st, err := hd.db.Stats(ctx)
		if err == nil {
			var cov index.Coverage
			if cov, err = hd.db.Coverage(ctx); err == nil {
				c := coverageOf(cov)
				h.Vectors = &c
			}
		}
		release()
		if err == nil {
			// acquire opened a file renamed over the one it had; if it is
			// still the old handle, the new file cannot be opened.
			if ferr := hd.db.CheckFile(); ferr != nil {
				s.mu.Lock()
				why := s.openErr
				s.mu.Unlock()
				err = fmt.Errorf("%w, and it cannot be opened (%v): the tools answer from the file opened before, which no build updates; run `vault-rag reindex` or call vault_reindex", ferr, why)
			}
		}
		if err != nil {
			h.Index = err.Error()
		} else {
			h.Notes, h.Chunks = st.Notes, st.Chunks
			if script, share := hd.db.Script(); script != "" {
				h.Language = &LanguageHealth{Name: hd.db.Languages().Describe(), Script: script, Share: share, Embedder: hd.db.Embedder()}
				if spec, err := reg.Manifest().Lookup(hd.db.Embedder()); err == nil {
					h.Language.Warning = spec.ScriptWarning(script, share)
				}
			}
			if !st.BuiltAt.IsZero() {
				h.BuiltAt = st.BuiltAt.UTC().Format(time.RFC3339)
				age := int64(s.opts.Clock().Sub(st.BuiltAt) / time.Second)
				h.IndexAgeSeconds = &age
			}
		}
	}
	s.buildHealth(&h)
	switch {
	case h.Index != "ok":
		h.Status = StatusError
	case len(h.DegradedStages) > 0, h.Reindex.Problem != "":
		h.Status = StatusDegraded
	default:
		h.Status = StatusOK
	}
	return h
}

// buildHealth fills in who else builds the index, and why it is not whole
// when nobody does: a failed build (retried at the next change or
// vault_reindex) or one that stopped half-way, killed or crashed, which it
// retries now.
func (s *Server) buildHealth(h *Health) {
	if holder, running, err := index.RunningBuild(s.opts.DBPath); err == nil && running && holder.PID != os.Getpid() {
		h.Reindex.OtherProcess = buildHolderOf(holder)
		return
	}
	if h.Reindex.Running || h.Reindex.Queued || h.Index != "ok" {
		return
	}
	switch {
	case h.Reindex.LastError != "":
		h.Reindex.Problem = "the last build failed: " + h.Reindex.LastError + "; the next change to the vault, or vault_reindex, retries it"
	case h.Vectors != nil && !h.Vectors.Complete():
		h.Reindex.Problem = fmt.Sprintf("a build stopped with %d of %d chunks embedded and none is running; retrying it", h.Vectors.Embedded, h.Vectors.Chunks)
		s.mu.Lock()
		if s.ctx.Err() == nil {
			s.background(func(ctx context.Context) {
				if _, err := s.reindex.Run(ctx); err != nil && ctx.Err() == nil {
					s.log.Error("retried build failed", "err", err)
				}
			})
		}
		s.mu.Unlock()
	}
}

// summary is a one-line form of a health report, for the log.
func (h Health) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d notes, %d chunks, config %s", h.Status, h.Notes, h.Chunks, h.Config)
	if h.Vectors != nil && !h.Vectors.Complete() {
		fmt.Fprintf(&b, "; vectors: %d of %d chunks embedded", h.Vectors.Embedded, h.Vectors.Chunks)
	}
	if h.Index != "ok" {
		b.WriteString("; index: " + h.Index)
	}
	if h.Reindex.Problem != "" {
		b.WriteString("; build: " + h.Reindex.Problem)
	}
	if o := h.Reindex.OtherProcess; o != nil {
		fmt.Fprintf(&b, "; process %d is building the index", o.PID)
	}
	for _, d := range h.DegradedStages {
		b.WriteString("; degraded: " + d)
	}
	if h.Language != nil && h.Language.Warning != "" {
		b.WriteString("; language: " + h.Language.Warning)
	}
	if len(h.OtherConfigurations) > 0 {
		names := make([]string, len(h.OtherConfigurations))
		for i, c := range h.OtherConfigurations {
			names[i] = c.Name
		}
		b.WriteString("; cannot run here (not served): " + strings.Join(names, ", "))
	}
	return b.String()
}
