package vault

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules for which files of a vault are notes live here, once: the
// scanner and the server's watcher (one walk, walkNotes, through List and
// Walk) and CleanNotePath all ask them. What a vault's own settings leave out
// besides (scope.go) only that walk asks: reading a note Obsidian excludes by
// its path still works, as it does in Obsidian.

// Why a folder or file is not a note. Hidden folders and files and files that
// are not markdown are passed over silently by the scanner (they are never
// meant as notes); the other reasons are reported.
const (
	reasonHiddenFolder = "hidden folder"
	reasonTemplates    = "templates folder"
	reasonNotMarkdown  = "not a markdown file (.md)"
	reasonHiddenFile   = "hidden file"
	reasonLintReport   = "lint report"
	reasonBadName      = "file name is not valid UTF-8"
	reasonControlName  = "file name has a control character"
)

// FolderReason says why the folder rel (vault-relative, slash-separated, not
// the root) holds no notes, or "" when it may: a hidden folder (.obsidian,
// .git, .trash) or the top-level templates/.
func FolderReason(rel string) string {
	switch {
	case strings.HasPrefix(path.Base(rel), "."):
		return reasonHiddenFolder
	case rel == "templates":
		return reasonTemplates
	}
	return ""
}

// FileReason says why the file rel (vault-relative, slash-separated) is not a
// note by its name alone, or "" when it may be one: it must end in .md (any
// case), not be hidden, not be a lint report (lint-report-*.md) and have a
// path that is valid UTF-8, so the path stored is the path on disk, and free
// of control characters (newline, tab, ESC, DEL, ...) in every segment, which
// no client could send back (vault_read refuses them) and which would reach a
// terminal that shows the path. The folders above it are FolderReason's.
func FileReason(rel string) string {
	base := path.Base(rel)
	switch {
	case !strings.EqualFold(path.Ext(base), ".md"):
		return reasonNotMarkdown
	case strings.HasPrefix(base, "."):
		return reasonHiddenFile
	case strings.HasPrefix(base, "lint-report-"):
		return reasonLintReport
	case !utf8.ValidString(rel):
		// Stored under a repaired name, the note could not be opened again
		// (vault_read would look for a file that is not there).
		return reasonBadName
	case strings.IndexFunc(rel, unicode.IsControl) >= 0:
		return reasonControlName
	}
	return ""
}

// quiet reports a reason the scanner does not list as skipped.
func quiet(reason string) bool {
	return reason == reasonHiddenFolder || reason == reasonNotMarkdown || reason == reasonHiddenFile
}

// PathReason applies FolderReason to every folder of rel and FileReason to
// its name: "" when rel may be a note.
func PathReason(rel string) string {
	segs := strings.Split(rel, "/")
	for i := 1; i < len(segs); i++ {
		if r := FolderReason(strings.Join(segs[:i], "/")); r != "" {
			return r
		}
	}
	return FileReason(rel)
}
