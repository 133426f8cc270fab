package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// buildIncremental changes the index at opts.DBPath in one transaction:
// notes gone from the vault are deleted, changed ones rewritten under their
// ids, new ones added after the last id, and only chunk texts with no stored
// or cached vector go to the model. An index it cannot change (missing,
// unreadable, of another schema or embedder) is a needsFullError.
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
	c := changes{}
	if c.old, c.maxID, err = indexedNotes(ctx, db); err != nil {
		return rep, err
	}
	var changed []vault.File
	changed, c.removed, rep.Unchanged = diffFiles(c.old, files)
	if c.notes, err = prepare(ctx, changed, emb, opts.MaxChunks, &rep); err != nil {
		return rep, err
	}
	// A note refused for a reason of its own is skipped before anything of
	// it is embedded.
	kept := c.notes[:0]
	for i := range c.notes {
		if prob := refusal(&c.notes[i]); prob != nil {
			rep.Skipped = append(rep.Skipped, vault.Skipped{Path: c.notes[i].note.Path, Problem: *prob})
			continue
		}
		kept = append(kept, c.notes[i])
	}
	c.notes = kept
	// A note skipped now (a file that became empty, a note refused) leaves
	// the index.
	for _, s := range rep.Skipped {
		if e, ok := c.old[s.Path]; ok {
			c.removed = append(c.removed, e.id)
		}
	}
	if err := embedChanged(ctx, db, emb, opts, c.notes, &rep); err != nil {
		return rep, err
	}
	err = writeChanges(ctx, db, emb, opts, c, &rep)
	return rep, err
}

// indexedNote is a note as the index holds it: its id and content hash.
type indexedNote struct {
	id   int64
	hash string
}

// changes is what an incremental build writes: the notes to delete, and the
// prepared notes to write under their old ids (by path) or after the last.
type changes struct {
	old     map[string]indexedNote
	maxID   int64
	removed []int64
	notes   []parsed
}

// indexedNotes reads the index's notes by path, and the largest id.
func indexedNotes(ctx context.Context, db *sql.DB) (map[string]indexedNote, int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, path, hash FROM notes`)
	if err != nil {
		return nil, 0, needsFull("%v", err)
	}
	defer rows.Close()
	old := map[string]indexedNote{}
	var maxID int64
	for rows.Next() {
		var e indexedNote
		var p string
		if err := rows.Scan(&e.id, &p, &e.hash); err != nil {
			return nil, 0, err
		}
		old[p] = e
		maxID = max(maxID, e.id)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read the indexed notes: %w", err)
	}
	return old, maxID, nil
}

// diffFiles compares the vault's files with the indexed notes: the files new
// or changed, the ids of notes whose file is gone, and how many are the same.
func diffFiles(old map[string]indexedNote, files []vault.File) (changed []vault.File, removed []int64, unchanged int) {
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.Path] = true
		if e, ok := old[f.Path]; ok && e.hash == f.Hash {
			unchanged++
			continue
		}
		changed = append(changed, f)
	}
	for p, e := range old {
		if !seen[p] {
			removed = append(removed, e.id)
		}
	}
	return changed, removed, unchanged
}

// embedChanged gives the prepared notes their vectors: the index's own where
// a chunk's text is unchanged, the cache's, and the model's for the rest.
func embedChanged(ctx context.Context, db *sql.DB, emb Embedder, opts BuildOptions, ps []parsed, rep *Report) error {
	reuse, err := storedVectors(ctx, db, ps)
	if err != nil {
		return err
	}
	cache, err := openCache(ctx, CachePath(opts.DBPath), emb.Name())
	if err != nil {
		return err
	}
	defer cache.close()
	if err := cachedVectors(ctx, cache, ps, reuse); err != nil {
		return err
	}
	rep.Embedded, rep.Reused, err = embedAll(ctx, emb, cache, ps, reuse, opts.Progress)
	return err
}

// writeChanges writes the changes in one transaction and counts what the
// index then holds. The dirty marker stands beside the file while the
// transaction is open: a reader that finds it checks the file before
// trusting it (Open).
func writeChanges(ctx context.Context, db *sql.DB, emb Embedder, opts BuildOptions, c changes, rep *Report) error {
	if err := setDirty(opts.DBPath); err != nil {
		return err
	}
	tx, err := db.BeginTx(context.WithoutCancel(ctx), nil) // not tied to ctx: see embedCache.put
	if err != nil {
		clearDirty(opts.DBPath)
		return err
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
		return err
	}
	defer w.close()
	for _, id := range c.removed {
		if err := w.deleteNote(ctx, id); err != nil {
			return err
		}
		rep.Removed++
	}
	maxID := c.maxID
	for i := range c.notes {
		id := int64(0)
		if e, ok := c.old[c.notes[i].note.Path]; ok {
			id = e.id
			if err := w.deleteNote(ctx, id); err != nil {
				return err
			}
			rep.Changed++
		} else {
			maxID++
			id = maxID
			rep.Added++
		}
		if err := w.insertNote(ctx, id, &c.notes[i], true); err != nil {
			return err
		}
	}
	if err := w.kw.flush(ctx, tx); err != nil {
		return err
	}
	if err := finish(ctx, tx, emb, opts, false); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM notes), (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunks WHERE truncated), (SELECT count(*) FROM chunks WHERE embed_hash = '')`).Scan(&rep.Notes, &rep.Chunks, &rep.Truncated, &rep.KeywordOnly); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit index: %w", err)
	}
	return nil
}

// checkCompatible says why the index cannot be changed in place: damaged,
// of another schema, embedded by another model, or still being embedded.
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
	if m[metaComplete] == "0" {
		// A staged build was stopped while embedding: the full build that
		// follows puts the keyword index back at once and embeds only what
		// the cache lacks.
		return errors.New("the index's vectors are not all embedded yet")
	}
	return nil
}

// storedVectors loads the stored embeddings whose embed hash a prepared chunk
// has, so an edited note re-embeds only the sections that changed.
func storedVectors(ctx context.Context, db *sql.DB, ps []parsed) (map[string][]float32, error) {
	want := map[string]bool{}
	for _, p := range ps {
		for _, h := range p.hashes {
			if h != keywordOnly {
				want[h] = true
			}
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
			if _, ok := reuse[h]; ok || h == keywordOnly {
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
			if h == keywordOnly {
				continue
			}
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
	for i, it := range items {
		ntoks[i] = it.ntok
	}
	out := make(map[string][]float32, len(items))
	err := embedSorted(ctx, emb, cache, ntoks, reused, progress,
		func(lo, hi int) ([]embedItem, error) { return items[lo:hi], nil },
		func(batch []embedItem, vecs [][]float32) error {
			for i, it := range batch {
				out[it.hash] = vecs[i]
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}
