package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFolderProblem(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "note.md")
	if err := os.WriteFile(file, []byte("# Note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := FolderProblem(dir); err != nil {
		t.Errorf("FolderProblem(a folder) = %v, want nil", err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "does not exist"},
		{file, "is a file, not a folder"},
	} {
		err := FolderProblem(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("FolderProblem(%s) = %v, want an error naming the path and %q", tc.path, err, tc.want)
		}
	}
}
