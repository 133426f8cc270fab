package index

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// buildFull streams the vault into a new index file: each note is parsed,
// chunked and written (without its vectors) as it is read, and a chunk whose
// vector the cache lacks goes to a pending table (on disk, not in memory).
// The pending chunks are then embedded in batches sorted by length over the
// whole vault, each batch committed to the cache as it is done; finally the
// vectors are copied from the cache into the index in chunk order. A build
// killed at any moment leaves the old index in place and every finished batch
// in the cache, so the next build embeds only the rest.
func buildFull(ctx context.Context, emb Embedder, opts BuildOptions, files []vault.File) (Report, error) {
	rep := Report{Counts: Counts{Mode: "full"}}
	if err := os.MkdirAll(filepath.Dir(opts.DBPath), 0o755); err != nil {
		return rep, fmt.Errorf("create index folder: %w", err)
	}
	tmp := opts.DBPath + ".building"
	cache, closeCache, err := openBuildCache(ctx, emb, opts, tmp)
	if err != nil {
		return rep, err
	}
	defer closeCache()

	_ = os.Remove(tmp) // left by a build that crashed
	_ = os.Remove(tmp + "-journal")
	db, err := openSQLite(tmp, false)
	if err != nil {
		return rep, fmt.Errorf("create index: %w", err)
	}
	ok := false
	defer func() {
		db.Close()
		if !ok {
			os.Remove(tmp)
			os.Remove(tmp + "-journal")
		}
	}()
	tx, err := db.BeginTx(context.WithoutCancel(ctx), nil) // not tied to ctx: see embedCache.put
	if err != nil {
		return rep, err
	}
	defer tx.Rollback()
	for _, stmt := range schema(emb.Dim()) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return rep, fmt.Errorf("create schema: %w", err)
		}
	}
	w, err := newWriter(ctx, tx, true)
	if err != nil {
		return rep, err
	}
	defer w.close()

	pending, err := writeNotes(ctx, emb, w, cache, files, opts.MaxChunks, &rep, opts.Progress)
	if err != nil {
		return rep, err
	}
	rep.Embedded = pending
	rep.Reused = rep.Chunks - rep.KeywordOnly - pending
	// With a complete index in place, readers keep it until the new one is
	// whole; with none, the keyword index goes in first (staged.go).
	staged := pending > 0 && !completeIndexAt(ctx, opts.DBPath)
	if !staged {
		// Embed what the cache lacks, shortest first over the whole vault.
		if err := embedPending(ctx, emb, cache, pending, rep.Reused, opts.Progress, nil); err != nil {
			return rep, err
		}
	}
	// Vectors, in chunk id order: all of them, or, staged, those the cache
	// already has.
	if err := copyVectors(ctx, tx, w, cache, staged); err != nil {
		return rep, err
	}
	if err := w.kw.flush(ctx, tx); err != nil {
		return rep, err
	}
	if err := finish(ctx, tx, emb, opts, staged); err != nil {
		return rep, err
	}
	if err := setGeneration(ctx, tx); err != nil {
		return rep, err
	}
	if err := tx.Commit(); err != nil {
		return rep, fmt.Errorf("commit index: %w", err)
	}
	if err := db.Close(); err != nil {
		return rep, fmt.Errorf("close index: %w", err)
	}
	if err := swapIn(ctx, tmp, opts.DBPath); err != nil {
		return rep, err
	}
	ok = true
	if staged {
		if err := embedLive(ctx, emb, cache, opts, pending, rep.Reused); err != nil {
			return rep, err
		}
	}
	if !opts.NoCache {
		// Keep the cache to what the vault holds now. The new index is in
		// place by now; a failed prune leaves vectors no chunk uses in the
		// cache, which costs disk space and nothing else (a later full build
		// prunes again), so it neither fails the build nor is reported.
		_ = cache.prune(ctx, opts.DBPath)
	}
	return rep, nil
}

