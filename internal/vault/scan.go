package vault

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// DefaultMaxNoteBytes is the largest file read as a note. Larger files are
// skipped with a reason: a note that size is almost always an export or a log.
const DefaultMaxNoteBytes = 8 << 20

// File is a candidate note found by Scan, with its bytes.
type File struct {
	Path    string // vault-relative, slash-separated
	ModTime time.Time
	Raw     []byte
	Hash    string // sha256 of Raw
}

// ScanOptions tune Scan; the zero value uses the defaults.
type ScanOptions struct {
	MaxBytes int64 // 0 means DefaultMaxNoteBytes
	// Exclude are globs of vault-relative paths to pass over, as ExcludeEnv
	// gives them: "Archive/**", "**/*.excalidraw.md", "drafts/*" (glob has
	// the syntax). One that does not parse is a warning, never an error.
	Exclude []string
}

// Listing is what one walk of a vault found.
type Listing struct {
	Files []File
	// Skipped are the files and folders passed over with a reason worth
	// showing; hidden ones are only counted.
	Skipped []Skipped
	// Warnings are settings that could not be used as written: an Obsidian
	// settings file or value, an exclude glob. The walk went on without them.
	Warnings []Skipped
	// SkippedByKind counts everything passed over by the kind of its
	// problem, the hidden folders and files included; a folder counts once,
	// whatever it holds, and files that are not markdown are not counted.
	SkippedByKind map[string]int
}

// Scan walks a vault and returns its notes' files in path order and what it
// passed over: List without the warnings and the counts.
func Scan(ctx context.Context, root string, opts ScanOptions) ([]File, []Skipped, error) {
	l, err := List(ctx, root, opts)
	return l.Files, l.Skipped, err
}

// List walks a vault and returns its notes' files in path order: every
// file FolderReason and FileReason accept ("*.md" except under a top-level
// "templates/" folder, in hidden folders, or named "lint-report-*.md") and
// the vault's settings do not leave out: Obsidian's excluded files and
// templates folders (ReadObsidianSettings) and opts.Exclude. Files that
// cannot be notes (binary, too large, unreadable, symlinks leading outside
// the vault, names that are not UTF-8) are returned as Skipped, never as
// errors, and settings that cannot be used as Warnings; only a vault root
// that cannot be read, or ctx ending, is an error. List never writes.
func List(ctx context.Context, root string, opts ScanOptions) (Listing, error) {
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxNoteBytes
	}
	realRoot, err := resolveRoot(root)
	if err != nil {
		return Listing{}, err
	}
	settings, warnings := ReadObsidianSettings(realRoot)
	sc, more := newScope(settings, opts.Exclude)
	warnings = append(warnings, more...)
	counts := map[string]int{}

	var files []File
	var skipped []Skipped
	skip := func(rel string, p Problem) {
		skipped = append(skipped, Skipped{Path: rel, Problem: p})
		counts[cmp.Or(p.Kind, p.Reason)]++
	}

	quietly := func(reason string) { counts[reason]++ }
	walkErr := walkNotes(ctx, realRoot, sc, skip, quietly, func(rel, p string, d fs.DirEntry) {
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				skip(rel, detailed("broken or looping symlink", errText(err)))
				return
			}
			if !within(realRoot, target) {
				skip(rel, NewProblem("symlink leads outside the vault"))
				return
			}
			if fi, err := os.Stat(target); err != nil || !fi.Mode().IsRegular() {
				skip(rel, NewProblem("symlink to something that is not a file"))
				return
			}
		} else if !d.Type().IsRegular() {
			skip(rel, NewProblem("not a regular file"))
			return
		}
		fi, err := os.Stat(p)
		if err != nil {
			skip(rel, detailed("unreadable", errText(err)))
			return
		}
		if fi.Size() > maxBytes {
			skip(rel, Problem{Reason: fmt.Sprintf("too large (%d bytes; the limit is %d)", fi.Size(), maxBytes), Kind: fmt.Sprintf("too large (the limit is %d bytes)", maxBytes), Detail: fmt.Sprintf("%d bytes", fi.Size())})
			return
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			skip(rel, detailed("unreadable", errText(err)))
			return
		}
		if isBinary(raw) {
			skip(rel, NewProblem("binary content (NUL bytes)"))
			return
		}
		sum := sha256.Sum256(raw)
		files = append(files, File{Path: rel, ModTime: fi.ModTime().UTC(), Raw: raw, Hash: hex.EncodeToString(sum[:])})
	})
	if walkErr != nil {
		return Listing{}, fmt.Errorf("scan vault: %w", walkErr)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Path < skipped[j].Path })
	return Listing{Files: files, Skipped: skipped, Warnings: warnings, SkippedByKind: counts}, nil
}

