// Package index turns a folder of markdown notes into one SQLite file: note rows,
// chunk rows, an FTS5 index, a sqlite-vec table of chunk embeddings and a table
// of wikilinks. Scanning, parsing and chunking are pure functions over bytes;
// the schema and the writer live beside them.
package index

import "time"

// Meta is the frontmatter vault-rag reads. Unknown keys are ignored.
type Meta struct {
	Type    string   `json:"type,omitempty"`
	Date    string   `json:"date,omitempty"` // YYYY-MM-DD as written; see Note.Date for the effective date
	Project string   `json:"project,omitempty"`
	Status  string   `json:"status,omitempty"`
	Source  string   `json:"source,omitempty"`
	Topics  []string `json:"topics,omitempty"`
}

// Note is one markdown file of the vault, parsed.
type Note struct {
	Path       string    // vault-relative, slash-separated, with ".md"
	Title      string    // the first "# " heading, else the file name
	Meta       Meta      // frontmatter
	Date       time.Time // frontmatter date, else a date in the file name, else the file time
	DateSource string    // "frontmatter", "filename" or "mtime"
	ModTime    time.Time
	Size       int64
	Hash       string   // sha256 of the raw file bytes
	Body       string   // text after the frontmatter: UTF-8, LF line ends
	Warnings   []string // what was wrong with the file but did not stop indexing it
	Chunks     []Chunk
	Links      []Link
}

// Chunk is one "## " section of a note (or the text before the first one), or a
// part of a section too long for the embedding window.
type Chunk struct {
	Ord       int    // position in the note, from 0
	Heading   string // the "## " heading, "" for the text before the first
	Part      int    // 0 unless a long section was split; then 1, 2, ...
	Body      string // the section's text without its heading line
	Truncated bool   // the embedding saw only a prefix of Body (one paragraph too long to split)
}

// Link is one [[wikilink]] in a note.
type Link struct {
	Target  string // as written, without "#heading" or "|alias"
	Heading string
	Alias   string
}
