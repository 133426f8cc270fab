// Package vault reads a folder of markdown notes: which files are notes
// (Scan and the rules in rules.go), how a vault-relative path from a client is
// checked (CleanNotePath) and read (ReadNote), frontmatter, "## " chunking and
// wikilinks. It knows nothing of SQLite and never writes: package index turns
// what it reads into the index.
//
// The folder also holds the demo vault (knowledge/, sessions/, ... as .md
// files): Go ignores them and the scanner takes only .md files, so code and
// data sit side by side without seeing each other.
package vault

import "time"

// Frontmatter is the part of a note's YAML frontmatter vault-rag reads. Unknown keys are ignored.
type Frontmatter struct {
	Title   string   `json:"title,omitempty"` // on one line, as written
	Type    string   `json:"type,omitempty"`
	Date    string   `json:"date,omitempty"` // as written (2020-02-05, 20200205, 2020/02/05T10:30, ...); see Note.Date for the date read from it
	Project string   `json:"project,omitempty"`
	Status  string   `json:"status,omitempty"`
	Source  string   `json:"source,omitempty"`
	Topics  []string `json:"topics,omitempty"` // topics, else tags
	Tags    []string `json:"tags,omitempty"`   // tags, also when there are topics
	// Aliases are the note's other names ("aliases", and the older
	// "alias"), as written: the quick switcher finds a note by them, and
	// so does a search of titles.
	Aliases []string `json:"aliases,omitempty"`
}

// Note is one markdown file of the vault, parsed.
type Note struct {
	Path        string      // vault-relative, slash-separated, with ".md"
	Title       string      // the frontmatter title, else the first "# " heading, else the file name; without link markup
	Heading1    string      // the first "# " heading without link markup, "" without one
	Frontmatter Frontmatter // the YAML block at the top
	Date        time.Time   // frontmatter date, else a date in the file name, else the file time
	DateSource  string      // "frontmatter", "filename" or "mtime"
	ModTime     time.Time
	Size        int64
	Hash        string    // sha256 of the raw file bytes
	Body        string    // text after the frontmatter: UTF-8, LF line ends
	Warnings    []Problem // what was wrong with the file but did not stop indexing it
	Chunks      []Chunk
	Links       []Link
	Tags        []string // the frontmatter's topics and tags and the inline #tags, lower-cased, each once
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
