package index

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// The rows the read side returns, and how they are scanned from SQLite.

// NoteRow is a note as stored.
type NoteRow struct {
	ID    int64
	Path  string
	Title string
	NoteMeta
	DateSource string
	Modified   time.Time // the file's modification time when it was indexed
	Warnings   []string
}

// ChunkRow is a chunk as stored.
type ChunkRow struct {
	ID      int64
	NoteID  int64
	Ord     int
	Part    int
	Heading string
	Body    string
}

// Hit is one chunk found by a search, with the search's own score.
type Hit struct {
	ChunkID int64
	NoteID  int64
	Score   float64
}

// Related is a note linked from or to another.
type Related struct {
	Path      string
	Title     string
	Direction string // "links to" or "linked from"
	Heading   string
}

// noteCols are the columns scanNote reads, in its order, from notes aliased n.
const noteCols = `n.id, n.path, n.title, n.type, n.date, n.date_source, n.project, n.status, n.source, n.topics, n.mtime, n.warnings`

func scanNote(sc interface{ Scan(...any) error }) (NoteRow, error) {
	var n NoteRow
	var topics, warns string
	var mtime int64
	if err := sc.Scan(&n.ID, &n.Path, &n.Title, &n.Type, &n.Date, &n.DateSource, &n.Project, &n.Status, &n.Source, &topics, &mtime, &warns); err != nil {
		return n, err
	}
	n.Modified = time.Unix(mtime, 0).UTC()
	// The build writes both as JSON lists (writer.insertNote): anything else
	// is a damaged file.
	if err := json.Unmarshal([]byte(topics), &n.Topics); err != nil {
		return n, fmt.Errorf("%w: note %s: topics %q: %v; run `vault-rag reindex`", ErrCorrupt, n.Path, topics, err)
	}
	if err := json.Unmarshal([]byte(warns), &n.Warnings); err != nil {
		return n, fmt.Errorf("%w: note %s: warnings %q: %v; run `vault-rag reindex`", ErrCorrupt, n.Path, warns, err)
	}
	return n, nil
}

// decodeVector reads a stored embedding: little-endian float32s, as
// sqlite-vec stores them.
func decodeVector(blob []byte) []float32 {
	v := make([]float32, len(blob)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[i*4:]))
	}
	return v
}
