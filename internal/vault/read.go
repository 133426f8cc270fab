package vault

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
)

// ErrRefused marks a note path refused before anything was opened.
var ErrRefused = errors.New("refused")

// maxDecodeRounds bounds how many layers of percent-encoding are peeled off
// a path when looking for a hidden traversal (%252e%252e is two layers).
const maxDecodeRounds = 4

// refusals phrase the rules' reasons for a client.
var refusals = map[string]string{
	reasonHiddenFolder: "is inside a hidden folder, which holds no notes",
	reasonTemplates:    "is a template, not a note",
	reasonNotMarkdown:  "is not a markdown note (.md)",
	reasonHiddenFile:   "is a hidden file, not a note",
	reasonLintReport:   "is a lint report, not a note",
	reasonBadName:      "is not valid UTF-8, and no note is indexed under such a name",
	reasonControlName:  "contains a control character",
}

// CleanNotePath checks a vault-relative note path from a client and returns it
// cleaned. It refuses absolute paths, ".." segments, backslashes, NUL and other
// control bytes, in the path as given and in every URL-decoded form of it, so
// an encoded traversal (%2e%2e/, ..%2f, %252e%252e/) is refused like a plain
// one, and any path the scanner would not index. The path as given is what
// is opened: a note may have '%' in its name.
func CleanNotePath(p string) (string, error) {
	refuse := func(form, why string) (string, error) {
		if form != p {
			return "", fmt.Errorf("%w: path %s (URL-decoded: %s) %s", ErrRefused, QuoteInput(p), QuoteInput(form), why)
		}
		return "", fmt.Errorf("%w: path %s %s", ErrRefused, QuoteInput(p), why)
	}
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("%w: the path is empty", ErrRefused)
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
		return "", fmt.Errorf("%w: path %s names the vault root, not a note", ErrRefused, QuoteInput(p))
	}
	if r := PathReason(clean); r != "" {
		return refuse(p, refusals[r])
	}
	return clean, nil
}

// isDriveAbs reports a Windows drive path (C:/x, c:x) a client might send.
func isDriveAbs(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z'))
}

// ReadNote reads one note of the vault by its cleaned vault-relative path
// (from CleanNotePath); vaultRoot is absolute with symlinks resolved.
// Symlinks are resolved first and one leading outside the vault is refused by
// name; the file is then opened through an os.Root of the vault, which refuses
// any escape the check might have missed (a link swapped in between). Only a
// regular file within the scanner's size limit and without NUL bytes is
// returned. Nothing is ever opened for writing.
func ReadNote(vaultRoot, rel string) ([]byte, fs.FileInfo, error) {
	full := filepath.Join(vaultRoot, filepath.FromSlash(rel))
	resolved, err := filepath.EvalSymlinks(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("no note %s in the vault", QuoteInput(rel))
		}
		return nil, nil, fmt.Errorf("resolve %s: %s", QuoteInput(rel), errText(err))
	}
	if !within(vaultRoot, resolved) {
		return nil, nil, fmt.Errorf("%w: %s is a symlink leading outside the vault", ErrRefused, QuoteInput(rel))
	}
	root, err := os.OpenRoot(vaultRoot)
	if err != nil {
		return nil, nil, fmt.Errorf("open the vault: %s", errText(err)) // its path is the server's, not for the client
	}
	defer root.Close()
	return readFromRoot(root, rel)
}

// readFromRoot opens a note through an os.Root of the vault, which refuses
// any path leading out of it, and returns it when it is a regular file
// within the scanner's size limit and without NUL bytes.
func readFromRoot(root *os.Root, rel string) ([]byte, fs.FileInfo, error) {
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: open %s: %s", ErrRefused, QuoteInput(rel), errText(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("stat %s: %s", QuoteInput(rel), errText(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%w: %s is not a regular file", ErrRefused, QuoteInput(rel))
	}
	if fi.Size() > DefaultMaxNoteBytes {
		return nil, nil, fmt.Errorf("%w: %s is %d bytes, over the %d a note may have", ErrRefused, QuoteInput(rel), fi.Size(), DefaultMaxNoteBytes)
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead) // one allocation when the size holds
	if _, err := buf.ReadFrom(io.LimitReader(f, DefaultMaxNoteBytes+1)); err != nil {
		return nil, nil, fmt.Errorf("read %s: %s", QuoteInput(rel), errText(err))
	}
	raw := buf.Bytes()
	if isBinary(raw) {
		return nil, nil, fmt.Errorf("%w: %s has binary content, not a note", ErrRefused, QuoteInput(rel))
	}
	return raw, fi, nil
}

// NoteReader reads many notes of one vault, as ReadNote does, through one
// os.Root of the vault, opened once: it refuses any path leading out of the
// vault (a symlink to outside included), and returns only what ReadNote
// would. The paths it is given are the index's, not a client's: it skips
// ReadNote's resolution of symlinks by name, which only words the refusal.
type NoteReader struct {
	root *os.Root
}

// OpenNoteReader opens a reader of the vault at vaultRoot (absolute, with
// symlinks resolved); Close it when done.
func OpenNoteReader(vaultRoot string) (*NoteReader, error) {
	root, err := os.OpenRoot(vaultRoot)
	if err != nil {
		return nil, fmt.Errorf("open vault: %w", err)
	}
	return &NoteReader{root: root}, nil
}

// Read reads one note by its vault-relative path; safe for concurrent use.
func (r *NoteReader) Read(rel string) ([]byte, fs.FileInfo, error) {
	return readFromRoot(r.root, rel)
}

// Close releases the vault's folder.
func (r *NoteReader) Close() error { return r.root.Close() }
