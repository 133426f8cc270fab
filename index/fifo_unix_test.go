//go:build unix

package index

import (
	"os"
	"syscall"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// openFIFOWriter opens a FIFO for writing without blocking: it fails (ENXIO)
// unless a reader has it open.
func openFIFOWriter(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
}
