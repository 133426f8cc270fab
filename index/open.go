package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// Opening an index: the handle, its integrity checks and the metadata it
// was opened with.

// ErrNoIndex says there is no index file yet.
var ErrNoIndex = errors.New("no index")

// ErrCorrupt says the index file exists but cannot be used.
var ErrCorrupt = errors.New("index unusable")

// DB is a read-only view of an index file. It is safe for concurrent use.
type DB struct {
	db *sql.DB // the open file, closed by Close
	// sql is what queries read: db, or a snapshot's transaction (Snapshot).
	sql  queryer
	snap *sql.Tx
	path string
	// file is the index file as Open found it at path: CheckFile compares
	// what is at path now with it (a deleted or replaced file).
	file os.FileInfo
	meta map[string]string
	// gen reads the file's build generation, which Stale compares with
	// meta's (the one opened).
	gen *sql.Stmt
	// checked is why Open ran the page check, "" when it did not.
	checked string
	cc      *codeCache // binary codes for the binary vector search, loaded on first use
	// queryTokenizer is FTS5's tokenizer for the keyword search's query terms
	// (fts_tokenizer.go), opened on first use and closed by Close.
	queryTokenizer *ftsTokenizer
}

const generationQuery = `SELECT coalesce((SELECT value FROM meta WHERE key = ?), '')`

// queryer is what the index's statements read through: the open file
// (*sql.DB), a snapshot or a build's transaction (*sql.Tx), or a connection.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readTx is a read transaction for statements that must see one state of
// the file: the snapshot's own, or a new one that done ends.
func (d *DB) readTx(ctx context.Context) (tx *sql.Tx, done func(), err error) {
	if d.snap != nil {
		return d.snap, func() {}, nil
	}
	tx, err = d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, err
	}
	return tx, func() { tx.Rollback() }, nil
}

