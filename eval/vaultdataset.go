package eval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A vault dataset: a folder holding a vault of notes (vault/, indexed in
// place and never written) and its labelled questions (queries.json, the
// shape of eval/queries.json), with optionally the client's expansions
// (client.json).
func init() {
	registerKind(DatasetKind{
		Name:     "vault",
		Describe: "a vault dataset folder (vault/, indexed in place, and queries.json)",
		Claims:   func(spec string, _ OpenOptions) bool { return isVaultDataset(spec) },
		Open: func(spec string, _ OpenOptions) (*Dataset, string, error) {
			ds, err := LoadVault(spec)
			return ds, spec, err
		},
	})
}

// queriesFile is eval/queries.json.
type queriesFile struct {
	Description string  `json:"description"`
	Queries     []Query `json:"queries"`
}

// isVaultDataset says whether dir holds a vault dataset: a vault/ folder and a
// queries.json beside it.
func isVaultDataset(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "vault"))
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "queries.json"))
	return err == nil
}

// LoadVault reads a vault dataset: dir/queries.json (the demo's shape) over
// dir/vault, which is indexed in place and never written. Its name is the
// folder's.
func LoadVault(dir string) (*Dataset, error) {
	return loadQueries(filepath.Base(filepath.Clean(dir)), filepath.Join(dir, "queries.json"), filepath.Join(dir, "vault"))
}

func loadQueries(name, p, vault string) (*Dataset, error) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read %s queries: %w", name, err)
	}
	var qf queriesFile
	if err := json.Unmarshal(raw, &qf); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(qf.Queries) == 0 {
		return nil, fmt.Errorf("%s: no queries", p)
	}
	ids := map[string]bool{}
	for _, q := range qf.Queries {
		if q.ID == "" || strings.TrimSpace(q.Text) == "" || len(q.Relevant) == 0 {
			return nil, fmt.Errorf("%s: query %q needs an id, a text and relevant notes", p, q.ID)
		}
		if ids[q.ID] {
			return nil, fmt.Errorf("%s: query id %s is used twice", p, q.ID)
		}
		ids[q.ID] = true
		for path, g := range q.Relevant {
			if g <= 0 {
				return nil, fmt.Errorf("%s: query %s: grade %d for %s must be positive", p, q.ID, g, path)
			}
			if _, err := os.Stat(filepath.Join(vault, filepath.FromSlash(path))); err != nil {
				return nil, fmt.Errorf("%s: query %s names %s, which is not in the vault", p, q.ID, path)
			}
		}
	}
	sum := sha256.Sum256(raw)
	return &Dataset{Name: name, VaultPath: vault, Queries: qf.Queries, Graded: graded(qf.Queries), Source: p, Hash: hex.EncodeToString(sum[:]), Vault: true}, nil
}
