package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// The read side's lookups: counts, notes, chunks, vectors, links and
// listings.

// Stats summarises an index.
type Stats struct {
	Notes       int       `json:"notes"`
	Chunks      int       `json:"chunks"`
	Links       int       `json:"links"`
	Embedder    string    `json:"embedder"`
	BuiltAt     time.Time `json:"built_at"`
	Fingerprint string    `json:"fingerprint"`
	Bytes       int64     `json:"bytes"`
}

// Stats counts what the index holds.
func (d *DB) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	err := d.sql.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM notes), (SELECT count(*) FROM chunks), (SELECT count(*) FROM links)`).Scan(&s.Notes, &s.Chunks, &s.Links)
	if err != nil {
		return s, fmt.Errorf("index stats: %w", err)
	}
	m, err := readMeta(ctx, d.sql) // re-read: an incremental build updates it in place
	if err != nil {
		return s, err
	}
	s.Embedder, s.Fingerprint = m["embedder"], m["fingerprint"]
	s.BuiltAt, _ = time.Parse(time.RFC3339, m["built_at"])
	if fi, err := os.Stat(d.path); err == nil {
		s.Bytes = fi.Size()
	}
	return s, nil
}

// ChunkCount is the number of chunks with a vector (what a KNN can drain):
// every chunk of a complete index but those searched by keyword only.
func (d *DB) ChunkCount(ctx context.Context) (int, error) {
	var n int
	err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM chunk_vectors`).Scan(&n)
	return n, err
}

