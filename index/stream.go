package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vault-rag/vault-rag/vault"
)

// parsed is a note ready to be written: parsed, chunked, and per chunk its
// embedding text, embed hash and tokens.
type parsed struct {
	note   vault.Note
	texts  []string  // embedding text per chunk
	hashes []string  // embed hash per chunk
	ntoks  []int     // tokens per chunk (for length-sorted batching)
	ids    [][]int32 // token ids per chunk, when the embedder gives them
	vecs   [][]float32
}

// tokenMemo counts tokens for the chunker and remembers the ids, so a chunk's
// text is tokenized once: the chunker counts every final chunk's text.
type tokenMemo struct {
	emb Embedder
	tok TokenEmbedder // nil when emb does not hand out ids
	ids map[string][]int32
	n   map[string]int
}

func newTokenMemo(emb Embedder) *tokenMemo {
	m := &tokenMemo{emb: emb}
	m.tok, _ = emb.(TokenEmbedder)
	return m
}

func (m *tokenMemo) reset() { m.ids, m.n = map[string][]int32{}, map[string]int{} }

func (m *tokenMemo) count(s string) int {
	if m.tok != nil {
		ids, ok := m.ids[s]
		if !ok {
			ids = m.tok.Tokens(s)
			m.ids[s] = ids
		}
		return len(ids)
	}
	n, ok := m.n[s]
	if !ok {
		n = m.emb.CountTokens(s)
		m.n[s] = n
	}
	return n
}

// window is the longest sequence the model embeds; longer ones are cut.
func (m *tokenMemo) window() int {
	if m.tok != nil && m.tok.Window() > 0 {
		return m.tok.Window()
	}
	return vault.MaxTokens
}

// prepareNote parses and chunks one file. ok is false for an empty file.
func prepareNote(f vault.File, emb Embedder, memo *tokenMemo) (p parsed, ok bool) {
	if len(strings.TrimSpace(string(f.Raw))) == 0 {
		return p, false
	}
	memo.reset()
	n := vault.ParseNote(f.Path, f.Raw, f.ModTime)
	n.Chunks = vault.ChunkNote(n.Title, n.Body, memo.count, vault.MaxTokens)
	p.note = n
	for _, c := range n.Chunks {
		t := vault.EmbedText(n.Title, c)
		p.texts = append(p.texts, t)
		p.hashes = append(p.hashes, embedHash(emb.Name(), t))
		p.ntoks = append(p.ntoks, min(memo.count(t), memo.window()))
		if memo.tok != nil {
			p.ids = append(p.ids, memo.ids[t])
		}
	}
	return p, true
}

func prepare(files []vault.File, emb Embedder) ([]parsed, []vault.Skipped, []vault.Skipped) {
	var out []parsed
	var skipped, warnings []vault.Skipped
	memo := newTokenMemo(emb)
	for _, f := range files {
		p, ok := prepareNote(f, emb, memo)
		if !ok {
			skipped = append(skipped, vault.Skipped{Path: f.Path, Problem: vault.NewProblem("empty file")})
			continue
		}
		for _, w := range p.note.Warnings {
			warnings = append(warnings, vault.Skipped{Path: f.Path, Problem: w})
		}
		out = append(out, p)
	}
	return out, skipped, warnings
}

// ChunkTexts returns the texts a full build of the vault would embed, in
// order: what a benchmark hands the model directly to compare its rate with
// the indexer's.
func ChunkTexts(ctx context.Context, vaultPath string, emb Embedder) ([]string, error) {
	files, _, err := vault.Scan(ctx, vaultPath, vault.ScanOptions{})
	if err != nil {
		return nil, err
	}
	ps, _, _ := prepare(files, emb)
	var out []string
	for _, p := range ps {
		out = append(out, p.texts...)
	}
	return out, nil
}

// embedItem is one text for the model.
type embedItem struct {
	hash string
	text string
	ids  []int32 // nil when the embedder takes text
	ntok int
}

func batchLimits(emb Embedder) (rows, tokens int) {
	rows, tokens = defaultBatchRows, defaultBatchTokens
	if bl, ok := emb.(BatchLimiter); ok {
		if r, t := bl.BatchLimits(); r > 0 && t > 0 {
			rows, tokens = r, t
		}
	}
	return rows, tokens
}

