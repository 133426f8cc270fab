package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
)

// The embedding cache is a SQLite file beside the index (DBPath +
// CacheSuffix) holding every vector a model produced, keyed by the model and
// the hash of the embedded text. Each batch is committed as soon as the model
// returns it, so a build killed at any moment loses at most the batch in
// flight, and the next build (full or incremental) embeds only what no earlier
// one did. It lives outside the index file because a full build writes a new
// index and then replaces the old one's content: the cache survives that, and
// a killed build, whose half-written index is thrown away.
//
// The file is disposable: deleting it costs only re-embedding. A cache that
// cannot be read is replaced by an empty one.

// CacheSuffix is appended to the index path to name its embedding cache.
const CacheSuffix = ".embeddings"

// CachePath is the embedding cache of the index at dbPath.
func CachePath(dbPath string) string { return dbPath + CacheSuffix }

type embedCache struct {
	db    *sql.DB
	conn  *sql.Conn // pinned: the pending table is a TEMP table of this connection
	model string
	has   *sql.Stmt
	get   *sql.Stmt
}

// A rowid table: rows of 1.5 KB are too large for a WITHOUT ROWID one (which
// made the file three times the vectors' size).
const cacheSchema = `CREATE TABLE IF NOT EXISTS embeddings(
	hash TEXT NOT NULL UNIQUE, -- embedHash(model, text): the chunks table's embed_hash; the model is in it
	model TEXT NOT NULL,       -- for pruning one model's vectors
	vec BLOB NOT NULL          -- float32 little-endian, as sqlite-vec stores it
)`

// openCache opens (or creates) the cache at path for one model. A file that
// is not a usable cache is removed and started afresh.
func openCache(ctx context.Context, path, model string) (*embedCache, error) {
	c, err := tryOpenCache(ctx, path, model)
	if err == nil {
		return c, nil
	}
	removeCache(path)
	c, err2 := tryOpenCache(ctx, path, model)
	if err2 != nil {
		return nil, fmt.Errorf("embedding cache %s: %v (after removing an unusable one: %v)", path, err2, err)
	}
	return c, nil
}

// removeCache deletes the cache at path with SQLite's files beside it.
func removeCache(path string) {
	for _, s := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + s)
	}
}

