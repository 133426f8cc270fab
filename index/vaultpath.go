package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// IndexDir is the folder under the data folder that holds one index per vault.
const IndexDir = "indexes"

// DefaultPath is where the index of the vault at vaultPath lives when none is
// named: dataDir/indexes/NAME-HASH.db, NAME the vault folder's own name (kept
// readable for a person listing the folder) and HASH the first 8 hex digits
// of the sha256 of its absolute path with symlinks resolved, so two vaults of
// the same name never share a file and a vault reached through a symlink
// finds its own.
func DefaultPath(dataDir, vaultPath string) (string, error) {
	abs, err := canonicalVault(vaultPath)
	if err != nil {
		return "", fmt.Errorf("index path of vault %s: %w", vaultPath, err)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dataDir, IndexDir, safeName(filepath.Base(abs))+"-"+hex.EncodeToString(sum[:4])+".db"), nil
}

// canonicalVault is the vault's absolute path with symlinks resolved where
// the folder exists (a vault not created yet keeps its cleaned absolute path).
func canonicalVault(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return filepath.Clean(abs), nil
}

// safeName keeps letters, digits, '.', '-' and '_' of a folder name (at most
// 40 of them), so the index's file name is valid on every file system.
func safeName(base string) string {
	var b strings.Builder
	n := 0
	for _, r := range base {
		if n == 40 {
			break
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == '.' && n > 0:
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
		n++
	}
	s := strings.Trim(b.String(), "-.")
	if s == "" {
		return "vault"
	}
	return s
}

// SameVault reports whether two vault paths name one folder: equal once made
// absolute with symlinks resolved.
func SameVault(a, b string) bool {
	ca, err1 := canonicalVault(a)
	cb, err2 := canonicalVault(b)
	return err1 == nil && err2 == nil && ca == cb
}

// VaultMismatchError says an index was built from another vault than the one
// it is being used for.
type VaultMismatchError struct {
	Index string // the index file
	Built string // the vault it was built from
	Asked string // the vault it was opened for
}

func (e *VaultMismatchError) Error() string {
	return fmt.Sprintf("the index %s was built from the vault %s, not from %s", e.Index, e.Built, e.Asked)
}

// CheckVault returns a *VaultMismatchError when the index was built from
// another vault than vaultPath. An index that does not record its vault
// passes: there is nothing to compare.
func (d *DB) CheckVault(vaultPath string) error {
	return checkVault(d.path, d.meta["vault"], vaultPath)
}

func checkVault(index, built, asked string) error {
	if built == "" || SameVault(built, asked) {
		return nil
	}
	abs, err := canonicalVault(asked)
	if err != nil {
		abs = asked
	}
	return &VaultMismatchError{Index: index, Built: built, Asked: abs}
}

// BuiltFrom reads the vault an existing index at dbPath records, "" when
// there is no readable index there or it records none.
func BuiltFrom(ctx context.Context, dbPath string) string {
	if _, err := os.Stat(dbPath); err != nil {
		return ""
	}
	db, err := openSQLite(dbPath, true)
	if err != nil {
		return ""
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'vault'`).Scan(&v); err != nil {
		return ""
	}
	return v
}

// IsVaultMismatch reports whether err says an index belongs to another vault.
func IsVaultMismatch(err error) bool {
	var m *VaultMismatchError
	return errors.As(err, &m)
}

// Rebind records vaultPath as the vault the index at dbPath was built from:
// for an index copied or moved together with its vault, whose notes are the
// same, so that it need not be rebuilt.
func Rebind(ctx context.Context, dbPath, vaultPath string) error {
	abs, err := canonicalVault(vaultPath)
	if err != nil {
		return fmt.Errorf("rebind the index %s: %w", dbPath, err)
	}
	db, err := openSQLite(dbPath, false)
	if err != nil {
		return fmt.Errorf("rebind the index %s: %w", dbPath, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'vault'`, abs); err != nil {
		return fmt.Errorf("rebind the index %s: %w", dbPath, err)
	}
	return nil
}
