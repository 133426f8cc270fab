package clientconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// Written is what Write did.
type Written struct {
	// File is the file written: the one a symlink named, not the link.
	File string
	// Backup is the copy of the file's old content; "" when there was no
	// file.
	Backup string
	// Replaced says an entry of the same name was replaced; Created, that
	// there was no file and Write made it (and its folder).
	Replaced, Created bool
}

// MergeError is Write's refusal of a file it could not merge the entry into:
// not a JSON object, servers that are not an object, or comments it would
// lose. Nothing was written.
type MergeError struct {
	File string
	Err  error
}

func (e *MergeError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *MergeError) Unwrap() error { return e.Err }

// Write merges the server s, as name, into client c's configuration file:
// every other key and server is kept, an entry of the same name replaced.
// The old file is copied to a backup first and the new one renamed into
// place, so the client never reads half a file; a file that is not plain
// JSON is refused before anything is written, with a *MergeError. Written
// says what was done, its Backup also when writing then failed.
func Write(c Client, file, name string, s Server) (Written, error) {
	// Write through a symlink (dotfiles kept in a repository) rather than
	// replacing it with a file.
	if real, err := filepath.EvalSymlinks(file); err == nil {
		file = real
	}
	w := Written{File: file}
	old, err := os.ReadFile(file)
	w.Created = err != nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return w, fmt.Errorf("read %s's configuration %s: %w", c.Title, file, err)
	}
	entry, err := s.JSON()
	if err != nil {
		return w, err
	}
	merged, replaced, err := mergeServer(old, c.Key, name, entry)
	if err != nil {
		return w, &MergeError{File: file, Err: err}
	}
	w.Replaced = replaced
	mode := fs.FileMode(0o600) // other servers' entries may hold API keys
	if !w.Created {
		st, err := os.Stat(file)
		if err != nil {
			return w, fmt.Errorf("read %s's configuration %s: %w", c.Title, file, err)
		}
		mode = st.Mode().Perm()
		if w.Backup, err = writeBackup(file, old, mode, time.Now()); err != nil {
			return w, fmt.Errorf("back up %s before changing it: %w; nothing was changed", file, err)
		}
	} else if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return w, fmt.Errorf("create the folder of %s: %w", file, err)
	}
	if err := writeFileAtomic(file, merged, mode); err != nil {
		if w.Backup != "" {
			return w, fmt.Errorf("write %s: %w (unchanged; its backup is %s)", file, err, w.Backup)
		}
		return w, fmt.Errorf("write %s: %w", file, err)
	}
	return w, nil
}

// writeBackup writes data, a file's old content, beside it as
// FILE.bak-YYYYMMDD-HHMMSS (then -2, -3, ... within the same second) and
// returns its path. It never overwrites an earlier backup.
func writeBackup(file string, data []byte, mode fs.FileMode, now time.Time) (string, error) {
	base := file + ".bak-" + now.Format("20060102-150405")
	for i := 1; ; i++ {
		p := base
		if i > 1 {
			p = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(p)
			return "", err
		}
		if err := f.Close(); err != nil {
			os.Remove(p)
			return "", err
		}
		return p, nil
	}
}

// writeFileAtomic replaces file with data through a temporary file in the
// same folder renamed over it, with the given mode.
func writeFileAtomic(file string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	done = true
	return nil
}
