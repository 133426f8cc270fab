package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"

	"github.com/vault-rag/vault-rag/vault"
)

// Embedder is what the indexer needs of an embedding model.
type Embedder interface {
	Name() string
	Dim() int
	// EmbedPassages returns one L2-normalised vector per text, in order.
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
	// CountTokens counts the tokens of a text without special tokens.
	CountTokens(text string) int
}

// TokenEmbedder is an Embedder that hands out token ids and embeds them, so
// the indexer tokenizes each text once: to decide where to split a section,
// and the same ids go to the model.
type TokenEmbedder interface {
	Embedder
	// Tokens returns a text's token ids without special tokens.
	Tokens(text string) []int32
	// EmbedTokens embeds passages given as token ids, as EmbedPassages would
	// embed their texts.
	EmbedTokens(ctx context.Context, ids [][]int32) ([][]float32, error)
	// Window is the longest sequence embedded (longer ones are cut).
	Window() int
}

// BatchLimiter is an Embedder that says how much one model run takes: at
// most rows texts, and at most tokens in rows × the longest text (with two
// special tokens each). The indexer hands it batches within those bounds,
// sorted by length over every text to embed, so each call is one run with
// little padding.
type BatchLimiter interface {
	BatchLimits() (rows, tokens int)
}

// Default batch bounds for an embedder that does not say.
const (
	defaultBatchRows   = 64
	defaultBatchTokens = 16384
)

// BuildOptions say what to index, where, and how.
type BuildOptions struct {
	VaultPath   string
	DBPath      string
	Incremental bool // re-embed only notes whose content changed; falls back to a full build when it must
	Scan        vault.ScanOptions
	// Progress, when set, is called as notes are read and after each batch
	// of chunks is embedded.
	Progress func(Progress)
	// NoCache embeds every chunk and keeps nothing in the embedding cache
	// (CachePath) beside the index: a benchmark of the model's throughput.
	NoCache bool
}

// Progress is where a build is.
type Progress struct {
	// Phase is "reading" (notes parsed, chunked and written; Done and Total
	// count notes) or "embedding" (Done and Total count the chunks that need
	// the model, Tokens and TotalTokens their tokens: the work, for an ETA).
	Phase       string
	Done, Total int
	Tokens      int
	TotalTokens int
	// Reused counts chunks whose vector was already stored (embedding phase).
	Reused int
}

// Counts is what a build did, in numbers: the part of a Report the server's
// /health repeats and the load test reads back.
type Counts struct {
	Mode      string `json:"mode"`               // "full" or "incremental"
	Fallback  string `json:"fallback,omitempty"` // why an incremental build ran as a full one
	Notes     int    `json:"notes"`
	Chunks    int    `json:"chunks"`
	Added     int    `json:"added"`
	Changed   int    `json:"changed"`
	Removed   int    `json:"removed"`
	Unchanged int    `json:"unchanged"`
	Embedded  int    `json:"embedded"` // chunks run through the model
	Reused    int    `json:"reused"`   // chunks whose stored embedding was kept
	Truncated int    `json:"truncated"`
}

// Report says what a build did.
type Report struct {
	Counts
	Skipped  []vault.Skipped `json:"skipped"`
	Warnings []vault.Skipped `json:"warnings"` // notes indexed despite a problem
	Duration time.Duration   `json:"duration_ns"`
}

// Build indexes the vault into opts.DBPath. A full build writes a new file
// beside the old one and renames it into place, so a reader never sees a
// half-built index and a crash leaves the old one; an incremental build changes
// the existing file in one transaction. The vault is only read.
func Build(ctx context.Context, emb Embedder, opts BuildOptions) (Report, error) {
	start := time.Now()
	files, skipped, err := vault.Scan(ctx, opts.VaultPath, opts.Scan)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	if opts.Incremental {
		rep, err = buildIncremental(ctx, emb, opts, files)
		var full *needsFullError
		if errors.As(err, &full) {
			rep, err = buildFull(ctx, emb, opts, files)
			rep.Fallback = full.reason
		}
	} else {
		rep, err = buildFull(ctx, emb, opts, files)
	}
	if err != nil {
		return rep, err
	}
	rep.Skipped = append(skipped, rep.Skipped...)
	sort.Slice(rep.Skipped, func(i, j int) bool { return rep.Skipped[i].Path < rep.Skipped[j].Path })
	rep.Duration = time.Since(start)
	return rep, nil
}

