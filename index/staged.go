package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"
)

// A staged build serves a vault before its vectors are done. The full build
// that finds no complete index writes every note, its chunks and the keyword
// index into the new file, with the vectors the embedding cache already has,
// and swaps it into place; embedLive then embeds the rest into the live file,
// committing every second or so. Readers see the keyword index at once and
// the vectors as they arrive (DB.Coverage says how far); the binary first
// pass of a vector search waits for the last vector (its centre is the mean
// of them all), and until then a vector search is the exact KNN over the
// vectors there are. A build stopped while embedding leaves an index marked
// incomplete, which the next build, incremental or not, rebuilds staged: the
// keyword index again within seconds, and only what the cache lacks embedded.

// Meta keys of the vectors' progress and of the last build.
const (
	metaChunks   = "chunks"           // chunks in the index that are to have a vector (not keywordOnly)
	metaEmbedded = "vectors_embedded" // chunks with a vector
	metaComplete = "vectors_complete" // "1", or "0" while a staged build embeds
	metaLastAt   = "last_build_at"    // RFC 3339, when the last build ended
	metaLastMode = "last_build_mode"  // "full" or "incremental"
	metaLastTook = "last_build_ms"    // how long it took
	metaSkipped  = "last_build_skipped"
	metaWarned   = "last_build_warnings" // notes indexed despite a problem
)

// liveFlushEvery is how often embedLive commits the vectors it has to the
// live index: often enough that a search sees progress, seldom enough that
// the commits (each a few fsyncs) cost little next to the model.
const liveFlushEvery = time.Second

// liveFlushRows bounds one commit's vectors whatever the clock says.
const liveFlushRows = 1024

func boolMeta(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Coverage is how many of an index's chunks have their vector, of those
// that are to have one (all but the keyword-only chunks of a note too long
// to embed).
type Coverage struct {
	Embedded int `json:"embedded"`
	Chunks   int `json:"chunks"`
}

// Complete reports whether every chunk has its vector.
func (c Coverage) Complete() bool { return c.Embedded >= c.Chunks }

// Coverage reads how far the index's vectors are. It reads the file each time:
// a staged build adds vectors to the open file.
func (d *DB) Coverage(ctx context.Context) (Coverage, error) {
	var c Coverage
	rows, err := d.sql.QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN (?, ?)`, metaChunks, metaEmbedded)
	if err != nil {
		return c, fmt.Errorf("vector coverage: %w", err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return c, fmt.Errorf("vector coverage: %w", err)
		}
		n, _ := strconv.Atoi(v)
		if k == metaChunks {
			c.Chunks = n
		} else {
			c.Embedded = n
		}
		seen++
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("vector coverage: %w", err)
	}
	if seen < 2 {
		return countCoverage(ctx, d.sql)
	}
	return c, nil
}

// vectorsComplete reports whether a staged build has finished embedding:
// until then the binary codes are missing.
func (d *DB) vectorsComplete(ctx context.Context) (bool, error) {
	var v string
	err := d.sql.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaComplete).Scan(&v)
	if err == sql.ErrNoRows {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("vector search: %w", err)
	}
	return v != "0", nil
}

func countCoverage(ctx context.Context, q queryer) (Coverage, error) {
	var c Coverage
	err := q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM chunks WHERE embed_hash != ''), (SELECT count(*) FROM chunk_vectors)`).Scan(&c.Chunks, &c.Embedded)
	if err != nil {
		return c, fmt.Errorf("count the index's vectors: %w", err)
	}
	return c, nil
}

// completeIndexAt reports whether dbPath holds an index of this schema whose
// vectors are all there: one a full rebuild should keep serving until the new
// file is whole.
func completeIndexAt(ctx context.Context, dbPath string) bool {
	db, err := openSQLite(dbPath, true)
	if err != nil {
		return false
	}
	defer db.Close()
	if fi, err := os.Stat(dbPath); err != nil || headerMismatch(dbPath, fi.Size()) != "" {
		return false
	}
	m, err := readMeta(ctx, db)
	return err == nil && m["schema_version"] == SchemaVersion && m[metaComplete] != "0"
}

// embedLive embeds the pending chunks of a staged build and adds their
// vectors to the live index at opts.DBPath in commits, then gives every
// chunk its binary code and marks the vectors complete.
func embedLive(ctx context.Context, emb Embedder, cache *embedCache, opts BuildOptions, pending, reused int) error {
	db, err := openSQLite(opts.DBPath, false)
	if err != nil {
		return fmt.Errorf("open the index to add vectors: %w", err)
	}
	defer db.Close()
	// The first batch is committed at once (last is zero): the first
	// vectors a search can use come within a batch of the start.
	lw := &liveWriter{db: db, dbPath: opts.DBPath}
	err = embedPending(ctx, emb, cache, pending, reused, opts.Progress, func(items []embedItem, vecs [][]float32) error {
		for i, it := range items {
			lw.hashes, lw.vecs = append(lw.hashes, it.hash), append(lw.vecs, vecs[i])
		}
		if len(lw.hashes) >= liveFlushRows || time.Since(lw.last) >= liveFlushEvery {
			return lw.flush(ctx, false, emb.Dim())
		}
		return nil
	})
	if err != nil {
		return err
	}
	return lw.flush(ctx, true, emb.Dim())
}

// liveWriter adds vectors to a live index, a commit at a time.
type liveWriter struct {
	db     *sql.DB
	dbPath string
	hashes []string
	vecs   [][]float32
	last   time.Time
}

