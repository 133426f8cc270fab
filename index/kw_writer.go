package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/vault-rag/vault-rag/index/postings"
)

// kw_postings(term, df, data) holds the keyword postings: for every term of
// chunks_fts, its document frequency and its list (package postings), so a
// keyword search reads only its terms' lists (bm25.go) instead of letting
// FTS5 score every matching row.

// kwWriter maintains kw_postings through a build: it tokenizes the chunks'
// texts as chunks_fts does, in batches, and hands them to the build's lists.
type kwWriter struct {
	tok     ftsTokenizer // the build's own, closed by close
	lists   *postings.Writer
	pending [][2]string // texts not yet tokenized
	ids     []int64
}

func newKWWriter(full bool) *kwWriter {
	return &kwWriter{lists: postings.NewWriter(full)}
}

// close releases the writer's tokenizer.
func (w *kwWriter) close() { w.tok.close() }

// add queues a chunk's text as chunks_fts holds it.
func (w *kwWriter) add(ctx context.Context, id int64, title, body string) error {
	w.pending = append(w.pending, [2]string{title, body})
	w.ids = append(w.ids, id)
	if len(w.pending) >= 1024 {
		return w.tokenizePending(ctx)
	}
	return nil
}

func (w *kwWriter) tokenizePending(ctx context.Context) error {
	if len(w.pending) == 0 {
		return nil
	}
	docs, err := w.tok.tokenize(ctx, w.pending)
	if err != nil {
		return fmt.Errorf("keyword postings: %w", err)
	}
	for i, d := range docs {
		if err := w.lists.Add(w.ids[i], d); err != nil {
			return err
		}
	}
	w.pending, w.ids = w.pending[:0], w.ids[:0]
	return nil
}

// remove notes chunks an incremental build deletes, with the texts
// chunks_fts held for them (so their terms' lists are patched).
func (w *kwWriter) remove(ctx context.Context, ids []int64, texts [][2]string) error {
	docs, err := w.tok.tokenize(ctx, texts)
	if err != nil {
		return fmt.Errorf("keyword postings: %w", err)
	}
	for i, d := range docs {
		w.lists.Remove(ids[i], d)
	}
	return nil
}

// flush writes the lists into kw_postings.
func (w *kwWriter) flush(ctx context.Context, tx *sql.Tx) error {
	if err := w.tokenizePending(ctx); err != nil {
		return err
	}
	s := &kwStore{ctx: ctx}
	defer s.close()
	for _, st := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.put, `INSERT INTO kw_postings(term, df, data) VALUES(?, ?, ?) ON CONFLICT(term) DO UPDATE SET df = excluded.df, data = excluded.data`},
		{&s.get, `SELECT data FROM kw_postings WHERE term = ?`},
		{&s.del, `DELETE FROM kw_postings WHERE term = ?`},
	} {
		p, err := tx.PrepareContext(ctx, st.sql)
		if err != nil {
			return fmt.Errorf("keyword postings: %w", err)
		}
		*st.dst = p
	}
	return postingsErr(w.lists.Flush(s))
}

// kwStore is kw_postings, in a build's transaction, as the postings' store.
type kwStore struct {
	ctx           context.Context
	put, get, del *sql.Stmt
}

func (s *kwStore) close() {
	for _, st := range []*sql.Stmt{s.put, s.get, s.del} {
		if st != nil {
			st.Close()
		}
	}
}

func (s *kwStore) Get(term string) ([]byte, error) {
	var data []byte
	if err := s.get.QueryRowContext(s.ctx, term).Scan(&data); err != nil && err != sql.ErrNoRows {
		return nil, fmt.Errorf("keyword postings: %w", err)
	}
	return data, nil
}

func (s *kwStore) Put(term string, df int, data []byte) error {
	if _, err := s.put.ExecContext(s.ctx, term, df, data); err != nil {
		return fmt.Errorf("keyword postings: %w", err)
	}
	return nil
}

func (s *kwStore) Delete(term string) error {
	if _, err := s.del.ExecContext(s.ctx, term); err != nil {
		return fmt.Errorf("keyword postings: %w", err)
	}
	return nil
}

// postingsErr reports a damaged posting list as a corrupt index, which a
// reindex rebuilds; other errors pass as they are.
func postingsErr(err error) error {
	if errors.Is(err, postings.ErrDamaged) {
		return fmt.Errorf("%w: %w; run `vault-rag reindex`", ErrCorrupt, err)
	}
	return err
}
