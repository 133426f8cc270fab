package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FolderProblem says why dir cannot be read as a vault folder, or returns
// nil: it does not exist, cannot be read, or is a file. The error names the
// folder by its absolute path. What the folder holds is the caller's to judge
// (the server also refuses a folder without notes; a build reports one).
func FolderProblem(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the vault folder %s does not exist", abs)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("the vault folder %s cannot be read: permission denied", abs)
	case err != nil:
		return fmt.Errorf("the vault folder %s cannot be read: %w", abs, err)
	case !st.IsDir():
		return fmt.Errorf("the vault %s is a file, not a folder", abs)
	}
	return nil
}
