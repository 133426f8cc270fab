package main

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

// copyTree copies the folder src to dst (which must not exist): files with
// their permission bits, symlinks recreated as they are. src is only read.
func copyTree(src, dst string) error {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
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
			return copyFile(p, to, fi.Mode().Perm())
		}
		return nil // sockets, devices: not notes
	})
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

// copyFile copies one regular file.
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// entry is what treeDigest records of one file system entry.
type entry struct {
	Mode   fs.FileMode
	Size   int64
	MTime  int64 // nanoseconds
	SHA256 string
	Link   string // a symlink's target
}

// treeDigest records every entry under root without following symlinks:
// mode, size, modification time, content hash and link target.
func treeDigest(root string) (map[string]entry, error) {
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
		e := entry{Mode: fi.Mode(), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if e.Link, err = os.Readlink(p); err != nil {
				return err
			}
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

// diffTrees lists how after differs from before, except for the entry at
// skip (the one note the load test itself changed).
func diffTrees(before, after map[string]entry, skip string) []string {
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
