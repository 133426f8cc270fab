package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/stages"
)

// NewEnv is the environment a process runs configurations in: the index and
// the installed models of reg (stages.NewEnv's policy).
func NewEnv(db *index.DB, reg *models.Registry) *stages.Env {
	return stages.NewEnv(db, ModelsOf(reg))
}

// ModelsOf gives stages the models of a models.Registry.
func ModelsOf(reg *models.Registry) stages.Models { return registryModels{reg} }

type registryModels struct{ reg *models.Registry }

// Embedder implements stages.Models.
func (m registryModels) Embedder(ctx context.Context, name string) (stages.Embedder, error) {
	e, err := m.reg.Embedder(ctx, name)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// CrossEncoder implements stages.Models.
func (m registryModels) CrossEncoder(ctx context.Context, name string) (stages.PairScorer, error) {
	c, err := m.reg.CrossEncoder(ctx, name)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Needs lists the models a configuration's stages load, by name; indexEmbedder
// stands in for stages that use the index's embedder.
func Needs(cfg *Config, indexEmbedder string) []string {
	var out []string
	for _, s := range cfg.Stages {
		mu, ok := s.(stages.ModelUser)
		if !ok {
			continue
		}
		for _, n := range mu.Needs() {
			if name := cmp.Or(n.Name, indexEmbedder); !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// MissingModel is a model a stage of a configuration needs and this machine
// has not installed.
type MissingModel struct {
	Stage   string      // the stage's name ("rerank")
	Model   string      // the model's name
	Role    models.Role // the model's role in the manifest
	Problem string      // why it is not installed ("not fetched")
}

// String is "stage S needs M (role): problem".
func (m MissingModel) String() string {
	return fmt.Sprintf("stage %s needs %s (%s): %s", m.Stage, m.Model, m.Role, m.Problem)
}

// Missing lists, stage by stage, the models of a configuration that are not
// installed; none means it can run. A model the manifest does not know is an
// error.
func Missing(cfg *Config, reg *models.Registry, indexEmbedder string) ([]MissingModel, error) {
	var missing []MissingModel
	for _, st := range cfg.Stages {
		for _, name := range Needs(&Config{Stages: []stages.Stage{st}}, indexEmbedder) {
			spec, err := reg.Manifest().Lookup(name)
			if err != nil {
				return nil, fmt.Errorf("configuration %s, stage %s: %w", cfg.Name, st.Name(), err)
			}
			if c := models.Check(reg.DataDir(), spec); !c.Installed {
				missing = append(missing, MissingModel{Stage: st.Name(), Model: name, Role: spec.Role, Problem: c.Problem})
			}
		}
	}
	return missing, nil
}

// MissingModels is Missing in words: "stage S needs M (role): problem" each.
func MissingModels(cfg *Config, reg *models.Registry, indexEmbedder string) ([]string, error) {
	ms, err := Missing(cfg, reg, indexEmbedder)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.String())
	}
	return out, nil
}