// Matching returns which of the given notes pass the filter.
func (d *DB) Matching(ctx context.Context, ids []int64, f Filter) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	where, args := f.where()
	rows, err := d.sql.QueryContext(ctx, `SELECT n.id FROM notes n WHERE n.id IN (SELECT value FROM json_each(?)) AND `+where, append([]any{jsonIDs(ids)}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("filter notes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// jsonIDs is ids as a JSON array, for SQLite's json_each. Marshalling a
// []int64 has no way to fail, so its error is not looked at.
func jsonIDs(ids []int64) string {
	raw, _ := json.Marshal(ids)
	return string(raw)
}

// Notes loads notes by id.
func (d *DB) Notes(ctx context.Context, ids []int64) (map[int64]NoteRow, error) {
	out := map[int64]NoteRow{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT `+noteCols+` FROM notes n WHERE n.id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("load notes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		n, err := scanNote(rows)
		if err != nil {
			return nil, err
		}
		out[n.ID] = n
	}
	return out, rows.Err()
}

// NoteByPath loads one note by its vault-relative path.
func (d *DB) NoteByPath(ctx context.Context, p string) (NoteRow, error) {
	n, err := scanNote(d.sql.QueryRowContext(ctx, `SELECT `+noteCols+` FROM notes n WHERE n.path = ?`, p))
	if errors.Is(err, sql.ErrNoRows) {
		return n, fmt.Errorf("no note %q in the index", p)
	}
	return n, err
}

// Chunks loads chunks by id.
func (d *DB) Chunks(ctx context.Context, ids []int64) (map[int64]ChunkRow, error) {
	out := map[int64]ChunkRow{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT id, note_id, ord, part, heading, body FROM chunks WHERE id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("load chunks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c ChunkRow
		if err := rows.Scan(&c.ID, &c.NoteID, &c.Ord, &c.Part, &c.Heading, &c.Body); err != nil {
			return nil, err
		}
		out[c.ID] = c
	}
	return out, rows.Err()
}

// NoteChunks loads a note's chunks in order.
func (d *DB) NoteChunks(ctx context.Context, noteID int64) ([]ChunkRow, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT id, note_id, ord, part, heading, body FROM chunks WHERE note_id = ? ORDER BY ord`, noteID)
	if err != nil {
		return nil, fmt.Errorf("load note chunks: %w", err)
	}
	defer rows.Close()
	var out []ChunkRow
	for rows.Next() {
		var c ChunkRow
		if err := rows.Scan(&c.ID, &c.NoteID, &c.Ord, &c.Part, &c.Heading, &c.Body); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Vectors loads stored chunk embeddings by chunk id.
func (d *DB) Vectors(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT rowid, embedding FROM chunks_vec WHERE rowid IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			return nil, err
		}
		out[id] = decodeVector(blob)
	}
	return out, rows.Err()
}

// Related returns the notes a note links to and the notes linking to it, from
// the wikilink table, outgoing first, each once.
func (d *DB) Related(ctx context.Context, noteID int64) ([]Related, error) {
	rows, err := d.sql.QueryContext(ctx, `
		SELECT n.path, n.title, 'links to', l.heading, 0 AS dir, l.ord FROM links l JOIN notes n ON n.id = l.target_id WHERE l.note_id = ?1 AND l.target_id != ?1
		UNION ALL
		SELECT n.path, n.title, 'linked from', '', 1, l.ord FROM links l JOIN notes n ON n.id = l.note_id WHERE l.target_id = ?1 AND l.note_id != ?1
		ORDER BY 5, 1, 6`, noteID)
	if err != nil {
		return nil, fmt.Errorf("related notes: %w", err)
	}
	defer rows.Close()
	var out []Related
	seen := map[string]bool{}
	for rows.Next() {
		var r Related
		var dir, ord int
		if err := rows.Scan(&r.Path, &r.Title, &r.Direction, &r.Heading, &dir, &ord); err != nil {
			return nil, err
		}
		if seen[r.Path] {
			continue
		}
		seen[r.Path] = true
		out = append(out, r)
	}
	return out, rows.Err()
}

// List returns notes matching a filter in path order, a page at a time, and
// the number matching in all.
func (d *DB) List(ctx context.Context, f Filter, offset, limit int) ([]NoteRow, int, error) {
	return d.ListSorted(ctx, f, OrderPath, offset, limit)
}

// Orders of a listing.
type Order int

const (
	OrderPath     Order = iota // by path
	OrderDate                  // by the date a note states, oldest first; notes stating none last, by path
	OrderDateDesc              // newest first; notes stating none last, by path
)

var orderBy = map[Order]string{
	OrderPath:     `n.path`,
	OrderDate:     `n.date_source = '` + vault.DateFromFileTime + `', n.date, n.path`,
	OrderDateDesc: `n.date_source = '` + vault.DateFromFileTime + `', CASE WHEN n.date_source = '` + vault.DateFromFileTime + `' THEN '' ELSE n.date END DESC, n.path`,
}

// ListSorted is List in another order.
func (d *DB) ListSorted(ctx context.Context, f Filter, order Order, offset, limit int) ([]NoteRow, int, error) {
	by, ok := orderBy[order]
	if !ok {
		return nil, 0, fmt.Errorf("list notes: unknown order %d", order)
	}
	where, args := f.where()
	var total int
	if err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM notes n WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list notes: %w", err)
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT `+noteCols+` FROM notes n WHERE `+where+` ORDER BY `+by+` LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list notes: %w", err)
	}
	defer rows.Close()
	var out []NoteRow
	for rows.Next() {
		n, err := scanNote(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, n)
	}
	return out, total, rows.Err()
}

// ResolveLink finds the note a wikilink's target names, as the build
// resolves links (resolveLinks): the note whose path without ".md" is the
// target, else the first in path order whose file name is, both compared
// case-insensitively. ok is false when no note is named so.
func (d *DB) ResolveLink(ctx context.Context, target string) (path string, ok bool, err error) {
	key := strings.ToLower(strings.TrimSuffix(target, ".md"))
	err = d.sql.QueryRowContext(ctx, `SELECT coalesce(
		(SELECT path FROM notes WHERE key = ?1),
		(SELECT path FROM notes WHERE base = ?1 ORDER BY path LIMIT 1), '')`, key).Scan(&path)
	if err != nil {
		return "", false, err
	}
	return path, path != "", nil
}

// NoteDate is a note's path and date, as stored.
type NoteDate struct {
	Path       string
	Date       string // YYYY-MM-DD
	DateSource string // "frontmatter", "filename" or "mtime"
}

// NoteDates returns the path and date of every note whose path starts with
// prefix ("" for all), in path order: what vault_grep reads.
func (d *DB) NoteDates(ctx context.Context, prefix string) ([]NoteDate, error) {
	where, args := Filter{PathPrefix: prefix}.where()
	rows, err := d.sql.QueryContext(ctx, `SELECT n.path, n.date, n.date_source FROM notes n WHERE `+where+` ORDER BY n.path`, args...)
	if err != nil {
		return nil, fmt.Errorf("list notes: %w", err)
	}
	defer rows.Close()
	var out []NoteDate
	for rows.Next() {
		var n NoteDate
		if err := rows.Scan(&n.Path, &n.Date, &n.DateSource); err != nil {
			return nil, fmt.Errorf("list notes: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
