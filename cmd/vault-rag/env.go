package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
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
//
// record is the reason the index keeps (DB.Meta("embedder_why")): why the
// model was chosen when the index's first build chose it, kept by every
// later build.
func chooseEmbedder(ctx context.Context, m models.Manifest, asked, vaultDir, db string) (name, why, record string, err error) {
	if asked == "" {
		asked = os.Getenv("VAULT_RAG_EMBEDDER")
	}
	if asked != "" {
		if _, err := m.Lookup(asked); err != nil {
			return "", "", "", err
		}
		return asked, "as asked", "as asked", nil
	}
	if _, err := os.Stat(db); err == nil {
		if d, err := index.Open(ctx, db); err == nil {
			name, mine := d.Embedder(), d.CheckVault(vaultDir) == nil
			why := d.Meta("embedder_why")
			d.Close()
			if _, err := m.Lookup(name); err == nil && mine {
				if why == "" {
					return name, "the index's", "", nil
				}
				return name, "the index's: " + why, why, nil
			}
		}
	}
	script, share, err := vault.DetectScript(ctx, vaultDir)
	if err != nil {
		return "", "", "", err
	}
	name = m.EmbedderFor(script)
	if script == "" {
		why = "the default: the vault has no text yet"
		return name, why, why, nil
	}
	why = fmt.Sprintf("chosen for the vault: %.0f%% of its letters are %s", 100*share, script)
	return name, why, why, nil
}

func vaultPath() string { return envOr("VAULT_PATH", "vault") }

// indexVault is the vault of a command that reads an index (search,
// status): the one the user named (--vault, VAULT_PATH); else, when only the
// index is named (--db, DB_PATH), the vault that index was built from; else
// flagVault's default, ./vault. fromIndex says the index chose it: the
// command then needs no vault folder here, as it reads only the index.
func indexVault(ctx context.Context, fs *flag.FlagSet, flagVault, flagDB string) (vault string, fromIndex bool) {
	named := os.Getenv("VAULT_PATH") != ""
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "vault" {
			named = true
		}
	})
	db := flagDB
	if db == "" {
		db = os.Getenv("DB_PATH")
	}
	if named || db == "" {
		return flagVault, false
	}
	if built := index.BuiltFrom(ctx, db); built != "" {
		return built, true
	}
	return flagVault, false
}

// dbFlagUsage is the --db flag's help, the same for every command.
const dbFlagUsage = "the index `file` (default: the vault's own, $VAULT_RAG_DATA/" + index.IndexDir + "/NAME-HASH.db) [DB_PATH]"

// indexPath is the index file of the vault: --db when given, else DB_PATH,
// else the vault's own under the data folder (index.DefaultPath), so two
// vaults never share one.
func indexPath(flagDB, vault string) (string, error) {
	if flagDB != "" {
		return flagDB, nil
	}
	if p := os.Getenv("DB_PATH"); p != "" {
		return p, nil
	}
	return index.DefaultPath(modelSettings().DataDir, vault)
}

// vaultMismatchHint adds the way out to an index built from another vault:
// the vault's own index, or rebuilding this file from it.
func vaultMismatchHint(err error) error {
	var m *index.VaultMismatchError
	if !errors.As(err, &m) {
		return err
	}
	hint := ""
	if own, perr := index.DefaultPath(modelSettings().DataDir, m.Asked); perr == nil && !samePath(own, m.Index) {
		hint = fmt.Sprintf("\n  to use the index of %s, pass --db %s (its own; or unset DB_PATH and --db)", m.Asked, own)
	}
	hint += fmt.Sprintf("\n  to rebuild %s from %s instead, run: vault-rag reindex --force --vault %s --db %s", m.Index, m.Asked, m.Asked, m.Index)
	return fmt.Errorf("%w%s", err, hint)
}

func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

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
