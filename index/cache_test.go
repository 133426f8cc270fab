package index

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// smallBatches is the fake embedder with a model run of at most two texts,
// recording the token count of every text of every call.
type smallBatches struct {
	*fakeEmbedder
	calls [][]int
}

func (s *smallBatches) BatchLimits() (rows, tokens int) { return 2, 1 << 20 }

func (s *smallBatches) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	var n []int
	for _, t := range texts {
		n = append(n, s.CountTokens(t))
	}
	s.calls = append(s.calls, n)
	return s.fakeEmbedder.EmbedPassages(ctx, texts)
}

func cacheCount(t *testing.T, dbPath string) int {
	t.Helper()
	c, err := openCache(context.Background(), CachePath(dbPath), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	var n int
	if err := c.conn.QueryRowContext(context.Background(), `SELECT count(*) FROM embeddings`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBuildReusesCache: a second full build of an unchanged vault runs the
// model on nothing and holds the same vectors; another embedder embeds every
// chunk (the model is in the key); an edit re-embeds only the edited section
// and a full build prunes the vectors no chunk uses any more.
func TestBuildReusesCache(t *testing.T) {
	vault, dbPath := newFixture(t)
	emb := newFake()
	rep := build(t, emb, vault, dbPath, false)
	if rep.Embedded != fixtureChunks || rep.Reused != 0 {
		t.Fatalf("first build: %+v", rep)
	}
	first := chunkDump(t, open(t, dbPath))
	if n := cacheCount(t, dbPath); n != fixtureChunks {
		t.Errorf("the cache holds %d vectors, want %d", n, fixtureChunks)
	}

	emb.reset()
	rep = build(t, emb, vault, dbPath, false)
	if rep.Embedded != 0 || rep.Reused != fixtureChunks || len(emb.texts()) != 0 {
		t.Errorf("full build of an unchanged vault: %+v, %d texts embedded", rep, len(emb.texts()))
	}
	if again := chunkDump(t, open(t, dbPath)); !reflect.DeepEqual(first, again) {
		t.Error("a build from the cache holds other chunks or vectors than the cold one")
	}

	other := newFake()
	other.ModelName = "fake-other"
	if rep := build(t, other, vault, dbPath, false); rep.Embedded != fixtureChunks {
		t.Errorf("another embedder: %+v, want every chunk embedded", rep)
	}

	// Edit one section of alpha: only it is embedded, by either kind of build.
	p := filepath.Join(vault, "alpha.md")
	raw, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(raw), "xylophone details here", "xylophone details changed", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	emb.reset()
	if rep := build(t, emb, vault, dbPath, true); rep.Embedded != 1 {
		t.Errorf("incremental build after one edited section: %+v", rep)
	}
	emb.reset()
	if rep := build(t, emb, vault, dbPath, false); rep.Embedded != 0 {
		t.Errorf("full build after the incremental one: %+v, want everything from the cache", rep)
	}
	// fake-bow's vectors: the current chunks; fake-other's are kept.
	if n := cacheCount(t, dbPath); n != fixtureChunks+fixtureChunks {
		t.Errorf("after the prune the cache holds %d vectors, want %d (fake-bow) + %d (fake-other)", n, fixtureChunks, fixtureChunks)
	}
}

// TestBuildResumesFromCache: a first build that fails part-way leaves the
// keyword index and every batch finished before the failure, marked
// incomplete, and the next build, even an incremental one, embeds only the
// rest. Batches are sorted by length over the whole vault, not per slice.
func TestBuildResumesFromCache(t *testing.T) {
	vault, dbPath := newFixture(t)
	emb := &smallBatches{fakeEmbedder: newFake()}
	emb.failAfter = 3 // three batches of two, then fail
	if _, err := Build(context.Background(), emb, BuildOptions{VaultPath: vault, DBPath: dbPath}); err == nil {
		t.Fatal("the build with a failing embedder succeeded")
	}
	if n := cacheCount(t, dbPath); n != 6 {
		t.Errorf("after three batches of two the cache holds %d vectors, want 6", n)
	}
	d := open(t, dbPath)
	if got := keywordPaths(t, d, `"xylophone"`, Filter{}); !reflect.DeepEqual(got, []string{"alpha.md"}) {
		t.Errorf("the interrupted first build's keyword search = %v, want alpha.md", got)
	}
	if cov, err := d.Coverage(context.Background()); err != nil || cov.Chunks != fixtureChunks || cov.Embedded > 6 || cov.Complete() {
		t.Errorf("the interrupted first build's coverage = %+v, %v; want at most 6 of %d", cov, err, fixtureChunks)
	}
	d.Close()
	var lengths []int
	for _, c := range emb.calls[:3] {
		if len(c) > 2 {
			t.Errorf("a batch of %d texts, the limit is 2", len(c))
		}
		lengths = append(lengths, c...)
	}

	emb2 := &smallBatches{fakeEmbedder: newFake()}
	rep := build(t, emb2, vault, dbPath, true)
	if rep.Mode != "full" || !strings.Contains(rep.Fallback, "not all embedded") {
		t.Errorf("the resumed build ran %s (fallback %q), want a full one: the index is incomplete", rep.Mode, rep.Fallback)
	}
	if rep.Embedded != fixtureChunks-6 || rep.Reused != 6 {
		t.Errorf("the resumed build: %+v, want %d embedded and 6 reused", rep, fixtureChunks-6)
	}
	// Shortest first over every chunk: the resumed build's texts are no
	// shorter than the failed build's.
	for _, c := range emb2.calls {
		lengths = append(lengths, c...)
	}
	for i := 1; i < len(lengths); i++ {
		if lengths[i] < lengths[i-1] {
			t.Errorf("batches not sorted by length over the vault: %v", lengths)
			break
		}
	}
}

// TestBuildNoCache: a build with NoCache embeds every chunk though the cache
// beside the index holds them all, writes the same index, leaves that cache
// as it was, and leaves no throwaway cache behind.
func TestBuildNoCache(t *testing.T) {
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	cached := chunkDump(t, open(t, dbPath))
	emb := newFake()
	rep, err := Build(context.Background(), emb, BuildOptions{VaultPath: vault, DBPath: dbPath, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Embedded != fixtureChunks || rep.Reused != 0 || len(emb.texts()) != fixtureChunks {
		t.Errorf("NoCache build: %+v, %d texts embedded, want all %d", rep, len(emb.texts()), fixtureChunks)
	}
	if got := chunkDump(t, open(t, dbPath)); !reflect.DeepEqual(got, cached) {
		t.Error("the NoCache build holds other chunks or vectors than the cached one")
	}
	if n := cacheCount(t, dbPath); n != fixtureChunks {
		t.Errorf("the cache holds %d vectors after a NoCache build, want the %d it had", n, fixtureChunks)
	}
	entries, err := os.ReadDir(filepath.Dir(dbPath))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".nocache") || strings.Contains(e.Name(), ".building") {
			t.Errorf("%s left beside the index", e.Name())
		}
	}
}
