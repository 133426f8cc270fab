package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
)

// loadDotEnv sets KEY=VALUE lines of a .env file that the environment does not
// already set. A missing file is fine.
func loadDotEnv(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"'`)
		if _, set := os.LookupEnv(k); !set {
			os.Setenv(k, v)
		}
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// embedderName is the model indexes are built with: $VAULT_RAG_EMBEDDER, else
// the default (bge-small-en-v1.5-q, int8; bge-small-en-v1.5 is the fp32 original).
func embedderName() string { return envOr("VAULT_RAG_EMBEDDER", models.DefaultEmbedder) }

// chooseEmbedder is the model the index at dbPath of a vault is built with:
// the one asked for (a flag, else $VAULT_RAG_EMBEDDER), else the one the
// index was built with, else — the first index — the one for the vault's
// dominant script (models.Manifest.EmbedderFor: a vault mostly in Chinese
// gets bge-small-zh-v1.5-q). why says which, for the user.
func chooseEmbedder(ctx context.Context, m models.Manifest, asked, vaultDir, db string) (name, why string, err error) {
	if asked == "" {
		asked = os.Getenv("VAULT_RAG_EMBEDDER")
	}
	if asked != "" {
		if _, err := m.Lookup(asked); err != nil {
			return "", "", err
		}
		return asked, "as asked", nil
	}
	if _, err := os.Stat(db); err == nil {
		if d, err := index.Open(ctx, db); err == nil {
			name := d.Embedder()
			d.Close()
			if _, err := m.Lookup(name); err == nil {
				return name, "the index's", nil
			}
		}
	}
	script, share, err := vault.DetectScript(ctx, vaultDir)
	if err != nil {
		return "", "", err
	}
	name = m.EmbedderFor(script)
	if script == "" {
		return name, "the default: the vault has no text yet", nil
	}
	return name, fmt.Sprintf("chosen for the vault: %.0f%% of its letters are %s", 100*share, script), nil
}

func vaultPath() string { return envOr("VAULT_PATH", "vault") }

func dbPath() string { return envOr("DB_PATH", filepath.Join(modelSettings().DataDir, "vault.db")) }

// modelSettings is where this machine keeps the models and how it runs them,
// from the environment (models.SettingsFrom names the variables), with
// fetches going through the proxy Go's standard variables name (HTTPS_PROXY,
// NO_PROXY, ...).
func modelSettings() models.Settings {
	s := models.SettingsFrom(os.Getenv)
	s.Fetch.Proxy = http.ProxyFromEnvironment
	return s
}

func newRegistry() (*models.Registry, error) {
	s := modelSettings()
	return models.NewRegistry(s.DataDir, s.Runtime)
}