// planBatches cuts texts sorted by length (ntoks, ascending) into runs of
// the model: as many texts as fit the bounds, each padded to the longest.
// It is the rule the embedder applies itself, so each batch is one run.
func planBatches(ntoks []int, rows, tokens int) [][2]int {
	var out [][2]int
	for lo := 0; lo < len(ntoks); {
		hi := lo + 1
		for hi < len(ntoks) && hi-lo < rows && (hi-lo+1)*(ntoks[hi]+2) <= tokens {
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// runBatch embeds one batch, by ids when every item has them.
func runBatch(ctx context.Context, emb Embedder, items []embedItem) ([][]float32, error) {
	if te, ok := emb.(TokenEmbedder); ok {
		ids := make([][]int32, len(items))
		byIDs := true
		for i, it := range items {
			if it.ids == nil && it.text != "" {
				byIDs = false
				break
			}
			ids[i] = it.ids
		}
		if byIDs {
			return te.EmbedTokens(ctx, ids)
		}
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.text
	}
	return emb.EmbedPassages(ctx, texts)
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
	cachePath := CachePath(opts.DBPath)
	if opts.NoCache {
		cachePath = tmp + ".nocache"
		removeCache(cachePath)
		defer removeCache(cachePath)
	}
	cache, err := openCache(ctx, cachePath, emb.Name())
	if err != nil {
		return rep, err
	}
	defer cache.close()
	if _, err := cache.conn.ExecContext(ctx, `DELETE FROM pending`); err != nil {
		return rep, fmt.Errorf("embedding cache: %w", err)
	}

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
	tx, err := db.BeginTx(ctx, nil)
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
	addPending, err := cache.conn.PrepareContext(ctx, `INSERT OR IGNORE INTO pending(hash, ntok, text, ids) VALUES(?, ?, ?, ?)`)
	if err != nil {
		return rep, fmt.Errorf("embedding cache: %w", err)
	}
	defer addPending.Close()

	// Read: parse, chunk, write; note what needs the model.
	memo := newTokenMemo(emb)
	var id int64
	pending := 0
	for i := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		p, isNote := prepareNote(files[i], emb, memo)
		files[i].Raw = nil // read once; let it go
		if !isNote {
			rep.Skipped = append(rep.Skipped, vault.Skipped{Path: files[i].Path, Problem: vault.NewProblem("empty file")})
		} else {
			for _, wn := range p.note.Warnings {
				rep.Warnings = append(rep.Warnings, vault.Skipped{Path: files[i].Path, Problem: wn})
			}
			id++
			if err := w.insertNote(ctx, id, &p, false); err != nil {
				return rep, err
			}
			rep.Notes++
			rep.Added++
			rep.Chunks += len(p.note.Chunks)
			rep.Truncated += countTruncated(p.note.Chunks)
			for j, h := range p.hashes {
				have, err := cache.contains(ctx, h)
				if err != nil {
					return rep, fmt.Errorf("embedding cache: %w", err)
				}
				if have {
					continue
				}
				var ids []byte
				if p.ids != nil {
					ids = encodeIDs(p.ids[j])
				}
				res, err := addPending.ExecContext(ctx, h, p.ntoks[j], p.texts[j], ids)
				if err != nil {
					return rep, fmt.Errorf("embedding cache: %w", err)
				}
				if n, _ := res.RowsAffected(); n > 0 {
					pending++
				}
			}
		}
		if opts.Progress != nil {
			opts.Progress(Progress{Phase: "reading", Done: i + 1, Total: len(files)})
		}
	}

	// Embed what the cache lacks, shortest first over the whole vault.
	rep.Embedded = pending
	rep.Reused = rep.Chunks - pending
	if err := embedPending(ctx, emb, cache, pending, rep.Reused, opts.Progress); err != nil {
		return rep, err
	}

	// Vectors, in chunk id order.
	if err := copyVectors(ctx, tx, w, cache); err != nil {
		return rep, err
	}
	if err := w.kw.flush(ctx, tx); err != nil {
		return rep, err
	}
	if err := finish(ctx, tx, emb, opts.VaultPath); err != nil {
		return rep, err
	}
	if err := tx.Commit(); err != nil {
		return rep, fmt.Errorf("commit index: %w", err)
	}
	if err := db.Close(); err != nil {
		return rep, fmt.Errorf("close index: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return rep, err
	}
	// A hot journal beside the old file (an incremental build killed while
	// committing) must be rolled back into the old file, not replayed onto
	// the new one after the rename.
	recoverHotJournal(ctx, opts.DBPath)
	if err := os.Rename(tmp, opts.DBPath); err != nil {
		return rep, fmt.Errorf("swap index into place: %w", err)
	}
	_ = os.Remove(opts.DBPath + "-journal") // a hot journal belongs to the file just replaced
	_ = os.Remove(dirtyMarker(opts.DBPath)) // the file it marked is gone
	syncDir(filepath.Dir(opts.DBPath))
	ok = true
	if !opts.NoCache {
		// Keep the cache to what the vault holds now. A failure costs only
		// disk space, so it does not fail the build.
		_ = cache.prune(ctx, opts.DBPath)
	}
	return rep, nil
}

func removeCache(p string) {
	for _, s := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(p + s)
	}
}

// embedPending embeds the pending table, sorted by length, a batch at a time:
// only one batch of texts is in memory.
func embedPending(ctx context.Context, emb Embedder, cache *embedCache, n, reused int, progress func(Progress)) error {
	if n == 0 {
		if progress != nil {
			progress(Progress{Phase: "embedding", Reused: reused})
		}
		return nil
	}
	type entry struct {
		seq  int64
		ntok int
	}
	order := make([]entry, 0, n)
	rows, err := cache.conn.QueryContext(ctx, `SELECT seq, ntok FROM pending ORDER BY ntok, seq`)
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	totalTok := 0
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.seq, &e.ntok); err != nil {
			rows.Close()
			return err
		}
		order = append(order, e)
		totalTok += e.ntok
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	ntoks := make([]int, len(order))
	for i, e := range order {
		ntoks[i] = e.ntok
	}
	maxRows, maxTokens := batchLimits(emb)
	get, err := cache.conn.PrepareContext(ctx, `SELECT seq, hash, text, ids FROM pending WHERE seq IN (SELECT value FROM json_each(?))`)
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	defer get.Close()
	doneTok := 0
	report := func(done int) {
		if progress != nil {
			progress(Progress{Phase: "embedding", Done: done, Total: len(order), Tokens: doneTok, TotalTokens: totalTok, Reused: reused})
		}
	}
	report(0)
	for _, b := range planBatches(ntoks, maxRows, maxTokens) {
		if err := ctx.Err(); err != nil {
			return err
		}
		seqs := make([]int64, 0, b[1]-b[0])
		pos := map[int64]int{}
		for k, e := range order[b[0]:b[1]] {
			seqs = append(seqs, e.seq)
			pos[e.seq] = k
		}
		raw, _ := json.Marshal(seqs)
		batch := make([]embedItem, len(seqs))
		rows, err := get.QueryContext(ctx, string(raw))
		if err != nil {
			return fmt.Errorf("embedding cache: %w", err)
		}
		for rows.Next() {
			var seq int64
			var it embedItem
			var ids []byte
			if err := rows.Scan(&seq, &it.hash, &it.text, &ids); err != nil {
				rows.Close()
				return err
			}
			if ids != nil {
				it.ids = decodeIDs(ids)
			}
			it.ntok = order[b[0]+pos[seq]].ntok
			batch[pos[seq]] = it
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		vecs, err := runBatch(ctx, emb, batch)
		if err != nil {
			return fmt.Errorf("embed chunks: %w", err)
		}
		if len(vecs) != len(batch) {
			return fmt.Errorf("embed chunks: %d vectors for %d texts", len(vecs), len(batch))
		}
		hashes := make([]string, len(batch))
		for i, it := range batch {
			hashes[i] = it.hash
			doneTok += it.ntok
		}
		if err := cache.put(ctx, hashes, vecs); err != nil {
			return err
		}
		report(b[1])
	}
	return nil
}

// copyVectors writes every chunk's vector from the cache into the index, in
// chunk id order (the order a KNN's ties are stored in).
func copyVectors(ctx context.Context, tx *sql.Tx, w *writer, cache *embedCache) error {
	last := int64(-1)
	type row struct {
		id   int64
		hash string
	}
	for {
		rows, err := tx.QueryContext(ctx, `SELECT id, embed_hash FROM chunks WHERE id > ? ORDER BY id LIMIT 2048`, last)
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
			if blob == nil {
				return fmt.Errorf("embedding cache: no vector for chunk %d", r.id)
			}
			if _, err := w.vec.ExecContext(ctx, r.id, blob); err != nil {
				return fmt.Errorf("index chunk vector %d: %w", r.id, err)
			}
			// The plain row the binary first pass rescores from (quant.go).
			if _, err := w.flat.ExecContext(ctx, r.id, blob); err != nil {
				return fmt.Errorf("index chunk vector %d: %w", r.id, err)
			}
			last = r.id
		}
	}
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