// needsFullError says why an incremental build cannot run and a full one
// must: the reason goes into Report.Fallback.
type needsFullError struct{ reason string }

func (e *needsFullError) Error() string { return "full build needed: " + e.reason }

func needsFull(format string, args ...any) error {
	return &needsFullError{reason: fmt.Sprintf(format, args...)}
}

func embedHash(model, text string) string {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

func countTruncated(cs []vault.Chunk) int {
	n := 0
	for _, c := range cs {
		if c.Truncated {
			n++
		}
	}
	return n
}

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

func readMeta(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

// finish resolves wikilinks to note ids and records what the index is.
func finish(ctx context.Context, tx *sql.Tx, emb Embedder, vault string) error {
	if err := resolveLinks(ctx, tx); err != nil {
		return fmt.Errorf("resolve links: %w", err)
	}
	if err := syncCodes(ctx, tx, emb.Dim()); err != nil {
		return fmt.Errorf("quantize vectors: %w", err)
	}
	fp, err := fingerprint(ctx, tx)
	if err != nil {
		return err
	}
	absVault, _ := filepath.Abs(vault)
	meta := map[string]string{
		"schema_version": SchemaVersion,
		"embedder":       emb.Name(),
		"dim":            fmt.Sprint(emb.Dim()),
		"built_at":       time.Now().UTC().Format(time.RFC3339),
		"vault":          absVault,
		"fingerprint":    fp,
	}
	for k, v := range meta {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return fmt.Errorf("write index metadata: %w", err)
		}
	}
	return nil
}

// resolveLinks sets every link's target_id. A link names a note by its path
// without .md, or by its file name alone, in any case; the path wins, then the
// first note in path order with that file name. Targets are lower-cased in Go,
// as the keys were: SQLite's lower() folds ASCII only, so [[Über]] would never
// meet the key "über".
func resolveLinks(ctx context.Context, tx *sql.Tx) error {
	type link struct {
		rowid  int64
		target string
	}
	rows, err := tx.QueryContext(ctx, `SELECT rowid, target FROM links`)
	if err != nil {
		return err
	}
	var links []link
	for rows.Next() {
		var l link
		if err := rows.Scan(&l.rowid, &l.target); err != nil {
			rows.Close()
			return err
		}
		links = append(links, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	find, err := tx.PrepareContext(ctx, `SELECT coalesce(
		(SELECT id FROM notes WHERE key = ?1),
		(SELECT id FROM notes WHERE base = ?1 ORDER BY path LIMIT 1))`)
	if err != nil {
		return err
	}
	defer find.Close()
	set, err := tx.PrepareContext(ctx, `UPDATE links SET target_id = ? WHERE rowid = ?`)
	if err != nil {
		return err
	}
	defer set.Close()
	resolved := map[string]sql.NullInt64{}
	for _, l := range links {
		key := strings.ToLower(l.target)
		id, ok := resolved[key]
		if !ok {
			if err := find.QueryRowContext(ctx, key).Scan(&id); err != nil {
				return err
			}
			resolved[key] = id
		}
		if _, err := set.ExecContext(ctx, id, l.rowid); err != nil {
			return err
		}
	}
	return nil
}

// fingerprint hashes every note's path and content hash, in path order: two
// indexes of the same vault content have the same fingerprint.
func fingerprint(ctx context.Context, tx *sql.Tx) (string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT path, hash FROM notes ORDER BY path`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	h := sha256.New()
	for rows.Next() {
		var p, hash string
		if err := rows.Scan(&p, &hash); err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%s\n", p, hash)
	}
	return hex.EncodeToString(h.Sum(nil)), rows.Err()
}

// writer holds the prepared statements of one transaction.
type writer struct {
	note, chunk, fts, vec, link                  *sql.Stmt
	delNote, delChunks, delFTS, delVec, delLinks *sql.Stmt
	oldFTS                                       *sql.Stmt // a note's chunk texts, before they are deleted
	kw                                           *kwWriter
	flat, delFlat, delCodes                      *sql.Stmt // quant.go's tables
}

// newWriter prepares a build's statements; full says the index is new (chunks
// come in id order and nothing is deleted).
func newWriter(ctx context.Context, tx *sql.Tx, full bool) (*writer, error) {
	w := &writer{kw: newKWWriter(full)}
	for _, s := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&w.note, `INSERT INTO notes(id, path, key, base, title, type, date, date_source, project, status, source, topics, mtime, size, hash, warnings)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.chunk, `INSERT INTO chunks(id, note_id, ord, part, heading, body, truncated, embed_hash) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.fts, `INSERT INTO chunks_fts(rowid, title, body) VALUES(?, ?, ?)`},
		{&w.vec, `INSERT INTO chunks_vec(rowid, embedding) VALUES(?, ?)`},
		{&w.flat, `INSERT INTO chunk_vectors(id, embedding) VALUES(?, ?)`},
		{&w.delFlat, `DELETE FROM chunk_vectors WHERE id IN (SELECT id FROM chunks WHERE note_id = ?)`},
		{&w.delCodes, `DELETE FROM chunk_codes WHERE id IN (SELECT id FROM chunks WHERE note_id = ?)`},
		{&w.link, `INSERT INTO links(note_id, ord, target, heading, alias) VALUES(?, ?, ?, ?, ?)`},
		{&w.oldFTS, `SELECT rowid, title, body FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE note_id = ?)`},
		{&w.delFTS, `DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE note_id = ?)`},
		{&w.delVec, `DELETE FROM chunks_vec WHERE rowid IN (SELECT id FROM chunks WHERE note_id = ?)`},
		{&w.delChunks, `DELETE FROM chunks WHERE note_id = ?`},
		{&w.delLinks, `DELETE FROM links WHERE note_id = ?`},
		{&w.delNote, `DELETE FROM notes WHERE id = ?`},
	} {
		st, err := tx.PrepareContext(ctx, s.sql)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("prepare %q: %w", strings.Fields(s.sql)[0]+" "+strings.Fields(s.sql)[2], err)
		}
		*s.dst = st
	}
	return w, nil
}

func (w *writer) close() {
	for _, s := range []*sql.Stmt{w.note, w.chunk, w.fts, w.vec, w.link, w.delNote, w.delChunks, w.oldFTS, w.delFTS, w.delVec, w.delLinks, w.flat, w.delFlat, w.delCodes} {
		if s != nil {
			s.Close()
		}
	}
}

// chunkIDsPerNote spaces chunk ids so a note's chunks keep contiguous ids that
// follow note order, and an incremental build can rewrite a note's chunks in
// place: chunk id = note id * chunkIDsPerNote + ord.
const chunkIDsPerNote = 1 << 16

// insertNote writes a note, its chunks, their text index and its links, and,
// with vecs, its chunks' vectors (a full build copies those afterwards).
func (w *writer) insertNote(ctx context.Context, id int64, p *parsed, vecs bool) error {
	n := &p.note
	key := strings.ToLower(strings.TrimSuffix(n.Path, path.Ext(n.Path)))
	topics, _ := json.Marshal(nonNil(n.Frontmatter.Topics))
	reasons := []string{} // the column holds each warning's one-line reason
	for _, w := range n.Warnings {
		reasons = append(reasons, w.Reason)
	}
	warns, _ := json.Marshal(reasons)
	date := n.Date.Format("2006-01-02")
	if _, err := w.note.ExecContext(ctx, id, n.Path, key, path.Base(key), n.Title,
		strings.ToLower(n.Frontmatter.Type), date, n.DateSource, strings.ToLower(n.Frontmatter.Project), strings.ToLower(n.Frontmatter.Status), n.Frontmatter.Source,
		string(topics), n.ModTime.Unix(), n.Size, n.Hash, string(warns)); err != nil {
		return fmt.Errorf("insert note %s: %w", n.Path, err)
	}
	if len(n.Chunks) >= chunkIDsPerNote {
		return fmt.Errorf("insert note %s: %d chunks, more than %d", n.Path, len(n.Chunks), chunkIDsPerNote-1)
	}
	for j, c := range n.Chunks {
		cid := id*chunkIDsPerNote + int64(c.Ord)
		if _, err := w.chunk.ExecContext(ctx, cid, id, c.Ord, c.Part, c.Heading, c.Body, c.Truncated, p.hashes[j]); err != nil {
			return fmt.Errorf("insert chunk of %s: %w", n.Path, err)
		}
		ftsBody := c.Body
		if c.Heading != "" {
			ftsBody = c.Heading + "\n" + c.Body
		}
		if _, err := w.fts.ExecContext(ctx, cid, n.Title, ftsBody); err != nil {
			return fmt.Errorf("index chunk text of %s: %w", n.Path, err)
		}
		if err := w.kw.add(ctx, cid, n.Title, ftsBody); err != nil {
			return err
		}
		if !vecs {
			continue
		}
		blob, err := sqlite_vec.SerializeFloat32(p.vecs[j])
		if err != nil {
			return err
		}
		if _, err := w.vec.ExecContext(ctx, cid, blob); err != nil {
			return fmt.Errorf("index chunk vector of %s: %w", n.Path, err)
		}
		if _, err := w.flat.ExecContext(ctx, cid, blob); err != nil {
			return fmt.Errorf("index chunk vector of %s: %w", n.Path, err)
		}
	}
	for i, l := range n.Links {
		if _, err := w.link.ExecContext(ctx, id, i, l.Target, l.Heading, l.Alias); err != nil {
			return fmt.Errorf("insert link of %s: %w", n.Path, err)
		}
	}
	return nil
}

func (w *writer) deleteNote(ctx context.Context, id int64) error {
	if err := w.forgetTerms(ctx, id); err != nil {
		return fmt.Errorf("delete note %d: %w", id, err)
	}
	for _, st := range []*sql.Stmt{w.delFTS, w.delVec, w.delFlat, w.delCodes, w.delChunks, w.delLinks, w.delNote} {
		if _, err := st.ExecContext(ctx, id); err != nil {
			return fmt.Errorf("delete note %d: %w", id, err)
		}
	}
	return nil
}

// forgetTerms hands the keyword postings the texts chunks_fts holds for a
// note about to be deleted.
func (w *writer) forgetTerms(ctx context.Context, id int64) error {
	rows, err := w.oldFTS.QueryContext(ctx, id)
	if err != nil {
		return err
	}
	var ids []int64
	var texts [][2]string
	for rows.Next() {
		var cid int64
		var t [2]string
		if err := rows.Scan(&cid, &t[0], &t[1]); err != nil {
			rows.Close()
			return err
		}
		ids, texts = append(ids, cid), append(texts, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return w.kw.remove(ctx, ids, texts)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func syncFile(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// VaultStamp hashes what an index of these files would be built from: every
// file's path and content, the embedder and the schema. Two equal stamps build
// equal indexes, so a cached index with the same stamp can be reused as is.
func VaultStamp(files []vault.File, embedder string) string {
	h := sha256.New()
	fmt.Fprintf(h, "schema %s\nembedder %s\n", SchemaVersion, embedder)
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\n", f.Path, f.Hash)
	}
	return hex.EncodeToString(h.Sum(nil))
}
