//go:build !unix

package index

import (
	"errors"
	"os"
)

// Windows has no FIFO in the file system: the bad-vault test skips its
// unreadable-file case there.
var errNoFIFO = errors.New("no FIFOs on this system")

func mkfifo(string) error { return errNoFIFO }

func openFIFOWriter(string) (*os.File, error) { return nil, errNoFIFO }
