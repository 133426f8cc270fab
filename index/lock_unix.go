//go:build unix

package index

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes f's lock without waiting: exclusive for a builder, shared for
// a probe. flock locks belong to the open file, so two opens in one process
// exclude each other as two processes do.
func tryLock(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return errLocked
		}
		return err
	}
}

func unlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
