package server

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
)

// TestSwapOpensOutsideTheLock: the request that notices a rebuild copied
// into the index opens it outside the server's lock; another request meanwhile
// is not served from the old handle, whose metadata and caches describe the
// old build (its snapshot would be of the new one), but waits for that open;
// then both get the new handle, opened without the page check (nothing
// suggests damage).
func TestSwapOpensOutsideTheLock(t *testing.T) {
	vault, db, emb := builtTinyVault(t)
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	s := newServer(t, func(o *Options) {
		o.VaultPath, o.DBPath = vault, db
		o.openIndex = func(ctx context.Context, path string) (*index.DB, error) {
			close(entered)
			<-release
			return index.Open(ctx, path)
		}
	})
	// The handle serving the first build (acquire hands requests views of
	// it, snapshots of the file).
	s.mu.Lock()
	oldDB := s.cur.db
	s.mu.Unlock()

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
	// The request during the open waits for it (a guard against a hang, not
	// a timing: the open is held until release is closed).
	select {
	case g := <-other:
		t.Fatalf("a request during the open was answered from the old build's handle (err %v)", g.err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, total, err := oldDB.List(ctx, index.Filter{PathPrefix: "knowledge/zebra.md"}, 0, 10); err != nil || total != 1 {
		t.Errorf("the rebuild was not copied into the served file: %d zebra notes, %v", total, err)
	}

	close(release)
	g := <-opener
	if g.err != nil {
		t.Fatal(g.err)
	}
	defer g.rel()
	o := <-other
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.h.db.Stale() {
		t.Error("the request that waited for the open was not given the new index")
	}
	o.rel()
	s.mu.Lock()
	cur := s.cur.db
	s.mu.Unlock()
	if cur == oldDB || cur.Stale() || g.h.db.Stale() {
		t.Fatal("the new index was not swapped in")
	}
	if cur.CheckReason() != "" {
		t.Errorf("the swapped-in index was checked without a reason: %q", cur.CheckReason())
	}
	h, rel2, err := s.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rel2()
	if _, total, err := h.db.List(ctx, index.Filter{PathPrefix: "knowledge/zebra.md"}, 0, 10); err != nil || total != 1 {
		t.Errorf("the new handle: %d zebra notes, %v", total, err)
	}
}
