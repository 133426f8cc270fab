package index

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mattn/go-sqlite3"
)

// A full build writes a new file beside the index (DBPath + ".building") and
// then puts it in place. Where an index file exists, readers may hold it open
// (another process's server, SQLite's own handles), and Windows refuses to
// rename a file over an open one. So the new file's pages are copied into the
// live file by SQLite's online backup, as one write transaction of the live
// file: readers' transactions finish first (the copy waits for them, as any
// writer does), a reader then sees the new index whole, and a copy killed
// half-way leaves a hot journal that rolls the old index back on the next
// open. Readers that keep the file open learn of the change from the build
// generation in the meta table (DB.Stale). Where no index file exists yet, no
// one can hold it open, and the new file is renamed into place, which is
// atomic and copies nothing. A file there that SQLite cannot open as a
// database (no reader can hold it as an index either) is removed first.

// metaGeneration is the meta key of the build generation: a random id written
// by every full build, so a reader can tell that the file it holds open now
// holds another build. An incremental build keeps it: it changes the open
// file in place, and readers see its changes without reopening.
const metaGeneration = "generation"

// swapBusyTimeout bounds how long the copy waits, each try, for readers'
// transactions to end; it tries again until ctx is done.
const swapBusyTimeout = 30 * time.Second

func newGeneration() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("build generation: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// setGeneration records a new build generation in the index being written.
func setGeneration(ctx context.Context, tx *sql.Tx) error {
	g, err := newGeneration()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, metaGeneration, g); err != nil {
		return fmt.Errorf("write index metadata: %w", err)
	}
	return nil
}

// replaceIndex puts the finished, closed file at tmp in place of the index at
// dbPath and removes tmp: by backup into the live file when there is one, by
// rename when there is none.
func replaceIndex(ctx context.Context, tmp, dbPath string) error {
	if err := syncFile(tmp); err != nil {
		return err
	}
	if _, err := os.Stat(dbPath); err == nil {
		err := copyInto(ctx, tmp, dbPath)
		if err == nil {
			_ = os.Remove(dirtyMarker(dbPath)) // the file it marked is whole again
			if err := os.Remove(tmp); err != nil {
				return fmt.Errorf("remove the built file after copying it into place: %w", err)
			}
			return nil
		}
		var unusable *unusableIndexError
		if !errors.As(err, &unusable) {
			return err
		}
		// Not a database: no reader holds it as an index; replace it.
		if err := os.Remove(dbPath); err != nil {
			return fmt.Errorf("replace the unusable index %s (%v): %w", dbPath, unusable.err, err)
		}
	}
	// A journal beside no file, or beside the unusable one just removed,
	// would be replayed onto the new file.
	_ = os.Remove(dbPath + "-journal")
	_ = os.Remove(dirtyMarker(dbPath))
	if err := os.Rename(tmp, dbPath); err != nil {
		return fmt.Errorf("move the index into place: %w", err)
	}
	syncDir(filepath.Dir(dbPath))
	return nil
}

// unusableIndexError says the file at the index's path cannot be opened as a
// SQLite database for writing, so nothing can be copied into it.
type unusableIndexError struct{ err error }

func (e *unusableIndexError) Error() string { return "unusable index file: " + e.err.Error() }

// copyInto copies the database at src over the one at dst with SQLite's
// online backup, in one write transaction of dst: every page at once, so
// readers never see part of it. Opening dst read-write first rolls back a
// hot journal of a build killed while writing it.
func copyInto(ctx context.Context, src, dst string) error {
	ddb, err := openSQLiteBusy(dst, false, swapBusyTimeout)
	if err != nil {
		return &unusableIndexError{err}
	}
	defer ddb.Close()
	// Opening the connection and a first read check that dst is a
	// database at all (and roll a hot journal back) before anything is
	// written into it.
	dconn, err := ddb.Conn(ctx)
	if err == nil {
		var n int
		err = dconn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n)
		if err != nil {
			dconn.Close()
		}
	}
	if err != nil {
		if IsCorrupt(err) {
			return &unusableIndexError{err}
		}
		return fmt.Errorf("open the index to copy into it: %w", err)
	}
	defer dconn.Close()
	sdb, err := openSQLite(src, true)
	if err != nil {
		return fmt.Errorf("open the built index: %w", err)
	}
	defer sdb.Close()
	sconn, err := sdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open the built index: %w", err)
	}
	defer sconn.Close()
	err = dconn.Raw(func(d any) error {
		return sconn.Raw(func(s any) error {
			dc, ok1 := d.(*sqlite3.SQLiteConn)
			sc, ok2 := s.(*sqlite3.SQLiteConn)
			if !ok1 || !ok2 {
				return fmt.Errorf("not SQLite connections: %T, %T", d, s)
			}
			return backup(ctx, dc, sc)
		})
	})
	if err != nil {
		return fmt.Errorf("copy the new index into %s: %w", dst, err)
	}
	return nil
}

// backup runs the copy from src to dst. One step of every page is one write
// transaction of dst; a step that finds readers in the way (busy, after the
// connection's busy timeout) is tried again until ctx is done.
func backup(ctx context.Context, dst, src *sqlite3.SQLiteConn) error {
	b, err := dst.Backup("main", src, "main")
	if err != nil {
		return err
	}
	for {
		done, err := b.Step(-1)
		if err != nil || done {
			if ferr := b.Finish(); err == nil {
				err = ferr
			}
			return err
		}
		select {
		case <-ctx.Done():
			// Finish rolls back what the step began: the old index stays.
			_ = b.Finish()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
