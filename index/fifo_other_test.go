//go:build !unix

package index

import "errors"

func mkfifo(path string) error { return errors.New("FIFOs are a unix file type") }
