package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/vault-rag/vault-rag/vault"
)

func buildIncremental(ctx context.Context, emb Embedder, opts BuildOptions, files []vault.File) (Report, error) {
	rep := Report{Counts: Counts{Mode: "incremental"}}
	if _, err := os.Stat(opts.DBPath); err != nil {
		return rep, needsFull("no index yet")
	}
	db, err := openSQLite(opts.DBPath, false)
	if err != nil {
		return rep, needsFull("%v", err)
	}
	defer db.Close()
	if err := checkCompatible(ctx, db, emb); err != nil {
		return rep, needsFull("%v", err)
	}

	type existing struct {
		id   int64
		hash string
	}
	old := map[string]existing{}
	rows, err := db.QueryContext(ctx, `SELECT id, path, hash FROM notes`)
	if err != nil {
		return rep, needsFull("%v", err)
	}
	var maxID int64
	for rows.Next() {
		var e existing
		var p string
		if err := rows.Scan(&e.id, &p, &e.hash); err != nil {
			rows.Close()
			return rep, err
		}
		old[p] = e
		maxID = max(maxID, e.id)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return rep, fmt.Errorf("read the indexed notes: %w", err)
	}
	rows.Close()

	var changed []vault.File
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.Path] = true
		if e, ok := old[f.Path]; ok && e.hash == f.Hash {
			rep.Unchanged++
			continue
		}
		changed = append(changed, f)
	}
	var removed []int64
	for p, e := range old {
		if !seen[p] {
			removed = append(removed, e.id)
		}
	}
	ps, skipped, warnings := prepare(changed, emb)
	rep.Skipped, rep.Warnings = skipped, warnings
	// A file that became empty is skipped now and so leaves the index.
	for _, s := range skipped {
		if e, ok := old[s.Path]; ok {
			removed = append(removed, e.id)
		}
	}

	reuse, err := storedVectors(ctx, db, ps)
	if err != nil {
		return rep, err
	}
	cache, err := openCache(ctx, CachePath(opts.DBPath), emb.Name())
	if err != nil {
		return rep, err
	}
	defer cache.close()
	if err := cachedVectors(ctx, cache, ps, reuse); err != nil {
		return rep, err
	}
	if rep.Embedded, rep.Reused, err = embedAll(ctx, emb, cache, ps, reuse, opts.Progress); err != nil {
		return rep, err
	}

	// The marker says a write may be half done: a reader that finds it
	// checks the file before trusting it (Open).
	if err := setDirty(opts.DBPath); err != nil {
		return rep, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		clearDirty(opts.DBPath)
		return rep, err
	}
	defer func() {
		// Committed or rolled back, the file is whole again. (A killed
		// process runs no defer, and leaves the marker.)
		if err := tx.Rollback(); err == nil || errors.Is(err, sql.ErrTxDone) {
			clearDirty(opts.DBPath)
		}
	}()
	w, err := newWriter(ctx, tx, false)
	if err != nil {
		return rep, err
	}
	defer w.close()
	for _, id := range removed {
		if err := w.deleteNote(ctx, id); err != nil {
			return rep, err
		}
		rep.Removed++
	}
	for i := range ps {
		id := int64(0)
		if e, ok := old[ps[i].note.Path]; ok {
			id = e.id
			if err := w.deleteNote(ctx, id); err != nil {
				return rep, err
			}
			rep.Changed++
		} else {
			maxID++
			id = maxID
			rep.Added++
		}
		if err := w.insertNote(ctx, id, &ps[i], true); err != nil {
			return rep, err
		}
	}
	if err := w.kw.flush(ctx, tx); err != nil {
		return rep, err
	}
	if err := finish(ctx, tx, emb, opts.VaultPath); err != nil {
		return rep, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM notes), (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunks WHERE truncated)`).Scan(&rep.Notes, &rep.Chunks, &rep.Truncated); err != nil {
		return rep, err
	}
	if err := tx.Commit(); err != nil {
		return rep, fmt.Errorf("commit index: %w", err)
	}
	return rep, nil
}

func checkCompatible(ctx context.Context, db *sql.DB, emb Embedder) error {
	// A damaged file can still serve the few reads below and then fail
	// half-way through the build ("database disk image is malformed").
	if err := quickCheck(ctx, db); err != nil {
		return fmt.Errorf("unreadable index: %v", err)
	}
	m, err := readMeta(ctx, db)
	if err != nil {
		return fmt.Errorf("unreadable index: %v", err)
	}
	if m["schema_version"] != SchemaVersion {
		return fmt.Errorf("index schema %q, this build writes %q", m["schema_version"], SchemaVersion)
	}
	if m["embedder"] != emb.Name() {
		return fmt.Errorf("index embedded with %q, the embedder is now %q", m["embedder"], emb.Name())
	}
	return nil
}

// storedVectors loads the stored embeddings whose embed hash a prepared chunk
// has, so an edited note re-embeds only the sections that changed.
func storedVectors(ctx context.Context, db *sql.DB, ps []parsed) (map[string][]float32, error) {
	want := map[string]bool{}
	for _, p := range ps {
		for _, h := range p.hashes {
			want[h] = true
		}
	}
	out := map[string][]float32{}
	if len(want) == 0 {
		return out, nil
	}
	stmt, err := db.PrepareContext(ctx, `SELECT v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.id WHERE c.embed_hash = ? LIMIT 1`)
	if err != nil {
		return nil, fmt.Errorf("read stored embeddings: %w", err)
	}
	defer stmt.Close()
	for h := range want {
		var blob []byte
		err := stmt.QueryRowContext(ctx, h).Scan(&blob)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read stored embeddings: %w", err)
		}
		out[h] = decodeVector(blob)
	}
	return out, nil
}

// cachedVectors fills, from the cache, the vectors of chunks reuse lacks.
func cachedVectors(ctx context.Context, cache *embedCache, ps []parsed, reuse map[string][]float32) error {
	for _, p := range ps {
		for _, h := range p.hashes {
			if _, ok := reuse[h]; ok {
				continue
			}
			blob, err := cache.blob(ctx, h)
			if err != nil {
				return fmt.Errorf("embedding cache: %w", err)
			}
			if blob != nil {
				reuse[h] = decodeVector(blob)
			}
		}
	}
	return nil
}

// embedAll fills p.vecs, taking stored vectors from reuse where the embed hash
// matches and running the model for the rest (each distinct text once), in
// length-sorted batches stored in the cache as they are done.
func embedAll(ctx context.Context, emb Embedder, cache *embedCache, ps []parsed, reuse map[string][]float32, progress func(Progress)) (embedded, reused int, err error) {
	var items []embedItem
	seen := map[string]bool{}
	for i := range ps {
		for j, h := range ps[i].hashes {
			if _, ok := reuse[h]; ok || seen[h] {
				reused++
				continue
			}
			seen[h] = true
			it := embedItem{hash: h, text: ps[i].texts[j], ntok: ps[i].ntoks[j]}
			if ps[i].ids != nil {
				it.ids = ps[i].ids[j]
			}
			items = append(items, it)
		}
	}
	vecs, err := embedItems(ctx, emb, cache, items, reused, progress)
	if err != nil {
		return 0, 0, err
	}
	for i := range ps {
		ps[i].vecs = make([][]float32, len(ps[i].hashes))
		for j, h := range ps[i].hashes {
			if v, ok := vecs[h]; ok {
				ps[i].vecs[j] = v
			} else {
				ps[i].vecs[j] = reuse[h]
			}
		}
	}
	return len(items), reused, nil
}

// embedItems embeds items in length-sorted batches, storing each batch in
// the cache as soon as it is done, and returns the vectors by hash.
func embedItems(ctx context.Context, emb Embedder, cache *embedCache, items []embedItem, reused int, progress func(Progress)) (map[string][]float32, error) {
	sort.SliceStable(items, func(i, j int) bool { return items[i].ntok < items[j].ntok })
	ntoks := make([]int, len(items))
	totalTok := 0
	for i, it := range items {
		ntoks[i] = it.ntok
		totalTok += it.ntok
	}
	rows, tokens := batchLimits(emb)
	out := make(map[string][]float32, len(items))
	doneTok := 0
	report := func(done int) {
		if progress != nil {
			progress(Progress{Phase: "embedding", Done: done, Total: len(items), Tokens: doneTok, TotalTokens: totalTok, Reused: reused})
		}
	}
	report(0)
	for _, b := range planBatches(ntoks, rows, tokens) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := items[b[0]:b[1]]
		vecs, err := runBatch(ctx, emb, batch)
		if err != nil {
			return nil, fmt.Errorf("embed chunks: %w", err)
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("embed chunks: %d vectors for %d texts", len(vecs), len(batch))
		}
		hashes := make([]string, len(batch))
		for i, it := range batch {
			hashes[i] = it.hash
			out[it.hash] = vecs[i]
			doneTok += it.ntok
		}
		if err := cache.put(ctx, hashes, vecs); err != nil {
			return nil, err
		}
		report(b[1])
	}
	return out, nil
}
