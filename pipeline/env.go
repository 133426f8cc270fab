package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/stages"
)

// RegistryModels gives stages the models of a models.Registry.
type RegistryModels struct{ R *models.Registry }

// Embedder implements stages.Models.
func (m RegistryModels) Embedder(ctx context.Context, name string) (stages.Embedder, error) {
	e, err := m.R.Embedder(ctx, name)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// CrossEncoder implements stages.Models.
func (m RegistryModels) CrossEncoder(ctx context.Context, name string) (stages.PairScorer, error) {
	c, err := m.R.CrossEncoder(ctx, name)
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

// MissingModels lists, for each stage of a configuration whose model is not
// installed, "stage S needs M (role): problem"; none means it can run.
func MissingModels(cfg *Config, reg *models.Registry, indexEmbedder string) ([]string, error) {
	var missing []string
	for _, st := range cfg.Stages {
		for _, name := range Needs(&Config{Stages: []stages.Stage{st}}, indexEmbedder) {
			spec, err := reg.Manifest().Lookup(name)
			if err != nil {
				return nil, fmt.Errorf("configuration %s, stage %s: %w", cfg.Name, st.Name(), err)
			}
			if c := models.Check(reg.DataDir(), spec); !c.Installed {
				missing = append(missing, fmt.Sprintf("stage %s needs %s (%s): %s", st.Name(), name, spec.Role, c.Problem))
			}
		}
	}
	return missing, nil
}
