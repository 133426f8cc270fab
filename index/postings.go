package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
)

// The keyword postings: for every term of chunks_fts, the chunks holding it,
// with the term's count in each column and the chunk's length in tokens —
// exactly what FTS5's bm25 reads of a row — so a keyword search reads only its
// terms' lists (bm25.go) instead of letting FTS5 score every matching row.
//
// The terms are FTS5's own: every text goes through the same tokenizer as
// chunks_fts (ftsTokenize) in a private in-memory SQLite database, so a term
// here is a term there, stemming and case folding included.
//
// kw_postings(term, df, data): data is the term's chunks in id order, in
// blocks (listEncoder).

// ftsTokenize is the tokenizer of chunks_fts, and of the tokenizer below.
const ftsTokenize = `porter unicode61`

// posting is one chunk of a term's list.
type posting struct {
	id          int64
	title, body uint32 // the term's count in each column
	n           uint32 // the chunk's tokens, both columns
}

// A list is a run of blocks of at most blockSize postings, so a search can
// step over a block whose chunks it does not need (bm25.go's MaxScore): each
// block is uvarint(postings), uvarint(its last id - the previous block's last
// id), uvarint(bytes of postings), then per posting uvarint(id - previous
// id), uvarint(count in title), uvarint(count in body), uvarint(chunk tokens).
const blockSize = 64

// listEncoder writes a list from postings in increasing id order.
type listEncoder struct {
	buf   []byte
	block []posting
	last  int64 // the last id of the last block written
	df    int
}

func (e *listEncoder) add(p posting) error {
	if e.df > 0 && p.id <= e.lastID() {
		return fmt.Errorf("keyword postings: chunk %d after chunk %d", p.id, e.lastID())
	}
	e.block = append(e.block, p)
	e.df++
	if len(e.block) == blockSize {
		e.flush()
	}
	return nil
}

func (e *listEncoder) lastID() int64 {
	if len(e.block) > 0 {
		return e.block[len(e.block)-1].id
	}
	return e.last
}

func (e *listEncoder) flush() {
	if len(e.block) == 0 {
		return
	}
	var body []byte
	prev := e.last
	for _, p := range e.block {
		body = binary.AppendUvarint(body, uint64(p.id-prev))
		body = binary.AppendUvarint(body, uint64(p.title))
		body = binary.AppendUvarint(body, uint64(p.body))
		body = binary.AppendUvarint(body, uint64(p.n))
		prev = p.id
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(len(e.block)))
	e.buf = binary.AppendUvarint(e.buf, uint64(prev-e.last))
	e.buf = binary.AppendUvarint(e.buf, uint64(len(body)))
	e.buf = append(e.buf, body...)
	e.last, e.block = prev, e.block[:0]
}

// bytes ends the list.
func (e *listEncoder) bytes() []byte {
	e.flush()
	return e.buf
}

// postingCursor walks an encoded list, forward only, as prometheus tsdb's
// Postings and Lucene's DocIdSetIterator do: at is the current posting, next
// and seek move on, err says whether the list was damaged. It is positioned
// on the first posting from the start (newPostingCursor), and at the end its
// posting's id is endOfList, after every chunk, so a merge taking the least
// current id over several lists needs no test for a finished one (Lucene's
// NO_MORE_DOCS).
type postingCursor struct {
	data      []byte // from the current block's postings on
	cur       posting
	left      int    // postings left in the current block
	blockLast int64  // the current block's last id
	after     []byte // the list after the current block
	done      bool
	fault     error
}

// endOfList is the id of a finished cursor's posting.
const endOfList = math.MaxInt64

// newPostingCursor returns a cursor on the first posting of an encoded list.
func newPostingCursor(data []byte) *postingCursor {
	c := &postingCursor{data: data}
	c.next()
	return c
}

// at is the current posting; its id is endOfList once the list is done.
func (c *postingCursor) at() posting { return c.cur }

// err is the list's damage, if reading it found any.
func (c *postingCursor) err() error { return c.fault }

// finish ends the walk: what is left of the list is not read.
func (c *postingCursor) finish() {
	c.done, c.cur = true, posting{id: endOfList}
}

func (c *postingCursor) fail() {
	c.finish()
	c.fault = fmt.Errorf("%w: a keyword posting list is damaged; run `vault-rag reindex`", ErrCorrupt)
}

func (c *postingCursor) uvarint() uint64 {
	x, k := binary.Uvarint(c.data)
	if k <= 0 {
		c.fail()
		return 0
	}
	c.data = c.data[k:]
	return x
}

// header reads a block header; false at the end of the list.
func (c *postingCursor) header() (size int, ok bool) {
	if len(c.data) == 0 {
		c.finish()
		return 0, false
	}
	n, dLast, bytes := c.uvarint(), c.uvarint(), c.uvarint()
	if c.done || n == 0 || bytes > uint64(len(c.data)) {
		c.fail()
		return 0, false
	}
	c.left, c.blockLast, c.after = int(n), c.blockLast+int64(dLast), c.data[bytes:]
	return int(bytes), true
}

// next moves to the next posting.
func (c *postingCursor) next() {
	if c.done {
		return
	}
	if c.left == 0 {
		if _, ok := c.header(); !ok {
			return
		}
	}
	dID, title, body, n := c.uvarint(), c.uvarint(), c.uvarint(), c.uvarint()
	if c.done {
		return
	}
	c.left--
	c.cur = posting{id: c.cur.id + int64(dID), title: uint32(title), body: uint32(body), n: uint32(n)}
}