// Walk calls visit, in path order within each folder, for every file of the
// vault at root that List considers as a note: one that the fixed rules
// (FolderReason, FileReason) and the vault's settings (Obsidian's excluded
// files and templates folders, read afresh, and opts.Exclude) leave in. rel
// is its vault-relative path, p its path on disk. Whether it can be read as a
// note (a symlink's target, its size, its bytes) is not checked: List does
// that after the same walk, and the server's watcher, which stats each file
// Walk gives it, sees a change to such a file as one to reindex. What the walk
// passes over is not reported; only a vault root that cannot be read, or ctx
// ending, is an error.
func Walk(ctx context.Context, root string, opts ScanOptions, visit func(rel, p string)) error {
	realRoot, err := resolveRoot(root)
	if err != nil {
		return err
	}
	settings, _ := ReadObsidianSettings(realRoot)
	sc, _ := newScope(settings, opts.Exclude)
	err = walkNotes(ctx, realRoot, sc, func(string, Problem) {}, func(string) {}, func(rel, p string, _ fs.DirEntry) { visit(rel, p) })
	if err != nil {
		return fmt.Errorf("scan vault: %w", err)
	}
	return nil
}

// resolveRoot is the vault folder root, absolute with symlinks resolved.
func resolveRoot(root string) (string, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("scan %s: %w", root, err)
	}
	st, err := os.Stat(absRoot)
	if err != nil {
		return "", fmt.Errorf("scan vault: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("scan vault: %s is not a folder", root)
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", fmt.Errorf("scan vault: %w", err)
	}
	return realRoot, nil
}

// walkNotes walks the vault at realRoot (resolved) and calls visit for every
// file the fixed rules and the vault's settings (sc) leave in, skip for what
// they pass over with a reason worth showing, and quietly for the reasons
// only counted (hidden folders and files). Files that are not markdown are
// neither: they are attachments, not notes passed over.
func walkNotes(ctx context.Context, realRoot string, sc scope, skip func(rel string, p Problem), quietly func(reason string), visit func(rel, p string, d fs.DirEntry)) error {
	// Walk the resolved root: WalkDir does not follow a root that is itself a
	// symlink (~/vault -> ~/Dropbox/vault) and would find nothing under it.
	return filepath.WalkDir(realRoot, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(realRoot, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			if rel == "." {
				return err
			}
			skip(rel, detailed("unreadable", errText(err)))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if rel == "." {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err // Ctrl-C during the walk of a large vault
		}
		if d.IsDir() {
			if r := FolderReason(rel); r != "" {
				if quiet(r) {
					quietly(r)
				} else {
					skip(rel+"/", NewProblem(r))
				}
				return fs.SkipDir
			}
			if p, out := sc.folder(rel); out {
				skip(rel+"/", p)
				return fs.SkipDir
			}
			return nil
		}
		if r := FileReason(rel); r != "" {
			switch {
			case r == reasonBadName: // the reason shows the real bytes
				skip(strings.ToValidUTF8(rel, "\uFFFD"), Problem{Reason: fmt.Sprintf("%s (%+q); rename the file", r, rel), Kind: r + "; rename the file", Detail: fmt.Sprintf("%+q", rel)})
			case r == reasonControlName: // the reason shows the characters escaped
				skip(rel, Problem{Reason: fmt.Sprintf("%s (%+q); rename the file", r, rel), Kind: r + "; rename the file"})
			case r == reasonNotMarkdown && d.Type()&fs.ModeSymlink != 0:
				// WalkDir does not follow a symlink to a folder; one leading
				// out of the vault is named, one within it is not (its notes
				// are indexed under their own path).
				if outsideFolderLink(realRoot, rel, p, &sc) {
					skip(rel+"/", NewProblem("symlink leads outside the vault"))
				}
			case r == reasonNotMarkdown: // an attachment, not a note passed over
			case quiet(r):
				quietly(r)
			default:
				skip(rel, NewProblem(r))
			}
			return nil
		}
		if p, out := sc.file(rel); out {
			skip(rel, p)
			return nil
		}
		visit(rel, p, d)
		return nil
	})
}

// outsideFolderLink reports whether the symlink at p (vault-relative rel)
// resolves to a folder outside the vault that the vault's rules would
// otherwise walk (not hidden, not a templates folder, not excluded).
func outsideFolderLink(realRoot, rel, p string, sc *scope) bool {
	if FolderReason(rel) != "" {
		return false
	}
	if _, out := sc.folder(rel); out {
		return false
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil || within(realRoot, target) {
		return false
	}
	fi, err := os.Stat(target)
	return err == nil && fi.IsDir()
}

// isBinary reports NUL bytes in the first 8000 bytes: such a file is not a note.
func isBinary(raw []byte) bool {
	head := raw
	if len(head) > 8000 {
		head = head[:8000]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// within reports whether p is root or inside it (both absolute, cleaned).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