// flush commits the vectors held to every chunk with their embed hash, and
// the new count; last also codes every vector and marks the index complete.
// The dirty marker stands beside the file while the transaction is open, as
// for an incremental build.
func (lw *liveWriter) flush(ctx context.Context, last bool, dim int) error {
	if err := setDirty(lw.dbPath); err != nil {
		return err
	}
	tx, err := lw.db.BeginTx(context.WithoutCancel(ctx), nil) // not tied to ctx: see embedCache.put
	if err != nil {
		clearDirty(lw.dbPath)
		return fmt.Errorf("add vectors: %w", err)
	}
	defer func() {
		if err := tx.Rollback(); err == nil || err == sql.ErrTxDone {
			clearDirty(lw.dbPath)
		}
	}()
	if err := lw.write(ctx, tx); err != nil {
		return err
	}
	if last {
		if err := syncCodes(ctx, tx, dim); err != nil {
			return fmt.Errorf("quantize vectors: %w", err)
		}
	}
	cov, err := countCoverage(ctx, tx)
	if err != nil {
		return err
	}
	for k, v := range map[string]string{metaEmbedded: strconv.Itoa(cov.Embedded), metaComplete: boolMeta(last)} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return fmt.Errorf("add vectors: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("add vectors: commit: %w", err)
	}
	lw.hashes, lw.vecs, lw.last = lw.hashes[:0], lw.vecs[:0], time.Now()
	return nil
}

// write inserts the held vectors for the chunks that carry their hashes.
func (lw *liveWriter) write(ctx context.Context, tx *sql.Tx) error {
	if len(lw.hashes) == 0 {
		return nil
	}
	find, err := tx.PrepareContext(ctx, `SELECT id FROM chunks WHERE embed_hash = ? AND id NOT IN (SELECT id FROM chunk_vectors) ORDER BY id`)
	if err != nil {
		return fmt.Errorf("add vectors: %w", err)
	}
	defer find.Close()
	w := &writer{}
	if w.vec, err = tx.PrepareContext(ctx, `INSERT INTO chunks_vec(rowid, embedding) VALUES(?, ?)`); err != nil {
		return fmt.Errorf("add vectors: %w", err)
	}
	defer w.vec.Close()
	if w.flat, err = tx.PrepareContext(ctx, `INSERT INTO chunk_vectors(id, embedding) VALUES(?, ?)`); err != nil {
		return fmt.Errorf("add vectors: %w", err)
	}
	defer w.flat.Close()
	for i, h := range lw.hashes {
		ids, err := chunkIDs(ctx, find, h)
		if err != nil {
			return fmt.Errorf("add vectors: %w", err)
		}
		blob := encodeVector(lw.vecs[i])
		for _, id := range ids {
			if err := w.addVector(ctx, id, blob); err != nil {
				return fmt.Errorf("add the vector of chunk %d: %w", id, err)
			}
		}
	}
	return nil
}

func chunkIDs(ctx context.Context, find *sql.Stmt, hash string) ([]int64, error) {
	rows, err := find.QueryContext(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// LastBuild is what the index records of the build that last changed it.
type LastBuild struct {
	At       time.Time      `json:"at"`
	Mode     string         `json:"mode"`
	Took     time.Duration  `json:"took_ns"`
	Skipped  map[string]int `json:"skipped_by_kind"`
	Warnings int            `json:"warnings"`
}

// LastBuild reads what the index records of its last build; ok is false for
// an index that records none.
func (d *DB) LastBuild(ctx context.Context) (lb LastBuild, ok bool, err error) {
	m, err := readMeta(ctx, d.sql)
	if err != nil {
		return lb, false, fmt.Errorf("read the last build: %w", err)
	}
	if m[metaLastAt] == "" {
		return lb, false, nil
	}
	lb.At, _ = time.Parse(time.RFC3339, m[metaLastAt])
	lb.Mode = m[metaLastMode]
	ms, _ := strconv.ParseInt(m[metaLastTook], 10, 64)
	lb.Took = time.Duration(ms) * time.Millisecond
	lb.Warnings, _ = strconv.Atoi(m[metaWarned])
	lb.Skipped = map[string]int{}
	if s := m[metaSkipped]; s != "" {
		if err := json.Unmarshal([]byte(s), &lb.Skipped); err != nil {
			return lb, true, fmt.Errorf("read the last build: skipped files: %w", err)
		}
	}
	return lb, true, nil
}

// recordBuild writes what a finished build did into the index's meta, for
// `vault-rag status`: when it ended, how long it took, what it skipped.
func recordBuild(ctx context.Context, dbPath string, rep Report) error {
	db, err := openSQLite(dbPath, false)
	if err != nil {
		return fmt.Errorf("record the build: %w", err)
	}
	defer db.Close()
	skipped, err := json.Marshal(rep.SkippedByKind)
	if err != nil {
		return fmt.Errorf("record the build: %w", err)
	}
	tx, err := db.BeginTx(context.WithoutCancel(ctx), nil) // not tied to ctx: see embedCache.put
	if err != nil {
		return fmt.Errorf("record the build: %w", err)
	}
	defer tx.Rollback()
	for k, v := range map[string]string{
		metaLastAt:   time.Now().UTC().Format(time.RFC3339),
		metaLastMode: rep.Mode,
		metaLastTook: strconv.FormatInt(rep.Duration.Milliseconds(), 10),
		metaSkipped:  string(skipped),
		metaWarned:   strconv.Itoa(len(rep.Warnings)),
	} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return fmt.Errorf("record the build: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record the build: %w", err)
	}
	return nil
}
