package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// TestIndexPerVault: with no DB_PATH, each vault gets its own index under the
// data folder, so indexing a second vault leaves the first one's index as it
// was; an index is refused for another vault than its own, naming both and
// the ways out, until it is rebuilt with --force; status says what is
// indexed.
func TestIndexPerVault(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "notes"), filepath.Join(dir, "other", "notes") // one name, two vaults
	vaulttest.WriteTree(t, a, map[string]string{"lease.md": "# Leases\n\nA lease expires when nobody renews it.\n"}, time.Now())
	vaulttest.WriteTree(t, b, map[string]string{"bread.md": "# Bread\n\nRye loaves want a long, cold proof.\n"}, time.Now())
	ownA, err := index.DefaultPath(dataDir(t), a)
	if err != nil {
		t.Fatal(err)
	}
	ownB, _ := index.DefaultPath(dataDir(t), b)
	if ownA == ownB || filepath.Dir(ownA) != filepath.Join(dataDir(t), index.IndexDir) {
		t.Fatalf("default indexes %s and %s", ownA, ownB)
	}

	mustRun(t, dir, a, "", "reindex")
	before := fileSHA(t, ownA)
	mustRun(t, dir, b, "", "reindex")
	if after := fileSHA(t, ownA); after != before {
		t.Error("indexing a second vault changed the first one's index")
	}
	if r := mustRun(t, dir, b, "", "search", "--root", repoRoot, "--json", "rye proof"); !strings.Contains(r.stdout, "bread.md") {
		t.Errorf("search of the second vault: %s", r)
	}

	// Only the index named, from a folder with no vault/: the index's own
	// vault is used, by --db and by DB_PATH alike.
	empty := t.TempDir()
	if r := mustRun(t, empty, "", "", "search", "--root", repoRoot, "--db", ownB, "--json", "rye proof"); !strings.Contains(r.stdout, "bread.md") {
		t.Errorf("search --db with no vault named: %s", r)
	}
	if r := mustRun(t, empty, "", ownB, "search", "--root", repoRoot, "rye proof"); !strings.Contains(r.stdout, "bread.md") {
		t.Errorf("search with DB_PATH and no vault named: %s", r)
	}
	if r := mustRun(t, empty, "", "", "status", "--db", ownB, "--addr", "127.0.0.1:1"); !strings.Contains(r.stdout, b) || strings.Contains(r.stdout, "does not exist") || strings.Contains(r.stdout, "built from") {
		t.Errorf("status --db with no vault named should report the index's own vault: %s", r)
	}
	// A vault named and different is still refused, from that folder too.
	if r := run(t, empty, a, "", "search", "--root", repoRoot, "--db", ownB, "bread"); r.code == 0 || !strings.Contains(r.stderr, "built from the vault") {
		t.Errorf("search --db with another vault named: want the refusal, got %s", r)
	}

	// The second vault pointed at the first one's index.
	for _, args := range [][]string{
		{"search", "--root", repoRoot, "--db", ownA, "bread"},
		{"reindex", "--db", ownA},
		{"reindex", "--incremental", "--db", ownA},
	} {
		r := run(t, dir, b, "", args...)
		if r.code == 0 || !strings.Contains(r.stderr, ownA) || !strings.Contains(r.stderr, a) || !strings.Contains(r.stderr, b) ||
			!strings.Contains(r.stderr, "--db "+ownB) || !strings.Contains(r.stderr, "reindex --force") {
			t.Errorf("vault-rag %s on another vault's index: want a refusal naming both vaults, its own index and --force, got %s", strings.Join(args, " "), r)
		}
	}
	if after := fileSHA(t, ownA); after != before {
		t.Error("a refused command changed the first vault's index")
	}

	var st statusReport
	r := mustRun(t, dir, b, "", "status", "--json", "--addr", "127.0.0.1:1")
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r)
	}
	if st.Index != ownB || st.Notes != 1 || st.Chunks == 0 || st.Vectors == nil || !st.Vectors.Complete() || st.IndexProblem != "" ||
		st.Embedder == "" || !strings.Contains(st.EmbedderWhy, "Latin") || !strings.Contains(st.Language, "Latin script") || st.LastBuild == nil || st.LastBuild.Mode != "full" || st.Server.Running {
		t.Errorf("status --json of the second vault: %+v", st)
	}
	if r := mustRun(t, dir, b, "", "status", "--addr", "127.0.0.1:1"); !strings.Contains(r.stdout, ownB) || !strings.Contains(r.stdout, "1 notes") || !strings.Contains(r.stdout, "none at 127.0.0.1:1") {
		t.Errorf("status: %s", r)
	}
	// The one index of an earlier version, left in the data folder, is named.
	legacy := filepath.Join(dataDir(t), "vault.db")
	if err := os.WriteFile(legacy, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, dir, b, "", "status", "--addr", "127.0.0.1:1")
	os.Remove(legacy)
	if !strings.Contains(r.stdout, legacy+" is the single index of an earlier version") {
		t.Errorf("status with an earlier version's index: %s", r)
	}
	r = mustRun(t, dir, b, "", "status", "--json", "--db", ownA, "--addr", "127.0.0.1:1")
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || !strings.Contains(st.IndexProblem, a) {
		t.Errorf("status of another vault's index: %+v, %v", st, err)
	}

	mustRun(t, dir, b, "", "reindex", "--force", "--db", ownA)
	if r := mustRun(t, dir, b, "", "search", "--root", repoRoot, "--db", ownA, "--json", "rye proof"); !strings.Contains(r.stdout, "bread.md") {
		t.Errorf("search after the forced rebuild: %s", r)
	}
	if _, err := os.Stat(ownB); err != nil {
		t.Error(err)
	}
}
