package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"

	"github.com/vault-rag/vault-rag/internal/vault"
)

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
	w.kw.close()
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

// refusal says why a prepared note cannot be written, or nil: the last
// check of the note's own faults before its rows go in, so that every error
// insertNote returns after it is the database's. prepareNote keeps notes
// within it, so a refusal here is a bug, reported on the note alone.
func refusal(p *parsed) *vault.Problem {
	n := &p.note
	if len(n.Chunks) >= chunkIDsPerNote {
		prob := noteFailed(fmt.Sprintf("%d chunks, more than the %d a note's ids hold", len(n.Chunks), chunkIDsPerNote-1))
		return &prob
	}
	if len(p.hashes) != len(n.Chunks) {
		prob := noteFailed(fmt.Sprintf("%d chunks, %d embedding texts", len(n.Chunks), len(p.hashes)))
		return &prob
	}
	for j, c := range n.Chunks {
		if c.Ord != j {
			prob := noteFailed(fmt.Sprintf("chunk %d numbered %d", j, c.Ord))
			return &prob
		}
	}
	return nil
}

// insertNote writes a note, its chunks, their text index and its links, and,
// with vecs, its chunks' vectors (a full build copies those afterwards). The
// caller has checked refusal(p).
func (w *writer) insertNote(ctx context.Context, id int64, p *parsed, vecs bool) error {
	n := &p.note
	if prob := refusal(p); prob != nil {
		return fmt.Errorf("insert note %s: %s", n.Path, prob.Reason)
	}
	key := strings.ToLower(strings.TrimSuffix(n.Path, path.Ext(n.Path)))
	meta := NoteMetaOf(n)
	// A []string always marshals: neither Marshal below can fail.
	topics, _ := json.Marshal(nonNil(meta.Topics))
	reasons := []string{} // the column holds each warning's one-line reason
	for _, w := range n.Warnings {
		reasons = append(reasons, w.Reason)
	}
	warns, _ := json.Marshal(reasons)
	if _, err := w.note.ExecContext(ctx, id, n.Path, key, path.Base(key), n.Title,
		meta.Type, meta.Date, n.DateSource, meta.Project, meta.Status, meta.Source,
		string(topics), n.ModTime.Unix(), n.Size, n.Hash, string(warns)); err != nil {
		return fmt.Errorf("insert note %s: %w", n.Path, err)
	}
	ftsTitle := SplitCJK(searchTitle(n))
	for j, c := range n.Chunks {
		cid := id*chunkIDsPerNote + int64(c.Ord)
		if _, err := w.chunk.ExecContext(ctx, cid, id, c.Ord, c.Part, c.Heading, c.Body, c.Truncated, p.hashes[j]); err != nil {
			return fmt.Errorf("insert chunk of %s: %w", n.Path, err)
		}
		ftsBody := c.Body
		if c.Heading != "" {
			ftsBody = c.Heading + "\n" + c.Body
		}
		ftsBody = SplitCJK(ftsBody)
		if _, err := w.fts.ExecContext(ctx, cid, ftsTitle, ftsBody); err != nil {
			return fmt.Errorf("index chunk text of %s: %w", n.Path, err)
		}
		if err := w.kw.add(ctx, cid, ftsTitle, ftsBody); err != nil {
			return err
		}
		if !vecs || p.hashes[j] == keywordOnly {
			continue
		}
		blob, err := sqlite_vec.SerializeFloat32(p.vecs[j])
		if err != nil {
			return err
		}
		if err := w.addVector(ctx, cid, blob); err != nil {
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

// searchTitle is the text a note's title is searched by: its title, first
// level-one heading, file name and aliases (vault.Note.TitleNames), as
// Obsidian's quick switcher finds a note by its name or an alias.
// notes.title keeps the title alone, for display.
func searchTitle(n *vault.Note) string {
	return strings.Join(n.TitleNames(), " ")
}

// addVector stores a chunk's vector for both searches: in chunks_vec for the
// exact KNN, and as the plain row the binary first pass rescores from
// (quant.go).
func (w *writer) addVector(ctx context.Context, id int64, blob []byte) error {
	if _, err := w.vec.ExecContext(ctx, id, blob); err != nil {
		return err
	}
	_, err := w.flat.ExecContext(ctx, id, blob)
	return err
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
