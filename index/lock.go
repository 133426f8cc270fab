package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// One build of an index runs at a time, across processes: every build (full,
// incremental, and a staged build's embedding into the live file) holds an OS
// file lock on LockPath(DBPath) for its whole run. The lock is the OS's
// (flock, LockFileEx), so a builder that is killed or crashes releases it with
// its process, and the next build takes over what it left: the half-written
// ".building" file and its journal are removed, a hot journal of the live
// index is rolled back, and a staged index left incomplete is rebuilt staged.
// The lock file holds who builds (BuildHolder) for a reader to show; it is
// left in place between builds, empty, since deleting it would race with a
// process that has just opened it.

// LockSuffix is appended to the index path to name its build lock.
const LockSuffix = ".lock"

// LockPath is the build lock of the index at dbPath.
func LockPath(dbPath string) string { return dbPath + LockSuffix }

// ErrBuildRunning says another build of the same index holds its lock.
// Build returns it wrapped in a *BuildRunningError, which says who.
var ErrBuildRunning = errors.New("another build of this index is running")

// BuildHolder is what a running build writes into the lock file.
type BuildHolder struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Mode    string    `json:"mode"` // "full" or "incremental", as asked
	// Progress is how far the build has got, rewritten as it goes (at most
	// every ProgressEvery, and at each change of phase): what another
	// process shows of a build whose new file it cannot see. Nil before the
	// build reports any.
	Progress *Progress `json:"progress,omitempty"`
}

// ProgressEvery is how often a build rewrites its progress into the lock
// file at most.
var ProgressEvery = 500 * time.Millisecond

// BuildRunningError is Build's answer when another build of the index runs
// and BuildOptions.WaitForBuild is not set. errors.Is(err, ErrBuildRunning)
// holds for it.
type BuildRunningError struct {
	DBPath string
	Holder BuildHolder // zero when the lock file could not be read
}

func (e *BuildRunningError) Error() string {
	h := e.Holder
	if h.PID == 0 {
		return fmt.Sprintf("another build of the index %s is running", e.DBPath)
	}
	who := fmt.Sprintf("process %d", h.PID)
	if h.PID == os.Getpid() {
		who = "this process"
	}
	return fmt.Sprintf("another build of the index %s is running (%s build by %s, started %s)",
		e.DBPath, h.Mode, who, h.Started.Local().Format(time.DateTime))
}

func (e *BuildRunningError) Is(target error) bool { return target == ErrBuildRunning }

// errLocked is what the OS-specific tryLock returns for a lock held elsewhere.
var errLocked = errors.New("locked")

// A status probe (RunningBuild) holds a shared lock for the moment it takes to
// try it; a builder that meets one tries again over this grace before saying
// a build is running.
const (
	lockGraceTries = 5
	lockGraceWait  = 20 * time.Millisecond
)

// buildLock is a held build lock.
type buildLock struct {
	f       *os.File
	holder  BuildHolder
	mu      sync.Mutex
	written time.Time // when the progress was last written
	size    int       // the longest record written, which a shorter one pads
}

// lockBuild takes the build lock of dbPath and records the holder in it. When
// another build holds it, it waits for that build to end if wait is set (until
// ctx is done), and otherwise returns a *BuildRunningError.
func lockBuild(ctx context.Context, dbPath, mode string, wait bool) (*buildLock, error) {
	f, err := os.OpenFile(LockPath(dbPath), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the build lock: %w", err)
	}
	delay := 50 * time.Millisecond
	for try := 1; ; try++ {
		err := tryLock(f, true)
		if err == nil {
			break
		}
		if !errors.Is(err, errLocked) {
			f.Close()
			return nil, fmt.Errorf("take the build lock %s: %w", LockPath(dbPath), err)
		}
		pause := lockGraceWait
		if try >= lockGraceTries {
			if !wait {
				h, _ := readHolder(f)
				f.Close()
				return nil, &BuildRunningError{DBPath: dbPath, Holder: h}
			}
			pause, delay = delay, min(2*delay, time.Second)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the running build of %s: %w", dbPath, ctx.Err())
		case <-time.After(pause):
		}
	}
	// Who holds the lock is for a reader to show; the lock itself is taken,
	// so a failed write costs only that. Marshalling the struct cannot fail.
	l := &buildLock{f: f, holder: BuildHolder{PID: os.Getpid(), Started: time.Now().UTC().Truncate(time.Second), Mode: mode}}
	if f.Truncate(0) == nil {
		l.write()
	}
	return l, nil
}

// write records the holder in the lock file, over what is there: a record
// shorter than the last is padded with spaces, so the file never holds a
// mix of two, and a reader never meets it empty mid-build.
func (l *buildLock) write() {
	raw, _ := json.Marshal(l.holder) // a struct of numbers and strings: cannot fail
	if pad := l.size - len(raw); pad > 0 {
		raw = append(raw, bytes.Repeat([]byte{' '}, pad)...)
	}
	l.size = len(raw)
	_, _ = l.f.WriteAt(append(raw, '\n'), 0)
}

// tracking returns a progress callback that calls next and records the
// progress in the lock file, at most every ProgressEvery except when the
// phase changes or a phase ends. A failed write costs only the record.
func (l *buildLock) tracking(next func(Progress)) func(Progress) {
	return func(p Progress) {
		if next != nil {
			next(p)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		now := time.Now()
		prev := l.holder.Progress
		if prev != nil && prev.Phase == p.Phase && p.Done < p.Total && now.Sub(l.written) < ProgressEvery {
			return
		}
		l.holder.Progress, l.written = &p, now
		l.write()
	}
}

// release empties the lock file and lets the lock go.
func (l *buildLock) release() {
	_ = l.f.Truncate(0)
	_ = unlock(l.f)
	l.f.Close()
}

// readHolder reads who holds the lock from the lock file.
func readHolder(f *os.File) (BuildHolder, error) {
	var h BuildHolder
	buf := make([]byte, 1024)
	n, err := f.ReadAt(buf, 0)
	if n == 0 {
		if err == nil {
			err = errors.New("empty lock file")
		}
		return h, err
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(buf[:n]))), &h); err != nil {
		return h, fmt.Errorf("read the build lock: %w", err)
	}
	return h, nil
}

// RunningBuild reports whether a build of the index at dbPath is running, in
// this process or another, and who runs it (the holder is zero when the lock
// file does not say). It creates nothing: with no lock file, no build runs.
// It costs an open and a lock attempt, cheap enough for every /health.
func RunningBuild(dbPath string) (holder BuildHolder, running bool, err error) {
	f, err := os.Open(LockPath(dbPath))
	if errors.Is(err, os.ErrNotExist) {
		return holder, false, nil
	}
	if err != nil {
		return holder, false, fmt.Errorf("open the build lock: %w", err)
	}
	defer f.Close()
	switch err := tryLock(f, false); {
	case err == nil:
		_ = unlock(f)
		return holder, false, nil
	case errors.Is(err, errLocked):
		holder, _ = readHolder(f)
		return holder, true, nil
	default:
		return holder, false, fmt.Errorf("probe the build lock %s: %w", LockPath(dbPath), err)
	}
}
