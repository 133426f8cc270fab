package index

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/vault-rag/vault-rag/index/postings"
)

// The terms of the keyword postings (package postings) are FTS5's own:
// every text goes through the same tokenizer as chunks_fts (ftsTokenize) in
// a private in-memory SQLite database, so a term there is a term in
// chunks_fts, stemming and case folding included.

// ftsTokenize is the tokenizer of chunks_fts, and of the tokenizer below.
const ftsTokenize = `porter unicode61`

// ftsTokenizer runs FTS5's tokenizer through an FTS5 table in a private
// in-memory database: rows are inserted in a transaction, their terms read
// back through fts5vocab, and the transaction rolled back. Its owner holds
// one (a DB for its queries, a build's kwWriter for its chunks): the
// database is opened on first use and closed with the owner, and the
// mutex takes the owner's callers through its one connection in turn. The
// zero value is ready to use.
type ftsTokenizer struct {
	mu    sync.Mutex
	conn  *sql.Conn
	db    *sql.DB
	stems map[string][]string // query term → its FTS5 tokens (bounded)
}

// maxStems bounds the query-term cache.
const maxStems = 1 << 14

func (t *ftsTokenizer) open(ctx context.Context) error {
	if t.conn != nil {
		return nil
	}
	// mode=memory without cache=shared: a database of this connection's own.
	db, err := sql.Open("sqlite3", "file:vault-rag-tokenizer?mode=memory")
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return err
	}
	for _, s := range []string{
		`CREATE VIRTUAL TABLE tok USING fts5(title, body, tokenize='` + ftsTokenize + `')`,
		`CREATE VIRTUAL TABLE tok_v USING fts5vocab(tok, instance)`,
	} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			conn.Close()
			db.Close()
			return fmt.Errorf("keyword tokenizer: %w", err)
		}
	}
	t.db, t.conn = db, conn
	return nil
}

// close closes the tokenizer's database; a later call opens it again.
func (t *ftsTokenizer) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reset()
	t.stems = nil
}

// reset drops the connection after an error, so the next call starts afresh.
func (t *ftsTokenizer) reset() {
	if t.conn != nil {
		t.conn.Close()
		t.db.Close()
	}
	t.conn, t.db = nil, nil
}

// tokenize returns each (title, body) text as chunks_fts would index it.
func (t *ftsTokenizer) tokenize(ctx context.Context, docs [][2]string) ([]postings.Doc, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out, err := t.tokenizeLocked(ctx, docs)
	if err != nil {
		t.reset()
	}
	return out, err
}

func (t *ftsTokenizer) tokenizeLocked(ctx context.Context, docs [][2]string) ([]postings.Doc, error) {
	if err := t.open(ctx); err != nil {
		return nil, err
	}
	out := make([]postings.Doc, len(docs))
	for i := range out {
		out[i].Terms = map[string][2]uint32{}
	}
	const batch = 512
	for lo := 0; lo < len(docs); lo += batch {
		hi := min(lo+batch, len(docs))
		if err := t.tokenizeBatch(ctx, docs[lo:hi], out[lo:hi]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *ftsTokenizer) tokenizeBatch(ctx context.Context, docs [][2]string, out []postings.Doc) error {
	tx, err := t.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // the rows were only there to be tokenized
	ins, err := tx.PrepareContext(ctx, `INSERT INTO tok(rowid, title, body) VALUES(?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for i, d := range docs {
		if _, err := ins.ExecContext(ctx, i+1, d[0], d[1]); err != nil {
			return fmt.Errorf("keyword tokenizer: %w", err)
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT doc, term, col = 'title', count(*) FROM tok_v GROUP BY doc, term, col`)
	if err != nil {
		return fmt.Errorf("keyword tokenizer: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc int
		var term string
		var title bool
		var n uint32
		if err := rows.Scan(&doc, &term, &title, &n); err != nil {
			return err
		}
		d := &out[doc-1]
		c := d.Terms[term]
		if title {
			c[0] += n
		} else {
			c[1] += n
		}
		d.Terms[term] = c
		d.N += n
	}
	return rows.Err()
}

// queryTokens is each query term's FTS5 token, or an empty list for a term
// that is not exactly one token (a term Terms made almost always is one; one
// that is not sends the search to FTS5 itself).
func (t *ftsTokenizer) queryTokens(ctx context.Context, terms []string) ([][]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stems == nil || len(t.stems) > maxStems {
		t.stems = map[string][]string{}
	}
	var todo [][2]string
	for _, term := range terms {
		if _, ok := t.stems[term]; !ok {
			todo = append(todo, [2]string{"", term})
		}
	}
	if len(todo) > 0 {
		toks, err := t.tokenizeLocked(ctx, todo)
		if err != nil {
			t.reset()
			return nil, err
		}
		for i, d := range toks {
			ts := []string{} // none, or several: not a one-token term
			if d.N == 1 {
				for term := range d.Terms {
					ts = append(ts, term)
				}
			}
			t.stems[todo[i][1]] = ts
		}
	}
	out := make([][]string, len(terms))
	for i, term := range terms {
		out[i] = t.stems[term]
	}
	return out, nil
}
