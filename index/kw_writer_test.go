package index

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// A damaged keyword list is a corrupt index, to rebuild: for a search that
// reads it, and for an incremental build that patches it.
func TestDamagedPostings(t *testing.T) {
	ctx := context.Background()
	vault := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "index.db")
	vaulttest.WriteTree(t, vault, map[string]string{"a.md": "# Wombat\n\nwombat burrows\n", "b.md": "# Lease\n\nlease writer\n"}, testTime)
	build(t, newFake(), vault, dbPath, false)
	db, err := openSQLite(dbPath, false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.ExecContext(ctx, `UPDATE kw_postings SET data = x'80' WHERE term = 'wombat'`)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("damaging the list of wombat: %d rows (%v)", n, err)
	}
	db.Close()

	d := open(t, dbPath)
	_, err = d.Keyword(ctx, KeywordQuery{Terms: []string{"wombat", "lease"}, Limit: 5})
	if want := "index unusable: a keyword posting list is damaged; run `vault-rag reindex`"; !errors.Is(err, ErrCorrupt) || err.Error() != want {
		t.Fatalf("search over a damaged list: %v, want %q", err, want)
	}
	d.Close()

	vaulttest.WriteTree(t, vault, map[string]string{"a.md": "# Wombat\n\nwombat tunnels\n"}, testTime.Add(time.Hour))
	_, err = Build(ctx, newFake(), BuildOptions{VaultPath: vault, DBPath: dbPath, Incremental: true})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "a keyword posting list is damaged") {
		t.Fatalf("incremental build over a damaged list: %v", err)
	}
}
