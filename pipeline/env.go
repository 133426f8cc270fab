package pipeline

import (
	"context"

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

// Needs lists the models a configuration's stages load, by role and name.
func Needs(cfg *Config) []string {
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, s := range cfg.Stages {
		switch s := s.(type) {
		case *stages.Vector:
			add(orDefault(s.Model, models.DefaultEmbedder))
		case *stages.Hyde:
			add(orDefault(s.Model, models.DefaultEmbedder))
		case *stages.Rerank:
			if s.Scorer == "bi-encoder" {
				add(orDefault(s.Model, models.DefaultEmbedder))
			} else {
				add(orDefault(s.Model, models.DefaultCrossEncoder))
			}
		}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
