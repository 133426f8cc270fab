package bench

import (
	"fmt"

	"github.com/vault-rag/vault-rag/models"
)

// The models the sections time are taken from the manifest, so a model added
// or renamed there is timed without an edit here.

// reindexModels are the embedders the reindex section times: the default (an
// int8 export) and the original it was quantized from (its manifest
// reference), when it has one.
func reindexModels() ([]string, error) {
	m, err := models.LoadManifest()
	if err != nil {
		return nil, err
	}
	spec, err := m.Lookup(models.DefaultEmbedder)
	if err != nil {
		return nil, fmt.Errorf("the reindex section's models: %w", err)
	}
	out := []string{models.DefaultEmbedder}
	if spec.Reference != "" {
		out = append(out, spec.Reference)
	}
	return out, nil
}

// rerankModels are the cross-encoders the rerank section times: the default
// (its rows say "model not installed" until it is) and its cost stand-ins,
// in the manifest's order, which have its encoder (6 layers, 384 wide, 12
// heads, the same vocabulary) and so its cost per pair, but no relevance
// head.
func rerankModels() ([]string, error) {
	m, err := models.LoadManifest()
	if err != nil {
		return nil, err
	}
	out := []string{models.DefaultCrossEncoder}
	for _, s := range m.Models {
		if s.Role == models.RoleCostStandIn && s.StandInFor == models.DefaultCrossEncoder {
			out = append(out, s.Name)
		}
	}
	return out, nil
}
