package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fillCache stores n vectors of dim floats in the cache at path, in batches.
func fillCache(t *testing.T, path string, n, dim int) {
	t.Helper()
	ctx := context.Background()
	c, err := openCache(ctx, path, "m")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for i := 0; i < n; i += 500 {
		var hs []string
		var vs [][]float32
		for j := i; j < min(n, i+500); j++ {
			v := make([]float32, dim)
			for d := range v {
				v[d] = float32(j*dim + d)
			}
			hs = append(hs, fmt.Sprintf("h%06d", j))
			vs = append(vs, v)
		}
		if err := c.put(ctx, hs, vs); err != nil {
			t.Fatal(err)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestCompactCache: a cache most of whose rows were deleted shrinks to what it
// holds, with the remaining rows intact; one with little free space, or none
// at all, is left as it is.
func TestCompactCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vault.db"+CacheSuffix)
	const n, dim = 6000, 384 // about 9 MB of vectors
	fillCache(t, path, n, dim)

	// Little free space: a few rows deleted, nothing is done.
	c, err := openCache(ctx, path, "m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.conn.ExecContext(ctx, `DELETE FROM embeddings WHERE hash < 'h000100'`); err != nil {
		t.Fatal(err)
	}
	c.close()
	full := fileSize(t, path)
	if before, after, err := compactCache(ctx, path); err != nil || after != before || after != full {
		t.Fatalf("little free space: compacted %d -> %d (file %d), %v", before, after, full, err)
	}

	// Most rows deleted: the file shrinks.
	c, err = openCache(ctx, path, "m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.conn.ExecContext(ctx, `DELETE FROM embeddings WHERE hash >= 'h000300'`); err != nil {
		t.Fatal(err)
	}
	c.close()
	before, after, err := compactCache(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if before != full || after > before/10 || fileSize(t, path) != after {
		t.Fatalf("compacted %d -> %d (file %d), want under a tenth of %d", before, after, fileSize(t, path), full)
	}
	if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
		t.Errorf("the WAL holds %d bytes after compaction", st.Size())
	}
	c, err = openCache(ctx, path, "m")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	var rows int
	if err := c.conn.QueryRowContext(ctx, `SELECT count(*) FROM embeddings`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 200 {
		t.Fatalf("%d rows after compaction, want 200", rows)
	}
	for _, j := range []int{100, 187, 299} {
		b, err := c.blob(ctx, fmt.Sprintf("h%06d", j))
		if err != nil || len(b) != 4*dim {
			t.Fatalf("row %d: %d bytes, %v", j, len(b), err)
		}
		want := encodeVector([]float32{float32(j * dim), float32(j*dim + 1)})
		if string(b[:8]) != string(want) {
			t.Fatalf("row %d changed", j)
		}
	}

	// Again: nothing left to reclaim.
	if before, after, err := compactCache(ctx, filepath.Join(t.TempDir(), "none")); err != nil || before != 0 || after != 0 {
		t.Fatalf("a missing cache: %d -> %d, %v", before, after, err)
	}
}

// TestBuildCompactsCache: a build, failed or not, leaves no cache mostly free
// space behind.
func TestBuildCompactsCache(t *testing.T) {
	vault, dbPath := newFixture(t)
	emb := newFake()
	build(t, emb, vault, dbPath, false)
	// Vectors of a model no longer in use, then dropped: the file keeps
	// their pages free until something compacts it.
	fillCache(t, CachePath(dbPath), 6000, 384)
	ctx := context.Background()
	c, err := openCache(ctx, CachePath(dbPath), "m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.conn.ExecContext(ctx, `DELETE FROM embeddings WHERE model = 'm'`); err != nil {
		t.Fatal(err)
	}
	c.close()
	big := fileSize(t, CachePath(dbPath))
	build(t, emb, vault, dbPath, true)
	if got := fileSize(t, CachePath(dbPath)); got > big/4 {
		t.Fatalf("the cache is %d bytes after a build, was %d", got, big)
	}
	if n := cacheCount(t, dbPath); n != fixtureChunks {
		t.Fatalf("the cache holds %d vectors, want %d", n, fixtureChunks)
	}
}
