package main

import (
	"context"
	"fmt"
	"os"

	"github.com/vault-rag/vault-rag/models"
)

// ensureEmbedder fetches the embedder a command has chosen when it is not
// installed (models.Ensure: what `vault-rag models fetch NAME` does), so a
// vault that needs a model setup did not bring (bge-small-zh-v1.5-q for a
// vault mostly in Chinese) gets it the first time, once. The lines go to
// stderr, prefixed with the command's name: under `serve --transport stdio`
// stdout carries the protocol alone. An installed model prints nothing.
func ensureEmbedder(ctx context.Context, cmd, name string) error {
	m, err := models.LoadManifest()
	if err != nil {
		return err
	}
	spec, err := m.Lookup(name)
	if err != nil {
		return err
	}
	s := modelSettings()
	_, err = models.Ensure(ctx, s.DataDir, spec, s.Fetch, func(line string) {
		fmt.Fprintf(os.Stderr, "%s: %s\n", cmd, line)
	})
	if err != nil {
		return fmt.Errorf("the embedder %s is not installed and could not be fetched: %w", name, err)
	}
	return nil
}
