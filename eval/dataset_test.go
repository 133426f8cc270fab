package eval_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/internal/evaltest"
)

// TestOpenDataset opens one dataset of each registered kind by its spec, with
// the client expansions it has, and refuses a spec that no kind, or two
// kinds, claim.
func TestOpenDataset(t *testing.T) {
	work := t.TempDir()
	beir := evaltest.TinyBEIR(t)
	vaultDS := filepath.Join(t.TempDir(), "notes")
	writeFile(t, filepath.Join(vaultDS, "vault", "a.md"), "# A\n\nalpha\n")
	writeFile(t, filepath.Join(vaultDS, "queries.json"), `{"queries": [{"id": "q1", "text": "alpha", "relevant": {"a.md": 1}}]}`)
	evaltest.WriteExpansions(t, filepath.Join(vaultDS, eval.ClientFile), []eval.Query{{ID: "q1"}}, func(eval.Query) string { return "alpha" })
	expansions := t.TempDir()
	demo, err := eval.LoadDemo(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	evaltest.WriteExpansions(t, filepath.Join(expansions, "demo.json"), demo.Queries, func(q eval.Query) string { return q.Text })
	o := eval.OpenOptions{Root: repoRoot, WorkDir: work, Expansions: expansions}

	for _, tc := range []struct {
		spec, name, vault string
		queries           int
		isVault           bool
		expansions        string
	}{
		{"demo", "demo", filepath.Join(repoRoot, "vault"), len(demo.Queries), true, filepath.Join(expansions, "demo.json")},
		{vaultDS, "notes", filepath.Join(vaultDS, "vault"), 1, true, filepath.Join(vaultDS, eval.ClientFile)},
		{beir, "tiny", filepath.Join(work, "tiny", "vault"), 5, false, ""},
	} {
		ds, err := eval.OpenDataset(tc.spec, o)
		if err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		if ds.Name != tc.name || ds.VaultPath != tc.vault || len(ds.Queries) != tc.queries || ds.Vault != tc.isVault || ds.ExpansionsSource != tc.expansions {
			t.Errorf("%s: opened %q over %s, %d queries, vault %v, expansions %q; want %q over %s, %d, %v, %q",
				tc.spec, ds.Name, ds.VaultPath, len(ds.Queries), ds.Vault, ds.ExpansionsSource, tc.name, tc.vault, tc.queries, tc.isVault, tc.expansions)
		}
		if (tc.expansions != "") != (ds.Expansions != nil) {
			t.Errorf("%s: expansions %v, want them from %q", tc.spec, ds.Expansions, tc.expansions)
		}
	}

	// A folder of none of the kinds is named with every kind it could have
	// been.
	_, err = eval.OpenDataset(t.TempDir(), o)
	if err == nil {
		t.Fatal("an empty folder opened as a dataset")
	}
	for _, k := range eval.DatasetKinds() {
		if !strings.Contains(err.Error(), k.Describe) {
			t.Errorf("the error %q does not name the kind %s", err, k.Name)
		}
	}
	// A folder that two kinds claim is refused, not read as either.
	both := filepath.Join(t.TempDir(), "both")
	writeFile(t, filepath.Join(both, "vault", "a.md"), "# A\n")
	writeFile(t, filepath.Join(both, "queries.json"), `{"queries": []}`)
	writeFile(t, filepath.Join(both, "corpus.jsonl"), "")
	if _, err := eval.OpenDataset(both, o); err == nil || !strings.Contains(err.Error(), "is both a") {
		t.Errorf("a folder of two kinds: %v", err)
	}
	// A kind's own error comes through.
	bad := filepath.Join(t.TempDir(), "bad")
	writeFile(t, filepath.Join(bad, "vault", "a.md"), "# A\n")
	writeFile(t, filepath.Join(bad, "queries.json"), `{"queries": [{"id": "q1", "text": "alpha", "relevant": {"missing.md": 1}}]}`)
	if _, err := eval.OpenDataset(bad, o); err == nil || !strings.Contains(err.Error(), "not in the vault") {
		t.Errorf("a vault dataset naming a missing note: %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
