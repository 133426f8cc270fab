package index

import (
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// NoteMeta is a note's metadata: the frontmatter fields the filters select on
// and the day the note is dated (YYYY-MM-DD; see vault.Note.Date). Whatever
// carries a note's metadata, stored or answered, embeds it, so each field has
// one JSON name everywhere.
type NoteMeta struct {
	Type    string
	Date    string
	Project string
	Status  string
	Source  string
	Topics  []string
}

// NoteMetaOf is a parsed note's metadata as vault-rag reports and stores it,
// the one mapping from frontmatter to NoteMeta: the index writes it, and
// vault_read answers with it, so a note read from disk and the same note
// listed or found in the index say the same. Type, project and status are
// lower-cased, as the filters compare them (Filter lower-cases its values);
// topics are the note's tags (vault.Note.Tags: frontmatter topics and tags,
// inline #tags), lower-cased when parsed; source is kept as written; the date is
// the note's day (vault.Note.Date), YYYY-MM-DD.
func NoteMetaOf(n *vault.Note) NoteMeta {
	fm := n.Frontmatter
	return NoteMeta{
		Type:    strings.ToLower(fm.Type),
		Date:    n.Date.Format(time.DateOnly),
		Project: strings.ToLower(fm.Project),
		Status:  strings.ToLower(fm.Status),
		Source:  fm.Source,
		Topics:  n.Tags,
	}
}
