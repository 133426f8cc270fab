// Package vaultfs copies a vault folder and takes a digest of a tree that
// tells whether anything under it was written, created, removed or touched:
// what the load test and the benchmarks use to work on a copy and to prove
// the vault itself was left alone.
package vaultfs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// walk calls fn for every entry under root, the root first, without
// following symlinks: its path, its root-relative path and its Lstat.
func walk(root string, fn func(p, rel string, fi fs.FileInfo) error) error {
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		return fn(p, rel, fi)
	})
}

// CopyTree copies the folder src to dst: files with their permission bits and
// modification times, symlinks recreated as they are. src is only read.
func CopyTree(src, dst string) error {
	err := walk(src, func(p, rel string, fi fs.FileInfo) error {
		to := filepath.Join(dst, rel)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case fi.IsDir():
			return os.MkdirAll(to, fi.Mode().Perm()|0o700)
		case fi.Mode().IsRegular():
			if err := CopyFile(p, to, fi.Mode().Perm()); err != nil {
				return err
			}
			return os.Chtimes(to, fi.ModTime(), fi.ModTime())
		}
		return nil // sockets, devices: not notes
	})
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

// CopyFile copies one regular file, replacing dst.
func CopyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Entry is what Digest records of one file system entry.
type Entry struct {
	Mode   fs.FileMode
	Size   int64
	MTime  int64 // nanoseconds
	SHA256 string
	Link   string // a symlink's target
}

// Tree is a digest: vault-relative slash path → entry.
type Tree map[string]Entry

// Digest records every entry under root without following symlinks: mode,
// size, modification time, content hash and link target.
func Digest(root string) (Tree, error) {
	out := Tree{}
	err := walk(root, func(p, rel string, fi fs.FileInfo) error {
		e := Entry{Mode: fi.Mode(), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e.Link = target
		case fi.IsDir():
			e.Size = 0 // file system dependent; the modification time says if an entry came or went
		case fi.Mode().IsRegular():
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(raw)
			e.SHA256 = hex.EncodeToString(sum[:])
		}
		out[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("digest %s: %w", root, err)
	}
	return out, nil
}

// Diff lists how after differs from before, except for the entry at skip
// (one the caller changed on purpose; "" for none), sorted; nil when equal.
func Diff(before, after Tree, skip string) []string {
	var out []string
	for p, b := range before {
		a, ok := after[p]
		switch {
		case p == skip:
		case !ok:
			out = append(out, p+": removed")
		case a != b:
			out = append(out, fmt.Sprintf("%s: changed (%+v, then %+v)", p, b, a))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok && p != skip {
			out = append(out, p+": added")
		}
	}
	slices.Sort(out)
	return out
}
