package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// gatedEmbedder embeds a batch only when the test lets it: the test looks at
// the index between batches of a first build.
type gatedEmbedder struct {
	*smallBatches
	next chan chan struct{} // each call sends a channel and waits for it to close
}

func (g *gatedEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	done := make(chan struct{})
	select {
	case g.next <- done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	<-done
	return g.smallBatches.EmbedPassages(ctx, texts)
}

// TestStagedFirstBuild: a vault's first build puts the keyword index of every
// note in place before it embeds anything; while it embeds, the live index
// reports its coverage, keyword search finds every note, and vector search
// (exact, the binary pass waiting for the codes) ranks what is embedded.
// The finished index holds the same chunks and vectors as a build that
// embedded everything before swapping in, and the same binary search.
func TestStagedFirstBuild(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	emb := &gatedEmbedder{smallBatches: &smallBatches{fakeEmbedder: newFake()}, next: make(chan chan struct{})}
	type result struct {
		rep Report
		err error
	}
	out := make(chan result, 1)
	go func() {
		rep, err := Build(ctx, emb, BuildOptions{VaultPath: vault, DBPath: dbPath})
		out <- result{rep, err}
	}()

	// The first batch is being asked for: the index is already there.
	release := <-emb.next
	d := open(t, dbPath)
	if got := keywordPaths(t, d, `"xylophone"`, Filter{}); !reflect.DeepEqual(got, []string{"alpha.md"}) {
		t.Errorf("keyword search before any vector: %v, want alpha.md", got)
	}
	cov, err := d.Coverage(ctx)
	if err != nil || cov != (Coverage{Embedded: 0, Chunks: fixtureChunks}) {
		t.Errorf("coverage before any vector = %+v, %v; want 0 of %d", cov, err, fixtureChunks)
	}
	q := make([]float32, emb.Dim())
	q[0] = 1
	if hits, err := binaryKNN(ctx, d, q, 5, 100); err != nil || len(hits) != 0 {
		t.Errorf("vector search before any vector = %v, %v; want nothing", hits, err)
	}

	// Two batches of two: four chunks have vectors once committed.
	close(release)
	close(<-emb.next)
	waitFor(t, func() bool {
		c, err := d.Coverage(ctx)
		return err == nil && c.Embedded >= 2
	})
	hits, err := binaryKNN(ctx, d, q, 100, 100)
	if err != nil || len(hits) == 0 || len(hits) >= fixtureChunks {
		t.Errorf("vector search part-way = %d hits, %v; want the embedded chunks only", len(hits), err)
	}

	// Let the rest through.
	go func() {
		for done := range emb.next {
			close(done)
		}
	}()
	r := <-out
	close(emb.next)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.rep.Embedded != fixtureChunks || r.rep.Notes != fixtureNotes {
		t.Errorf("report %+v", r.rep.Counts)
	}
	if cov, err := d.Coverage(ctx); err != nil || !cov.Complete() || cov.Chunks != fixtureChunks {
		t.Errorf("coverage after the build = %+v, %v", cov, err)
	}
	if d.Stale() {
		t.Error("the staged build replaced the file after the first swap: readers would reopen it")
	}

	// The same vault built the other way: every vector before the swap.
	classic := filepath.Join(t.TempDir(), "classic.db")
	build(t, newFake(), vault, classic, false) // fills classic's cache: then an index...
	build(t, newFake(), vault, classic, false) // ...exists, and the rebuild is not staged
	c := open(t, classic)
	if !reflect.DeepEqual(chunkDump(t, d), chunkDump(t, c)) {
		t.Error("the staged index holds other chunks or vectors than the classic one")
	}
	for i := range q {
		q[i] = float32(i%7) - 3
	}
	a, err1 := binaryKNN(ctx, d, q, 5, 8)
	b, err2 := binaryKNN(ctx, c, q, 5, 8)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("binary search staged %v (%v), classic %v (%v)", a, err1, b, err2)
	}
}

// TestStagedStopResumes: a first build stopped while embedding leaves an
// index marked incomplete; serving it works, and the next build (even an
// incremental one, as the server runs) completes it without re-embedding
// what was done.
func TestStagedStopResumes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	vault, dbPath := newFixture(t)
	emb := &gatedEmbedder{smallBatches: &smallBatches{fakeEmbedder: newFake()}, next: make(chan chan struct{})}
	errc := make(chan error, 1)
	go func() {
		_, err := Build(ctx, emb, BuildOptions{VaultPath: vault, DBPath: dbPath})
		errc <- err
	}()
	close(<-emb.next)
	close(<-emb.next)
	third := <-emb.next // the first two batches are in the cache by now
	cancel()
	close(third)
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped build: %v, want context.Canceled", err)
	}
	if _, err := os.Stat(dbPath); err != nil {
		t.Fatalf("a stopped first build left no index: %v", err)
	}
	rep := build(t, newFake(), vault, dbPath, true)
	if rep.Mode != "full" || rep.Reused != 4 || rep.Embedded != fixtureChunks-4 {
		t.Errorf("resumed build %+v, want full with 4 reused", rep.Counts)
	}
	if cov, err := open(t, dbPath).Coverage(context.Background()); err != nil || !cov.Complete() {
		t.Errorf("coverage after the resumed build = %+v, %v", cov, err)
	}
}

// TestBuildRefusesAnotherVault: an index records its vault, and a build of
// another vault into it is refused naming both, unless forced.
func TestBuildRefusesAnotherVault(t *testing.T) {
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	other, _ := newFixture(t)
	before, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, incremental := range []bool{false, true} {
		_, err := Build(context.Background(), newFake(), BuildOptions{VaultPath: other, DBPath: dbPath, Incremental: incremental})
		var m *VaultMismatchError
		if !errors.As(err, &m) || !SameVault(m.Built, vault) || !SameVault(m.Asked, other) || m.Index != dbPath {
			t.Fatalf("build of another vault (incremental=%v): %v, want a VaultMismatchError naming both", incremental, err)
		}
	}
	if after, _ := os.ReadFile(dbPath); !reflect.DeepEqual(before, after) {
		t.Error("a refused build changed the index")
	}
	if err := open(t, dbPath).CheckVault(other); !IsVaultMismatch(err) {
		t.Errorf("CheckVault(other) = %v", err)
	}
	if err := open(t, dbPath).CheckVault(vault); err != nil {
		t.Errorf("CheckVault(own) = %v", err)
	}
	if _, err := Build(context.Background(), newFake(), BuildOptions{VaultPath: other, DBPath: dbPath, Force: true}); err != nil {
		t.Fatalf("forced build: %v", err)
	}
	if err := open(t, dbPath).CheckVault(other); err != nil {
		t.Errorf("after the forced build CheckVault(other) = %v", err)
	}
}

func TestDefaultPath(t *testing.T) {
	data := t.TempDir()
	a := filepath.Join(t.TempDir(), "notes")
	b := filepath.Join(t.TempDir(), "notes")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	pa, _ := DefaultPath(data, a)
	pb, _ := DefaultPath(data, b)
	pl, _ := DefaultPath(data, link)
	if pa == pb {
		t.Errorf("two vaults named notes share %s", pa)
	}
	if pa != pl {
		t.Errorf("a vault and a symlink to it: %s and %s", pa, pl)
	}
	if filepath.Dir(pa) != filepath.Join(data, IndexDir) {
		t.Errorf("index %s is not under %s", pa, filepath.Join(data, IndexDir))
	}
	for in, want := range map[string]string{"notes": "notes", "My Notes": "My-Notes", "笔记": "笔记", "..": "vault", "a/b": "a-b", ".hidden": "hidden"} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