// openBuildCache opens the embedding cache a full build reads and fills, its
// pending table empty. Under NoCache it is a throwaway file beside tmp.
// done closes it, and deletes a throwaway one.
func openBuildCache(ctx context.Context, emb Embedder, opts BuildOptions, tmp string) (cache *embedCache, done func(), err error) {
	path := CachePath(opts.DBPath)
	if opts.NoCache {
		path = tmp + ".nocache"
		removeCache(path)
	}
	cache, err = openCache(ctx, path, emb.Name())
	done = func() {
		if cache != nil {
			cache.close()
		}
		if opts.NoCache {
			removeCache(path)
		}
	}
	if err == nil {
		if _, err = cache.conn.ExecContext(ctx, `DELETE FROM pending`); err != nil {
			err = fmt.Errorf("embedding cache: %w", err)
		}
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return cache, done, nil
}

// writeNotes reads the files in order, writing each note (without vectors)
// with the next id as soon as it is parsed and chunked, and queues in the
// cache's pending table every chunk text the cache has no vector for. It
// returns how many it queued. A note refused for a reason of its own is
// skipped with that reason; any other error ends the build.
func writeNotes(ctx context.Context, emb Embedder, w *writer, cache *embedCache, files []vault.File, maxChunks int, rep *Report, progress func(Progress)) (pending int, err error) {
	add, err := cache.conn.PrepareContext(ctx, `INSERT OR IGNORE INTO pending(hash, ntok, text, ids) VALUES(?, ?, ?, ?)`)
	if err != nil {
		return 0, fmt.Errorf("embedding cache: %w", err)
	}
	defer add.Close()
	var id int64
	err = prepareEach(ctx, files, emb, maxChunks, rep, func(i int, p parsed, isNote bool) error {
		files[i].Raw = nil // read once; let it go
		if isNote {
			if prob := refusal(&p); prob != nil {
				rep.Skipped = append(rep.Skipped, vault.Skipped{Path: p.note.Path, Problem: *prob})
				isNote = false
			}
		}
		if isNote {
			id++
			if err := w.insertNote(ctx, id, &p, false); err != nil {
				return err
			}
			rep.Notes++
			rep.Added++
			rep.Chunks += len(p.note.Chunks)
			rep.Truncated += countTruncated(p.note.Chunks)
			rep.KeywordOnly += countKeywordOnly(&p)
			n, err := queueMissing(ctx, cache, add, &p)
			if err != nil {
				return err
			}
			pending += n
		}
		if progress != nil {
			progress(Progress{Phase: "reading", Done: i + 1, Total: len(files)})
		}
		return nil
	})
	return pending, err
}

// queueMissing adds to the pending table (through add) the chunks of p whose
// vectors the cache lacks, and returns how many were new there.
func queueMissing(ctx context.Context, cache *embedCache, add *sql.Stmt, p *parsed) (int, error) {
	n := 0
	for j, h := range p.hashes {
		if h == keywordOnly {
			continue
		}
		have, err := cache.contains(ctx, h)
		if err != nil {
			return 0, fmt.Errorf("embedding cache: %w", err)
		}
		if have {
			continue
		}
		var ids []byte
		if p.ids != nil {
			ids = encodeIDs(p.ids[j])
		}
		res, err := add.ExecContext(ctx, h, p.ntoks[j], p.texts[j], ids)
		if err != nil {
			return 0, fmt.Errorf("embedding cache: %w", err)
		}
		if k, _ := res.RowsAffected(); k > 0 {
			n++
		}
	}
	return n, nil
}

// swapIn puts the finished file at tmp in place of the index at dbPath,
// durably, without renaming over a file a reader may hold open (swap.go).
func swapIn(ctx context.Context, tmp, dbPath string) error {
	if err := replaceIndex(ctx, tmp, dbPath); err != nil {
		return fmt.Errorf("swap index into place: %w", err)
	}
	return nil
}

// embedPending embeds the pending table, sorted by length, a batch at a time:
// only one batch of texts is in memory. done, when set, receives each batch
// once the cache has it.
func embedPending(ctx context.Context, emb Embedder, cache *embedCache, n, reused int, progress func(Progress), done func([]embedItem, [][]float32) error) error {
	if n == 0 {
		if progress != nil {
			progress(Progress{Phase: "embedding", Reused: reused})
		}
		return nil
	}
	// The pending chunks in length order: their row numbers and token counts.
	seqs, ntoks := make([]int64, 0, n), make([]int, 0, n)
	rows, err := cache.conn.QueryContext(ctx, `SELECT seq, ntok FROM pending ORDER BY ntok, seq`)
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	for rows.Next() {
		var seq int64
		var ntok int
		if err := rows.Scan(&seq, &ntok); err != nil {
			rows.Close()
			return err
		}
		seqs, ntoks = append(seqs, seq), append(ntoks, ntok)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	get, err := cache.conn.PrepareContext(ctx, `SELECT seq, hash, text, ids FROM pending WHERE seq IN (SELECT value FROM json_each(?))`)
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	defer get.Close()
	// A batch's texts, read back from the pending table in length order.
	batch := func(lo, hi int) ([]embedItem, error) {
		pos := map[int64]int{}
		for k, seq := range seqs[lo:hi] {
			pos[seq] = k
		}
		items := make([]embedItem, hi-lo)
		rows, err := get.QueryContext(ctx, jsonIDs(seqs[lo:hi]))
		if err != nil {
			return nil, fmt.Errorf("embedding cache: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			var it embedItem
			var ids []byte
			if err := rows.Scan(&seq, &it.hash, &it.text, &ids); err != nil {
				return nil, err
			}
			if ids != nil {
				it.ids = decodeIDs(ids)
			}
			it.ntok = ntoks[lo+pos[seq]]
			items[pos[seq]] = it
		}
		return items, rows.Err()
	}
	return embedSorted(ctx, emb, cache, ntoks, reused, progress, batch, done)
}

// copyVectors writes every chunk's vector (but keywordOnly ones') from the cache into the index, in
// chunk id order (the order a KNN's ties are stored in). skipMissing leaves a
// chunk the cache has no vector for without one (a staged build embeds it
// later); otherwise that is an error.
func copyVectors(ctx context.Context, tx *sql.Tx, w *writer, cache *embedCache, skipMissing bool) error {
	last := int64(-1)
	type row struct {
		id   int64
		hash string
	}
	for {
		rows, err := tx.QueryContext(ctx, `SELECT id, embed_hash FROM chunks WHERE id > ? AND embed_hash != '' ORDER BY id LIMIT 2048`, last)
		if err != nil {
			return err
		}
		var page []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.hash); err != nil {
				rows.Close()
				return err
			}
			page = append(page, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		for _, r := range page {
			blob, err := cache.blob(ctx, r.hash)
			if err != nil {
				return fmt.Errorf("embedding cache: %w", err)
			}
			last = r.id
			if blob == nil && skipMissing {
				continue
			}
			if blob == nil {
				return fmt.Errorf("embedding cache: no vector for chunk %d", r.id)
			}
			if err := w.addVector(ctx, r.id, blob); err != nil {
				return fmt.Errorf("index chunk vector %d: %w", r.id, err)
			}
		}
	}
}
