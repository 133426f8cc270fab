package index

import (
	"context"
	"fmt"
)

// KeywordChunks runs an FTS5 match expression with bm25 column weights (title,
// body) and returns matching chunks, best first, at most limit chunks (a note
// may appear more than once): what a keyword stage needs for weighted columns
// or for a note-level score summed over a note's chunks. It runs on the
// keyword postings (bm25.go) like Keyword, cut to limit and widened when
// filters drop chunks; ties in bm25 go to the lower chunk id. Score is -bm25
// (higher is better).
func (d *DB) KeywordChunks(ctx context.Context, match string, titleWeight, bodyWeight float64, limit int, f Filter) ([]Hit, error) {
	if _, _, err := rankWeights(titleWeight, bodyWeight); err != nil {
		return nil, err
	}
	if hits, ok, err := d.keywordPostings(ctx, match, titleWeight, bodyWeight, limit, f, false); ok || err != nil {
		return hits, err
	}
	return d.KeywordChunksFTS5(ctx, match, titleWeight, bodyWeight, limit, f)
}

// KeywordChunksFTS5 is KeywordChunks run by FTS5 alone (see KeywordFTS5).
func (d *DB) KeywordChunksFTS5(ctx context.Context, match string, titleWeight, bodyWeight float64, limit int, f Filter) ([]Hit, error) {
	rankArgs, rankClause, err := rankWeights(titleWeight, bodyWeight)
	if err != nil {
		return nil, err
	}
	where, args := f.where()
	q := `WITH m AS MATERIALIZED (SELECT rowid AS id, rank FROM chunks_fts WHERE chunks_fts MATCH ?` + rankClause + `)
	SELECT m.id, c.note_id, m.rank FROM m JOIN chunks c ON c.id = m.id JOIN notes n ON n.id = c.note_id WHERE ` + where + `
	ORDER BY m.rank, m.id LIMIT ?`
	rows, err := d.sql.QueryContext(ctx, q, append(append(append([]any{match}, rankArgs...), args...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var r float64
		if err := rows.Scan(&h.ChunkID, &h.NoteID, &r); err != nil {
			return nil, err
		}
		h.Score = -r
		hits = append(hits, h)
	}
	return hits, rows.Err()
}
