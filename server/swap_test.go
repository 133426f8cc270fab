package server

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
)

// TestSwapOpensOutsideTheLock: while the request that noticed a swapped-in
// index is still opening it, other requests are served from the old handle
// instead of waiting; then the new handle is swapped in, opened without the
// page check (nothing suggests damage).
func TestSwapOpensOutsideTheLock(t *testing.T) {
	vault := tinyVault(t)
	db := filepath.Join(t.TempDir(), "vault.db")
	ctx := context.Background()
	emb, err := fx.reg.Embedder(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: db}); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	s := newServer(t, func(o *Options) {
		o.VaultPath, o.DBPath = vault, db
		o.openIndex = func(ctx context.Context, path string) (*index.DB, error) {
			close(entered)
			<-release
			return index.Open(ctx, path)
		}
	})
	first, rel, err := s.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rel()
	oldDB := first.db

	if err := writeFile(filepath.Join(vault, "knowledge", "zebra.md"), []byte("# Zebra crossings\n\nStripes.\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := index.Build(ctx, emb, index.BuildOptions{VaultPath: vault, DBPath: db}); err != nil {
		t.Fatal(err)
	}

	type got struct {
		h   *handle
		rel func()
		err error
	}
	opener := make(chan got, 1)
	go func() {
		h, rel, err := s.acquire(ctx) // notices the swap and opens the new file
		opener <- got{h, rel, err}
	}()
	<-entered // the open is in progress, held by the hook

	other := make(chan got, 1)
	go func() {
		h, rel, err := s.acquire(ctx)
		other <- got{h, rel, err}
	}()
	select {
	case g := <-other:
		if g.err != nil {
			t.Fatalf("a request during the open: %v", g.err)
		}
		if g.h.db != oldDB {
			t.Error("a request during the open did not get the old handle")
		}
		// The rebuild was copied into the file the old handle holds: it
		// answers, whole, from the new build.
		if _, total, err := g.h.db.List(ctx, index.Filter{PathPrefix: "knowledge/zebra.md"}, 0, 10); err != nil || total != 1 {
			t.Errorf("the old handle: %d zebra notes, %v", total, err)
		}
		g.rel()
	case <-time.After(60 * time.Second): // a guard against a hang, not a timing
		t.Fatal("a request waited for the open of the new index")
	}

	close(release)
	g := <-opener
	if g.err != nil {
		t.Fatal(g.err)
	}
	defer g.rel()
	if g.h.db == oldDB {
		t.Fatal("the new index was not swapped in")
	}
	if g.h.db.Checked() != "" {
		t.Errorf("the swapped-in index was checked without a reason: %q", g.h.db.Checked())
	}
	h, rel2, err := s.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rel2()
	if h != g.h {
		t.Error("a request after the swap did not get the new handle")
	}
	if _, total, err := h.db.List(ctx, index.Filter{PathPrefix: "knowledge/zebra.md"}, 0, 10); err != nil || total != 1 {
		t.Errorf("the new handle: %d zebra notes, %v", total, err)
	}
}
