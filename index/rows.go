package index

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// The rows the read side returns, and how they are scanned from SQLite.

// NoteRow is a note as stored.
type NoteRow struct {
	ID    int64  `json:"id"`
	Path  string `json:"path"`
	Title string `json:"title"`
	NoteMeta
	DateSource string   `json:"date_source"`
	Warnings   []string `json:"warnings,omitempty"`
}

// ChunkRow is a chunk as stored.
type ChunkRow struct {
	ID      int64  `json:"id"`
	NoteID  int64  `json:"note_id"`
	Ord     int    `json:"ord"`
	Part    int    `json:"part"`
	Heading string `json:"heading"`
	Body    string `json:"body"`
}

// Hit is one chunk found by a search, with the search's own score.
type Hit struct {
	ChunkID int64
	NoteID  int64
	Score   float64
}

// Related is a note linked from or to another.
type Related struct {
	Path      string `json:"path"`
	Title     string `json:"title"`
	Direction string `json:"direction"` // "links to" or "linked from"
	Heading   string `json:"heading,omitempty"`
}

// noteCols are the columns scanNote reads, in its order, from notes aliased n.
const noteCols = `n.id, n.path, n.title, n.type, n.date, n.date_source, n.project, n.status, n.source, n.topics, n.warnings`

func scanNote(sc interface{ Scan(...any) error }) (NoteRow, error) {
	var n NoteRow
	var topics, warns string
	if err := sc.Scan(&n.ID, &n.Path, &n.Title, &n.Type, &n.Date, &n.DateSource, &n.Project, &n.Status, &n.Source, &topics, &warns); err != nil {
		return n, err
	}
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
