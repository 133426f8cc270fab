package models

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// ErrMismatch says a file offered for a model is not the file the manifest
// pins (another sha256, another size).
var ErrMismatch = errors.New("file does not match the manifest")

// Import installs a model from files the user brought by other means (a
// browser, a USB stick, a colleague's cache): each path is a folder, one of the
// model's files, or an archive that holds them (.zip, .jar, .tar, .tar.gz,
// .tgz). Every file of the model is found among them by its name (the
// manifest's name, a jar entry's or a download URL's) or by its exact content,
// checked against the manifest's size and sha256, and installed exactly as
// Fetch installs it: the same folder, the same files, the same installed.json.
//
// Import is all or nothing: the files are staged in a temporary folder beside
// the model's and renamed into place only when every one has matched; on any
// error nothing new is left under the data folder and a model installed
// before is untouched. A wrong or truncated file is refused with a one-line
// error (wrapping ErrMismatch) naming the file, the expected and the actual
// sha256.
func Import(dataDir string, s Spec, paths []string) (Status, error) {
	if len(paths) == 0 {
		return Status{}, errors.New("import: no path given")
	}
	parent := filepath.Join(dataDir, "models")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Status{}, err
	}
	stage, err := os.MkdirTemp(parent, ".import-"+s.Name+"-")
	if err != nil {
		return Status{}, err
	}
	defer os.RemoveAll(stage) // a no-op once the folder has been renamed into place
	im := &importer{spec: s, stage: stage, names: knownNames(s), got: map[string]candidate{}, bad: map[string]candidate{}}
	for _, p := range paths {
		if err := im.walk(p); err != nil {
			return Status{}, fmt.Errorf("import %s: %w", s.Name, err)
		}
	}
	sums := map[string]string{}
	for _, f := range s.Files {
		c, ok := im.got[f.Name]
		if !ok {
			if b, ok := im.bad[f.Name]; ok {
				return Status{}, fmt.Errorf("import %s: %w: %s (from %s): sha256 %s (%d bytes), the manifest pins %s (%d bytes)",
					s.Name, ErrMismatch, f.Name, b.origin, b.sum, b.size, f.SHA256, f.Size)
			}
			return Status{}, fmt.Errorf("import %s: no file for %s in %s (looked for %s, or any file of %d bytes with sha256 %s)",
				s.Name, f.Name, strings.Join(paths, ", "), strings.Join(im.names[f.Name], " or "), f.Size, f.SHA256)
		}
		if err := os.Rename(c.path, filepath.Join(stage, f.Name)); err != nil {
			return Status{}, err
		}
		sums[f.Name] = c.sum
	}
	// Drop the candidates that matched nothing, so the folder holds what a
	// fetch leaves and nothing else.
	entries, err := os.ReadDir(stage)
	if err != nil {
		return Status{}, err
	}
	for _, e := range entries {
		if _, keep := sums[e.Name()]; !keep {
			os.RemoveAll(filepath.Join(stage, e.Name()))
		}
	}
	abs := make([]string, len(paths))
	for i, p := range paths {
		abs[i] = p
		if a, err := filepath.Abs(p); err == nil {
			abs[i] = a
		}
	}
	if err := writeStamp(stage, "imported from "+strings.Join(abs, ", "), sums); err != nil {
		return Status{}, err
	}
	if err := os.Chmod(stage, 0o755); err != nil { // MkdirTemp made it private
		return Status{}, err
	}
	if err := swapInto(stage, ModelDir(dataDir, s.Name)); err != nil {
		return Status{}, fmt.Errorf("import %s: %w", s.Name, err)
	}
	return Check(dataDir, s), nil
}

// swapInto renames the staged folder to dir, moving a previous dir aside first
// and removing it after: at every moment dir is either the old install or the
// new one.
func swapInto(stage, dir string) error {
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = stage + ".old"
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	}
	if err := os.Rename(stage, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return err
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}

