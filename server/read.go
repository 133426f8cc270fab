package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/vault-rag/vault-rag/index"
)

// errRefused marks a vault_read path refused before anything was opened.
var errRefused = errors.New("refused")

// maxDecodeRounds bounds how many layers of percent-encoding are peeled off
// a path when looking for a hidden traversal (%252e%252e is two layers).
const maxDecodeRounds = 4

// cleanNotePath checks a vault-relative note path from a client and returns it
// cleaned. It refuses absolute paths, ".." segments, backslashes, NUL and other
// control bytes, in the path as given and in every URL-decoded form of it, so
// an encoded traversal (%2e%2e/, ..%2f, %252e%252e/) is refused like a plain
// one. The path as given is what is opened: a note may have '%' in its name.
func cleanNotePath(p string) (string, error) {
	refuse := func(form, why string) (string, error) {
		if form != p {
			return "", fmt.Errorf("%w: path %q (URL-decoded: %q) %s", errRefused, p, form, why)
		}
		return "", fmt.Errorf("%w: path %q %s", errRefused, p, why)
	}
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("%w: the path is empty", errRefused)
	}
	forms := []string{p}
	for cur, i := p, 0; i < maxDecodeRounds; i++ {
		dec, err := url.PathUnescape(cur)
		if err != nil || dec == cur {
			break
		}
		forms = append(forms, dec)
		cur = dec
	}
	for _, f := range forms {
		switch {
		case strings.ContainsRune(f, 0):
			return refuse(f, "contains a NUL byte")
		case strings.IndexFunc(f, unicode.IsControl) >= 0:
			return refuse(f, "contains a control character")
		case strings.ContainsRune(f, '\\'):
			return refuse(f, `contains a backslash (use "/" between folders)`)
		case strings.HasPrefix(f, "/") || isDriveAbs(f):
			return refuse(f, "is absolute; give a path relative to the vault root, e.g. knowledge/engineering/idempotency.md")
		}
		for _, seg := range strings.Split(f, "/") {
			if seg == ".." {
				return refuse(f, `contains a ".." segment; paths may not leave the vault`)
			}
		}
	}
	clean := path.Clean(p)
	if clean == "." {
		return "", fmt.Errorf("%w: path %q names the vault root, not a note", errRefused, p)
	}
	segs := strings.Split(clean, "/")
	for _, seg := range segs[:len(segs)-1] {
		if strings.HasPrefix(seg, ".") {
			return "", fmt.Errorf("%w: path %q is inside a hidden folder, which holds no notes", errRefused, p)
		}
	}
	base := segs[len(segs)-1]
	switch {
	case len(segs) > 1 && segs[0] == "templates":
		return "", fmt.Errorf("%w: path %q is a template, not a note", errRefused, p)
	case strings.HasPrefix(base, "."):
		return "", fmt.Errorf("%w: path %q is a hidden file, not a note", errRefused, p)
	case !strings.EqualFold(path.Ext(base), ".md"):
		return "", fmt.Errorf("%w: path %q is not a markdown note (.md)", errRefused, p)
	case strings.HasPrefix(base, "lint-report-"):
		return "", fmt.Errorf("%w: path %q is a lint report, not a note", errRefused, p)
	}
	return clean, nil
}

// isDriveAbs reports a Windows drive path (C:/x, c:x) a client might send.
func isDriveAbs(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z'))
}

// within reports whether p is root or inside it (both absolute and clean).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// readNote reads one note of the vault by its cleaned vault-relative path.
// Symlinks are resolved first and one leading outside the vault is refused by
// name; the file is then opened through an os.Root of the vault, which refuses
// any escape the check might have missed (a link swapped in between). Only a
// regular file within the scanner's size limit and without NUL bytes is
// returned. Nothing is ever opened for writing.
func readNote(vaultRoot, rel string) ([]byte, fs.FileInfo, error) {
	full := filepath.Join(vaultRoot, filepath.FromSlash(rel))
	resolved, err := filepath.EvalSymlinks(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("no note %q in the vault", rel)
		}
		return nil, nil, fmt.Errorf("resolve %q: %w", rel, pathErrText(err))
	}
	if !within(vaultRoot, resolved) {
		return nil, nil, fmt.Errorf("%w: %q is a symlink leading outside the vault", errRefused, rel)
	}
	root, err := os.OpenRoot(vaultRoot)
	if err != nil {
		return nil, nil, fmt.Errorf("open vault: %w", err)
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: open %q: %v", errRefused, rel, pathErrText(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("stat %q: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%w: %q is not a regular file", errRefused, rel)
	}
	if fi.Size() > index.DefaultMaxNoteBytes {
		return nil, nil, fmt.Errorf("%w: %q is %d bytes, over the %d a note may have", errRefused, rel, fi.Size(), index.DefaultMaxNoteBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(f, index.DefaultMaxNoteBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read %q: %w", rel, err)
	}
	if bytes.IndexByte(raw[:min(len(raw), 8000)], 0) >= 0 {
		return nil, nil, fmt.Errorf("%w: %q has binary content, not a note", errRefused, rel)
	}
	return raw, fi, nil
}

func pathErrText(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// section is one "## " section of a note.
type section struct {
	heading string
	body    string
}

// sections splits a note body the way the indexer does ("## " outside code
// fences), without splitting long sections.
func sections(title, body string) []section {
	var out []section
	for _, c := range index.ChunkNote(title, body, nil, 0) {
		out = append(out, section{heading: c.Heading, body: c.Body})
	}
	return out
}