// Snapshot returns a view of the index that reads one state of the file for
// as long as it is held: a request whose several statements must agree
// (hits, then their notes and chunks) reads them through it, and a full
// rebuild copied into the file meanwhile cannot change its answers half-way.
// A view whose Stale is true read another build than the handle's metadata
// describes: reopen. The view is safe for concurrent use; release ends it and
// must be called. While it is held, writers of the file wait for it (a full
// rebuild's copy, an incremental build's commit): hold it for one request,
// never across a wait for a build.
func (d *DB) Snapshot(ctx context.Context) (view *DB, release func(), err error) {
	if d.snap != nil {
		return d, func() {}, nil
	}
	tx, err := d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot the index: %w", err)
	}
	// SQLite starts a read transaction at its first read: read now, so
	// the snapshot is of this moment.
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM meta`).Scan(&n); err != nil {
		tx.Rollback()
		return nil, nil, fmt.Errorf("snapshot the index: %w", err)
	}
	v := *d
	v.sql, v.snap = tx, tx
	return &v, func() { tx.Rollback() }, nil
}

// Open opens an index read-only and checks that it is one: a missing file is
// ErrNoIndex, a truncated, corrupt or foreign one is ErrCorrupt with the cause.
//
// SQLite's full page check (PRAGMA quick_check, about a second on a
// 30,000-note index) runs only when there is a reason to doubt the file: a hot
// journal was rolled back, a writer died mid-transaction (its marker is still
// there), the file's size disagrees with its header, or reading it failed.
// Otherwise a damaged page surfaces when a query reads it, as an error that
// IsCorrupt recognises.
func Open(ctx context.Context, path string) (*DB, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w at %s (run `vault-rag reindex`)", ErrNoIndex, path)
	}
	var reason string
	if recoverHotJournal(ctx, path) {
		reason = "hot journal"
	} else if _, err := os.Stat(dirtyMarker(path)); err == nil {
		reason = "unclean shutdown marker"
	} else if why := headerMismatch(path, fi.Size()); why != "" {
		reason = why
	}
	db, err := openSQLite(path, true)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	check := func() error {
		if err := quickCheck(ctx, db); err != nil {
			db.Close()
			return fmt.Errorf("%w: %s fails SQLite's check (%v); run `vault-rag reindex` to rebuild it", ErrCorrupt, path, err)
		}
		return nil
	}
	if reason != "" {
		if err := check(); err != nil {
			return nil, err
		}
	}
	meta, err := readMeta(ctx, db)
	if err != nil {
		if reason == "" {
			reason = "failed open"
			if err := check(); err != nil {
				return nil, err
			}
		}
		db.Close()
		return nil, fmt.Errorf("%w: %s is not a vault-rag index (%v); run `vault-rag reindex`", ErrCorrupt, path, err)
	}
	if meta["schema_version"] != SchemaVersion {
		db.Close()
		return nil, fmt.Errorf("%w: %s has schema %q, this build reads %q; run `vault-rag reindex`", ErrCorrupt, path, meta["schema_version"], SchemaVersion)
	}
	gen, err := db.PrepareContext(ctx, generationQuery)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	// fi was taken before the file was opened: a file renamed over it in
	// between makes CheckFile report a replacement (reopen, and all is
	// well), never the other way round.
	return &DB{db: db, sql: db, path: path, file: fi, meta: meta, checked: reason, gen: gen, cc: &codeCache{}, queryTokenizer: &ftsTokenizer{}}, nil
}

// ErrFileGone and ErrFileReplaced are CheckFile's findings.
var (
	ErrFileGone     = errors.New("the index file was deleted or moved away after it was opened")
	ErrFileReplaced = errors.New("the index file was replaced by another file after it was opened")
)

// CheckFile reports whether the file at the index's path is still the one
// this handle has open (one stat, compared by file identity: device and
// inode, or Windows' file index). A build writes into the open file, which
// changes its size and time but not its identity; a file deleted under the
// handle is ErrFileGone (the handle still reads the deleted file, which no
// build will ever update), one renamed over it ErrFileReplaced (open the
// path again to read it).
func (d *DB) CheckFile() error {
	if d.file == nil {
		return nil
	}
	fi, err := os.Stat(d.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s", ErrFileGone, d.path)
	case err != nil:
		return fmt.Errorf("%w: %s: %v", ErrFileGone, d.path, err)
	case !os.SameFile(fi, d.file):
		return fmt.Errorf("%w: %s", ErrFileReplaced, d.path)
	}
	return nil
}

// Check runs SQLite's page check (PRAGMA quick_check) on the open file:
// ErrCorrupt, in one line, if it finds damage.
func (d *DB) Check(ctx context.Context) error {
	if err := quickCheck(ctx, d.db); err != nil {
		return fmt.Errorf("%w: %s fails SQLite's check (%v); run `vault-rag reindex` to rebuild it", ErrCorrupt, d.path, err)
	}
	return nil
}

// CheckReason says why Open ran SQLite's page check on this file ("hot journal",
// "unclean shutdown marker", a header mismatch, "failed open"), or "" when it
// had no reason to.
func (d *DB) CheckReason() string { return d.checked }

// IsCorrupt reports whether err is SQLite finding a damaged or foreign file
// (a query that read a bad page), or ErrCorrupt.
func IsCorrupt(err error) bool {
	if errors.Is(err, ErrCorrupt) {
		return true
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	return false
}

// dirtyMarker names the file an incremental build keeps beside the index
// while its transaction is open: found by Open, it means a writer died.
func dirtyMarker(dbPath string) string { return dbPath + ".writing" }

func setDirty(dbPath string) error {
	f, err := os.OpenFile(dirtyMarker(dbPath), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("mark the index as being written: %w", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func clearDirty(dbPath string) { os.Remove(dirtyMarker(dbPath)) }

// headerMismatch compares the file with what its 100-byte SQLite header says
// (page size × page count): a truncated or extended file disagrees. It reads
// the header only. "" means they agree or the header cannot say.
func headerMismatch(path string, size int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := make([]byte, 100)
	if n, _ := io.ReadFull(f, h); n < 100 {
		return "" // not even a header: reading it fails, and says so
	}
	if string(h[:16]) != "SQLite format 3\x00" {
		return ""
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	// The page count is valid only when the version-valid-for number matches
	// the change counter (SQLite 3.7.0 and later write both).
	if binary.BigEndian.Uint32(h[24:28]) != binary.BigEndian.Uint32(h[92:96]) || pages == 0 || pageSize < 512 {
		return ""
	}
	if pages*pageSize != size {
		return fmt.Sprintf("file size %d, header says %d pages of %d", size, pages, pageSize)
	}
	return ""
}

// quickCheck runs SQLite's quick_check and returns its first finding, in one
// line: a damaged file can report hundreds ("Page 277: never used", ...).
func quickCheck(ctx context.Context, db *sql.DB) error {
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil {
		return err
	}
	if check == "ok" {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(check, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "*** in database") {
			lines = append(lines, l)
		}
	}
	switch len(lines) {
	case 0:
		return errors.New(strings.Join(strings.Fields(check), " "))
	case 1:
		return errors.New(lines[0])
	}
	return fmt.Errorf("%s, and %d more problems", lines[0], len(lines)-1)
}

// recoverHotJournal lets SQLite roll back what an incremental build killed
// mid-transaction left in the rollback journal. Only a read-write connection
// can: a read-only one fails with "attempt to write a readonly database", and
// a sound index would be reported as corrupt. A journal that a live writer
// holds is not hot, and SQLite leaves it alone. It reports whether a journal
// was there (a reason to check the file).
func recoverHotJournal(ctx context.Context, path string) bool {
	fi, err := os.Stat(path + "-journal")
	if err != nil || fi.Size() == 0 {
		return false
	}
	rw, err := openSQLite(path, false)
	if err != nil {
		return true
	}
	defer rw.Close()
	var n int
	_ = rw.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n) // the first read rolls a hot journal back
	return true
}

// Close closes the index and its tokenizer. A snapshot's view is not
// closed: release it, and close the DB it came from.
func (d *DB) Close() error {
	if d.snap != nil {
		return errors.New("close a snapshot of the index: release it instead")
	}
	d.queryTokenizer.close()
	d.gen.Close()
	return d.db.Close()
}

// Path is the file the index was opened from.
func (d *DB) Path() string { return d.path }

// Meta returns a recorded property of the index: embedder, dim, built_at,
// vault, fingerprint, schema_version.
func (d *DB) Meta(key string) string { return d.meta[key] }

// Embedder is the model the index was embedded with: the one a query must be
// embedded by to be compared with the stored vectors.
func (d *DB) Embedder() string { return d.meta["embedder"] }

// Script is the vault's dominant writing system when it was last built and
// that script's share of its letters ("" and 0 for an index that did not
// record it).
func (d *DB) Script() (string, float64) {
	share, _ := strconv.ParseFloat(d.meta["script_share"], 64)
	return d.meta["script"], share
}

// Stale reports whether the file at Path now holds another build than the one
// opened: a full rebuild copied a new index into it (swap.go). The open DB
// then answers from the new file with the metadata of the old one, so the
// caller should reopen. An incremental build, or a staged build adding
// vectors, changes the open file in place, and open connections see it
// without reopening: those leave it fresh. It is one indexed read of the meta
// table (see BenchmarkStale); an error reads as fresh, so a reader keeps
// serving what it has.
func (d *DB) Stale() bool {
	var g string
	var row *sql.Row
	if d.snap != nil {
		row = d.snap.QueryRowContext(context.Background(), generationQuery, metaGeneration)
	} else {
		row = d.gen.QueryRowContext(context.Background(), metaGeneration)
	}
	if err := row.Scan(&g); err != nil {
		return false
	}
	return g != d.meta[metaGeneration]
}