// knownNames lists, per manifest file, the base names it goes by: its own, the
// jar entries' and the download URLs'.
func knownNames(s Spec) map[string][]string {
	out := map[string][]string{}
	add := func(file, name string) {
		name = path.Base(name)
		for _, n := range out[file] {
			if n == name {
				return
			}
		}
		out[file] = append(out[file], name)
	}
	for _, f := range s.Files {
		add(f.Name, f.Name)
		for _, src := range s.Sources {
			if e := src.Entries[f.Name]; e != "" {
				add(f.Name, e)
			}
			if u, err := url.Parse(src.URLs[f.Name]); err == nil && u.Path != "" {
				add(f.Name, u.Path)
			}
		}
	}
	return out
}

// candidate is one offered file, copied into the staging folder.
type candidate struct {
	path, origin, sum string
	size              int64
}

type importer struct {
	spec  Spec
	stage string
	names map[string][]string
	n     int
	got   map[string]candidate // manifest file → the candidate that matches it
	bad   map[string]candidate // manifest file → a same-named candidate that does not
}

// wants reports whether an entry could be one of the model's files: by name,
// or by size.
func (im *importer) wants(name string, size int64) bool {
	base := path.Base(filepath.ToSlash(name))
	for _, f := range im.spec.Files {
		if size >= 0 && size == f.Size {
			return true
		}
		for _, n := range im.names[f.Name] {
			if n == base {
				return true
			}
		}
	}
	return false
}

// offer copies r into the staging folder while hashing it, and records it
// against the manifest file it matches (by content) or claims to be (by name).
func (im *importer) offer(name, origin string, r io.Reader) error {
	im.n++
	p := filepath.Join(im.stage, fmt.Sprintf("candidate-%d", im.n))
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	h := sha256.New()
	size, err := io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", origin, err)
	}
	c := candidate{path: p, origin: origin, sum: hex.EncodeToString(h.Sum(nil)), size: size}
	base := path.Base(filepath.ToSlash(name))
	for _, mf := range im.spec.Files {
		if _, done := im.got[mf.Name]; done {
			continue
		}
		if c.size == mf.Size && c.sum == mf.SHA256 {
			im.got[mf.Name] = c
			return nil
		}
	}
	for _, mf := range im.spec.Files {
		for _, n := range im.names[mf.Name] {
			if n == base {
				if _, seen := im.bad[mf.Name]; !seen {
					im.bad[mf.Name] = c
				}
			}
		}
	}
	return nil
}

func (im *importer) walk(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		var files []string
		err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				files = append(files, q)
			}
			return nil
		})
		if err != nil {
			return err
		}
		sort.Strings(files)
		for _, q := range files {
			if err := im.file(q); err != nil {
				return err
			}
		}
		return nil
	}
	return im.file(p)
}

// file offers a file, or the entries of an archive. A file that is both a
// model file by name and an archive by extension (none is) would be read as
// the model file.
func (im *importer) file(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if im.wants(p, fi.Size()) {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return im.offer(p, p, f)
	}
	lower := strings.ToLower(p)
	switch {
	case strings.HasSuffix(lower, ".zip"), strings.HasSuffix(lower, ".jar"):
		return im.zip(p)
	case strings.HasSuffix(lower, ".tar.gz"), strings.HasSuffix(lower, ".tgz"):
		return im.tar(p, true)
	case strings.HasSuffix(lower, ".tar"):
		return im.tar(p, false)
	}
	return nil // some other file in the folder: not the model's
}

func (im *importer) zip(p string) error {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() || !im.wants(zf.Name, int64(zf.UncompressedSize64)) {
			continue
		}
		r, err := zf.Open()
		if err != nil {
			return fmt.Errorf("%s!%s: %w", p, zf.Name, err)
		}
		err = im.offer(zf.Name, p+"!"+zf.Name, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) tar(p string, gz bool) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		g, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		defer g.Close()
		r = g
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		if h.Typeflag != tar.TypeReg || !im.wants(h.Name, h.Size) {
			continue
		}
		if err := im.offer(h.Name, p+"!"+h.Name, tr); err != nil {
			return err
		}
	}
}