// seek moves to the first posting with an id of at least id, stepping over
// whole blocks that end before it; a cursor there already stays.
func (c *postingCursor) seek(id int64) {
	for !c.done && c.cur.id < id {
		if c.left > 0 && c.blockLast < id { // the rest of this block is before id
			c.data, c.cur.id, c.left = c.after, c.blockLast, 0
		}
		if c.left == 0 {
			if _, ok := c.header(); !ok {
				return
			}
			if c.blockLast < id {
				c.data, c.cur.id, c.left = c.after, c.blockLast, 0
				continue
			}
		}
		c.next()
	}
}

func decodePostings(data []byte) ([]posting, error) {
	var out []posting
	for c := newPostingCursor(data); ; c.next() {
		if c.done {
			return out, c.err()
		}
		out = append(out, c.at())
	}
}

// docTokens is one text as FTS5 tokenizes it: each term's count per column,
// and the tokens in all.
type docTokens struct {
	terms map[string][2]uint32
	n     uint32
}

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
func (t *ftsTokenizer) tokenize(ctx context.Context, docs [][2]string) ([]docTokens, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out, err := t.tokenizeLocked(ctx, docs)
	if err != nil {
		t.reset()
	}
	return out, err
}

func (t *ftsTokenizer) tokenizeLocked(ctx context.Context, docs [][2]string) ([]docTokens, error) {
	if err := t.open(ctx); err != nil {
		return nil, err
	}
	out := make([]docTokens, len(docs))
	for i := range out {
		out[i].terms = map[string][2]uint32{}
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

func (t *ftsTokenizer) tokenizeBatch(ctx context.Context, docs [][2]string, out []docTokens) error {
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
		c := d.terms[term]
		if title {
			c[0] += n
		} else {
			c[1] += n
		}
		d.terms[term] = c
		d.n += n
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
			if d.n == 1 {
				for term := range d.terms {
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

// kwWriter maintains kw_postings through a build. A full build adds chunks in
// id order and keeps every list encoded in memory (≈ 3 bytes a posting); an
// incremental one notes the chunks it deletes and adds, and patches the lists
// of their terms at flush.
type kwWriter struct {
	tok     ftsTokenizer // the build's own, closed by close
	full    bool
	pending [][2]string // texts not yet tokenized
	ids     []int64
	// full build
	lists map[string]*listEncoder
	// incremental build
	added   map[string][]posting
	removed map[int64]bool
	touched map[string]bool
}

func newKWWriter(full bool) *kwWriter {
	return &kwWriter{full: full, lists: map[string]*listEncoder{}, added: map[string][]posting{}, removed: map[int64]bool{}, touched: map[string]bool{}}
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
		id := w.ids[i]
		for term, c := range d.terms {
			p := posting{id: id, title: c[0], body: c[1], n: d.n}
			if !w.full {
				w.added[term] = append(w.added[term], p)
				continue
			}
			l := w.lists[term]
			if l == nil {
				l = &listEncoder{}
				w.lists[term] = l
			}
			if err := l.add(p); err != nil {
				return err
			}
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
		w.removed[ids[i]] = true
		for term := range d.terms {
			w.touched[term] = true
		}
	}
	return nil
}

// flush writes the lists into kw_postings.
func (w *kwWriter) flush(ctx context.Context, tx *sql.Tx) error {
	if err := w.tokenizePending(ctx); err != nil {
		return err
	}
	put, err := tx.PrepareContext(ctx, `INSERT INTO kw_postings(term, df, data) VALUES(?, ?, ?) ON CONFLICT(term) DO UPDATE SET df = excluded.df, data = excluded.data`)
	if err != nil {
		return fmt.Errorf("keyword postings: %w", err)
	}
	defer put.Close()
	if w.full {
		terms := make([]string, 0, len(w.lists))
		for t := range w.lists {
			terms = append(terms, t)
		}
		slices.Sort(terms)
		for _, t := range terms {
			l := w.lists[t]
			if _, err := put.ExecContext(ctx, t, l.df, l.bytes()); err != nil {
				return fmt.Errorf("keyword postings: %w", err)
			}
		}
		w.lists = map[string]*listEncoder{}
		return nil
	}
	for t := range w.added {
		w.touched[t] = true
	}
	terms := make([]string, 0, len(w.touched))
	for t := range w.touched {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	get, err := tx.PrepareContext(ctx, `SELECT data FROM kw_postings WHERE term = ?`)
	if err != nil {
		return fmt.Errorf("keyword postings: %w", err)
	}
	defer get.Close()
	del, err := tx.PrepareContext(ctx, `DELETE FROM kw_postings WHERE term = ?`)
	if err != nil {
		return fmt.Errorf("keyword postings: %w", err)
	}
	defer del.Close()
	for _, t := range terms {
		var data []byte
		if err := get.QueryRowContext(ctx, t).Scan(&data); err != nil && err != sql.ErrNoRows {
			return fmt.Errorf("keyword postings: %w", err)
		}
		old, err := decodePostings(data)
		if err != nil {
			return err
		}
		list := old[:0]
		for _, p := range old {
			if !w.removed[p.id] {
				list = append(list, p)
			}
		}
		list = append(list, w.added[t]...)
		slices.SortFunc(list, func(a, b posting) int { return cmpInt64(a.id, b.id) })
		if len(list) == 0 {
			if _, err := del.ExecContext(ctx, t); err != nil {
				return fmt.Errorf("keyword postings: %w", err)
			}
			continue
		}
		var enc listEncoder
		for _, p := range list {
			if err := enc.add(p); err != nil {
				return fmt.Errorf("%w (the list of %q)", err, t)
			}
		}
		if _, err := put.ExecContext(ctx, t, enc.df, enc.bytes()); err != nil {
			return fmt.Errorf("keyword postings: %w", err)
		}
	}
	w.added, w.removed, w.touched = map[string][]posting{}, map[int64]bool{}, map[string]bool{}
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