func tryOpenCache(ctx context.Context, path, model string) (*embedCache, error) {
	db, err := openSQLite(path, false)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	c := &embedCache{db: db, conn: conn, model: model}
	for _, stmt := range []string{
		// WAL with NORMAL sync: a commit is durable against a killed process
		// (the WAL is in the OS), cheap enough to make after every batch.
		`PRAGMA journal_mode=WAL`,
		`PRAGMA synchronous=NORMAL`,
		cacheSchema,
		`CREATE TEMP TABLE IF NOT EXISTS pending(seq INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, ntok INTEGER NOT NULL, text TEXT NOT NULL, ids BLOB)`,
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			c.close()
			return nil, err
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM embeddings LIMIT 1)`).Scan(&n); err != nil {
		c.close()
		return nil, err
	}
	if c.has, err = conn.PrepareContext(ctx, `SELECT 1 FROM embeddings WHERE hash = ?`); err != nil {
		c.close()
		return nil, err
	}
	if c.get, err = conn.PrepareContext(ctx, `SELECT vec FROM embeddings WHERE hash = ?`); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *embedCache) close() {
	for _, s := range []*sql.Stmt{c.has, c.get} {
		if s != nil {
			s.Close()
		}
	}
	c.conn.Close()
	c.db.Close()
}

// contains reports whether the cache holds a vector for hash.
func (c *embedCache) contains(ctx context.Context, hash string) (bool, error) {
	var one int
	err := c.has.QueryRowContext(ctx, hash).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// blob returns the stored vector for hash as sqlite-vec's float32 blob, or nil.
func (c *embedCache) blob(ctx context.Context, hash string) ([]byte, error) {
	var b []byte
	err := c.get.QueryRowContext(ctx, hash).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return b, err
}

// put stores one batch of vectors and commits it.
func (c *embedCache) put(ctx context.Context, hashes []string, vecs [][]float32) error {
	// The transaction is not tied to ctx: database/sql would roll a
	// cancelled one back on a goroutine of its own and drop its connection
	// there, after this build has closed the cache, leaving the file open
	// (Windows then cannot remove or replace it). A batch is short: ctx is
	// checked between its rows, and the rollback below runs here.
	if err := ctx.Err(); err != nil {
		return err
	}
	bg := context.WithoutCancel(ctx)
	tx, err := c.conn.BeginTx(bg, nil)
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(bg, `INSERT OR REPLACE INTO embeddings(hash, model, vec) VALUES(?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	defer st.Close()
	for i, h := range hashes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := st.ExecContext(bg, h, c.model, encodeVector(vecs[i])); err != nil {
			return fmt.Errorf("embedding cache: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("embedding cache: commit: %w", err)
	}
	return nil
}

// The cache is compacted when it holds more free space than data worth
// keeping: a build that embedded a large vault and was then pruned, or one
// that failed after filling the cache with vectors a later prune dropped,
// leaves the file at its largest size, its pages free but never returned.
const (
	// compactShare is the share of the file's pages that must be free.
	compactShare = 0.25
	// compactMinBytes is the free space below which the file is left alone:
	// rewriting it would cost more than the space is worth.
	compactMinBytes = 4 << 20
)

// compactCache rewrites the cache at path without its free pages (VACUUM)
// when more than compactShare of the file is free and that is more than
// compactMinBytes. The caller holds the index's build lock, so no other
// process has the cache open to write it. VACUUM rewrites the file in place
// (no rename, so an open handle elsewhere is no obstacle on Windows); the
// rows are the same afterwards. A missing file is nothing to do. It reports
// the file's size before and after (equal when nothing was done).
func compactCache(ctx context.Context, path string) (before, after int64, err error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, 0, nil
		}
		return 0, 0, err
	}
	before, after = st.Size(), st.Size()
	db, err := openSQLite(path, false)
	if err != nil {
		return before, after, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return before, after, err
	}
	defer conn.Close()
	var pages, free, pageSize int64
	for _, q := range []struct {
		sql string
		dst *int64
	}{{`PRAGMA page_count`, &pages}, {`PRAGMA freelist_count`, &free}, {`PRAGMA page_size`, &pageSize}} {
		if err := conn.QueryRowContext(ctx, q.sql).Scan(q.dst); err != nil {
			return before, after, fmt.Errorf("embedding cache: %s: %w", q.sql, err)
		}
	}
	if pages == 0 || float64(free) <= compactShare*float64(pages) || free*pageSize <= compactMinBytes {
		return before, after, nil
	}
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		return before, after, fmt.Errorf("embedding cache: compact: %w", err)
	}
	// In WAL mode the rewritten pages sit in the WAL: copy them back, which
	// truncates the file to its new size, and empty the WAL.
	if _, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return before, after, fmt.Errorf("embedding cache: compact: checkpoint: %w", err)
	}
	if st, err := os.Stat(path); err == nil {
		after = st.Size()
	}
	return before, after, nil
}

// prune drops this model's vectors that no chunk of the index at dbPath uses,
// so the cache holds the current vault, not every version of every note.
// Other models' vectors are kept: switching back to a model is then free.
func (c *embedCache) prune(ctx context.Context, dbPath string) error {
	if _, err := c.conn.ExecContext(ctx, `ATTACH DATABASE ? AS idx`, dbPath); err != nil {
		return err
	}
	defer c.conn.ExecContext(context.Background(), `DETACH DATABASE idx`)
	_, err := c.conn.ExecContext(ctx, `DELETE FROM embeddings WHERE model = ? AND hash NOT IN (SELECT embed_hash FROM idx.chunks)`, c.model)
	return err
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func encodeIDs(ids []int32) []byte {
	b := make([]byte, 4*len(ids))
	for i, x := range ids {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func decodeIDs(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
