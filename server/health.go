package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// Health is what GET /health reports.
type Health struct {
	Status          string        `json:"status"` // "ok" or "degraded"
	Version         string        `json:"version"`
	Notes           int           `json:"notes"`
	Chunks          int           `json:"chunks"`
	IndexAgeSeconds *int64        `json:"index_age_seconds"` // null without an index
	BuiltAt         string        `json:"built_at,omitempty"`
	Index           string        `json:"index"` // "ok", or why there is none
	Config          string        `json:"config"`
	Models          []ModelHealth `json:"models"`
	DegradedStages  []string      `json:"degraded_stages"`
	Reindex         ReindexStatus `json:"reindex"`
	Watch           bool          `json:"watch"`
}

// ModelHealth is one model of the manifest in this process.
type ModelHealth struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	Installed bool   `json:"installed"`
	Loaded    bool   `json:"loaded"`
	Problem   string `json:"problem,omitempty"`
}

// toolsNeeding names, per model role, the tools that cannot run without a
// model of that role; the stages say for themselves (pipeline.StagesNeeding).
var toolsNeeding = map[string][]string{
	stages.RoleEmbedder: {"vault_delta", "vault_reindex"},
}

// degradedStages lists what this server cannot do for want of a model, one
// line per missing model: "rerank: model not installed (ms-marco-MiniLM-L-6-v2: not fetched)".
func (s *Server) degradedStages() []string {
	out := []string{}
	reg := s.opts.Registry
	for _, spec := range reg.Manifest().Models {
		if spec.Role == "embedder" && spec.Name != s.opts.Embedder {
			continue // another embedder than the index's degrades nothing
		}
		if spec.StandInFor != "" {
			continue // a cost stand-in (for benchmarks) serves no search
		}
		if st := models.Check(reg.DataDir(), spec); !st.Installed {
			what := strings.Join(append(pipeline.StagesNeeding(spec.Role), toolsNeeding[spec.Role]...), ", ")
			if what == "" {
				what = spec.Role
			}
			out = append(out, fmt.Sprintf("%s: %v (%s: %s)", what, models.ErrNotInstalled, spec.Name, st.Problem))
		}
	}
	return out
}

// Health reports the server's state: the index, the models, what is degraded
// and the reindexer.
func (s *Server) Health(ctx context.Context) Health {
	h := Health{Version: Version(), Config: s.opts.ConfigName, Watch: s.opts.Watch, Reindex: s.reindex.status(), Models: []ModelHealth{}}
	reg := s.opts.Registry
	for _, spec := range reg.Manifest().Models {
		st := models.Check(reg.DataDir(), spec)
		h.Models = append(h.Models, ModelHealth{Name: spec.Name, Role: spec.Role, Installed: st.Installed, Loaded: reg.Loaded(spec.Name), Problem: st.Problem})
	}
	h.DegradedStages = s.degradedStages()
	if cfg, err := pipeline.Find(s.opts.ConfigRoot, s.opts.ConfigName); err != nil {
		h.DegradedStages = append(h.DegradedStages, fmt.Sprintf("vault_search: configuration %s: %v", s.opts.ConfigName, err))
	} else if err := s.checkModels(cfg); err != nil {
		h.DegradedStages = append(h.DegradedStages, "vault_search: "+err.Error())
	}
	h.Index = "ok"
	if hd, release, err := s.acquire(ctx); err != nil {
		h.Index = err.Error()
		h.DegradedStages = append(h.DegradedStages, "all tools but vault_reindex: "+err.Error())
	} else {
		st, err := hd.db.Stats(ctx)
		release()
		if err != nil {
			h.Index = err.Error()
			h.DegradedStages = append(h.DegradedStages, "index: "+err.Error())
		} else {
			h.Notes, h.Chunks = st.Notes, st.Chunks
			if !st.BuiltAt.IsZero() {
				h.BuiltAt = st.BuiltAt.UTC().Format(time.RFC3339)
				age := int64(s.opts.Clock().Sub(st.BuiltAt) / time.Second)
				h.IndexAgeSeconds = &age
			}
		}
	}
	h.Status = "ok"
	if len(h.DegradedStages) > 0 {
		h.Status = "degraded"
	}
	return h
}

// summary is a one-line form of a health report, for the log.
func (h Health) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d notes, %d chunks, config %s", h.Status, h.Notes, h.Chunks, h.Config)
	for _, d := range h.DegradedStages {
		b.WriteString("; degraded: " + d)
	}
	return b.String()
}
