package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// status says what is wrong with a vault path in the words every command
// uses (vault.FolderProblem): a folder that does not exist, and a file.
func TestStatusVaultProblem(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "note.md")
	if err := os.WriteFile(file, []byte("# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ vault, want string }{
		{filepath.Join(dir, "missing"), "the vault folder " + filepath.Join(dir, "missing") + " does not exist; set VAULT_PATH or pass --vault"},
		{file, "the vault " + file + " is a file, not a folder; set VAULT_PATH or pass --vault"},
	} {
		st := readStatus(t.Context(), tc.vault, filepath.Join(dir, "index.db"))
		if st.VaultExists || !slices.Contains(st.Warnings, tc.want) {
			t.Errorf("%s: exists %v, warnings %q; want %q", tc.vault, st.VaultExists, st.Warnings, tc.want)
		}
	}
	if st := readStatus(t.Context(), dir, filepath.Join(dir, "index.db")); !st.VaultExists || slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.Contains(w, "VAULT_PATH") }) {
		t.Errorf("a vault folder: %+v", st)
	}
}
