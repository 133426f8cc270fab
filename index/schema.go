package index

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver; build with -tags sqlite_fts5
)

// SchemaVersion changes whenever the tables below change, or what a build
// writes into them from the same files (a note's title, topics, chunks); an
// index of another version is rebuilt, never migrated. It is part of
// VaultStamp, by which the evaluation reuses an index it built before: an
// index written by other code under the same version would be reused. 4: chunks_fts and the keyword postings
// hold Chinese, Japanese and Korean text as bigrams (SplitCJK). 5: their
// title field holds a note's frontmatter aliases after its title. 6: a title is
// the frontmatter's, else the first level-one heading, else the file name,
// without link markup, and the title field holds all three; topics hold
// frontmatter topics and tags and inline #tags.
const SchemaVersion = "6"

func schema(dim int) []string {
	return []string{
		`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`CREATE TABLE notes(
			id INTEGER PRIMARY KEY,
			path TEXT NOT NULL UNIQUE,
			key TEXT NOT NULL,  -- lower-case path without .md, for link resolution
			base TEXT NOT NULL, -- lower-case file name without .md
			title TEXT NOT NULL,
			type TEXT NOT NULL, date TEXT NOT NULL, date_source TEXT NOT NULL,
			project TEXT NOT NULL, status TEXT NOT NULL, source TEXT NOT NULL,
			topics TEXT NOT NULL, -- JSON array
			mtime INTEGER NOT NULL, size INTEGER NOT NULL, hash TEXT NOT NULL,
			warnings TEXT NOT NULL -- JSON array
		)`,
		`CREATE INDEX notes_key ON notes(key)`,
		`CREATE INDEX notes_base ON notes(base)`,
		`CREATE TABLE chunks(
			id INTEGER PRIMARY KEY,
			note_id INTEGER NOT NULL REFERENCES notes(id),
			ord INTEGER NOT NULL, part INTEGER NOT NULL,
			heading TEXT NOT NULL, body TEXT NOT NULL,
			truncated INTEGER NOT NULL,
			embed_hash TEXT NOT NULL -- sha256 of the embedded text and the model name
		)`,
		`CREATE INDEX chunks_note ON chunks(note_id, ord)`,
		`CREATE INDEX chunks_embed ON chunks(embed_hash)`,
		`CREATE VIRTUAL TABLE chunks_fts USING fts5(title, body, tokenize='` + ftsTokenize + `')`,
		// Each term's chunks, for the keyword search's own bm25 (package postings, kw_writer.go).
		`CREATE TABLE kw_postings(term TEXT PRIMARY KEY, df INTEGER NOT NULL, data BLOB NOT NULL)`,
		fmt.Sprintf(`CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[%d])`, dim),
		// The quantized first pass of a vector search (quant.go): one sign bit
		// per dimension of (embedding - centre), and the float vector again as
		// a plain row, so rescoring a candidate is a primary-key read (a vec0
		// point lookup walks its 1,024-vector chunk blob; docs/performance.md, Size).
		`CREATE TABLE chunk_codes(id INTEGER PRIMARY KEY, code BLOB NOT NULL)`,
		`CREATE TABLE chunk_vectors(id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)`,
		`CREATE TABLE links(
			note_id INTEGER NOT NULL, ord INTEGER NOT NULL,
			target TEXT NOT NULL, heading TEXT NOT NULL, alias TEXT NOT NULL,
			target_id INTEGER -- NULL when the link dangles
		)`,
		`CREATE INDEX links_note ON links(note_id)`,
		`CREATE INDEX links_target ON links(target_id)`,
	}
}

// openSQLite opens a SQLite file with sqlite-vec loaded. readOnly opens it with
// mode=ro, which is how searches see the index.
func openSQLite(path string, readOnly bool) (*sql.DB, error) {
	return openSQLiteBusy(path, readOnly, 10*time.Second)
}

// openSQLiteBusy is openSQLite with how long a statement waits for another
// connection's lock before it fails as busy.
func openSQLiteBusy(path string, readOnly bool, busy time.Duration) (*sql.DB, error) {
	// sqlite-vec is registered as an automatic extension of every connection
	// SQLite opens after this: a list in the SQLite library, process-wide,
	// not state of this package. Registering an entry point already on it
	// is a harmless no-op (sqlite3_auto_extension), so every open makes sure
	// of it, with no once-per-process guard.
	sqlite_vec.Auto()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	if readOnly {
		q.Set("mode", "ro")
	}
	db, err := sql.Open("sqlite3", sqliteURI(abs, runtime.GOOS == "windows")+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	if !readOnly {
		db.SetMaxOpenConns(1) // one writer; its transaction is the unit of change
	}
	return db, nil
}

// sqliteURI is the file: URI SQLite opens for an absolute path, without a
// query. Every character a URI reserves is escaped ("?" and "#" would end
// the path, "%" start an escape). On Windows the path's backslashes become
// slashes and a drive path is written file:///C:/..., as SQLite's URI
// rules ask; a UNC path (\\server\share\...) keeps its two leading
// slashes after an empty authority: file:////server/share/....
func sqliteURI(abs string, windows bool) string {
	if windows {
		abs = strings.ReplaceAll(abs, `\`, "/")
		if !strings.HasPrefix(abs, "/") {
			abs = "/" + abs // C:/x → /C:/x
		}
		return "file://" + (&url.URL{Path: abs}).EscapedPath()
	}
	return "file:" + (&url.URL{Path: abs}).EscapedPath()
}
