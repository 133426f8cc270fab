package index

import (
	"context"
	"fmt"
	"math"
)

// Keyword runs an FTS5 match expression and returns each matching note's best
// chunk, best first, at most limit notes. Ties in bm25 are broken by chunk id,
// so the order is total. Score is -bm25 (higher is better).
//
// The match is cut to the first `cap` chunks of the total order (bm25, chunk
// id), the cut is joined and filtered, and Go keeps each note's first chunk.
// A note's first chunk in the total order is its best, so when the cut holds
// limit notes that pass the filters the answer is exactly the uncut one; when
// it does not and more chunks match, the cut grows (×8, then no cut). See
// keywordCap. The scores come from the keyword postings (bm25.go), which give
// FTS5's bm25 without scoring every matching row as FTS5 must (a four-word
// query of common words matches 46k of 137k chunks); KeywordFTS5 is the same
// search by FTS5 alone.
func (d *DB) Keyword(ctx context.Context, match string, limit int, f Filter) ([]Hit, error) {
	return d.KeywordWeighted(ctx, match, 1, 1, limit, f)
}

// KeywordWeighted is Keyword with bm25 column weights (title, body): the same
// capped first pass, so a weighted keyword stage costs what a plain one does.
func (d *DB) KeywordWeighted(ctx context.Context, match string, titleWeight, bodyWeight float64, limit int, f Filter) ([]Hit, error) {
	if _, _, err := rankWeights(titleWeight, bodyWeight); err != nil {
		return nil, err
	}
	if hits, ok, err := d.keywordPostings(ctx, match, titleWeight, bodyWeight, limit, f, true); ok || err != nil {
		return hits, err
	}
	return d.KeywordFTS5(ctx, match, titleWeight, bodyWeight, limit, f)
}

// KeywordFTS5 is KeywordWeighted run by FTS5 alone (bm25 over every matching
// row, then the cut): what a match the postings cannot run takes, and the
// reference the postings are tested and benchmarked against.
func (d *DB) KeywordFTS5(ctx context.Context, match string, titleWeight, bodyWeight float64, limit int, f Filter) ([]Hit, error) {
	rankArgs, rankClause, err := rankWeights(titleWeight, bodyWeight)
	if err != nil {
		return nil, err
	}
	where, args := f.where()
	q := `WITH m AS MATERIALIZED (SELECT rowid AS id, rank FROM chunks_fts WHERE chunks_fts MATCH ?` + rankClause + ` ORDER BY rank, rowid LIMIT ?)
	SELECT m.id, c.note_id, m.rank, (` + where + `) FROM m JOIN chunks c ON c.id = m.id JOIN notes n ON n.id = c.note_id ORDER BY m.rank, m.id`
	for cut := keywordCap(limit, f); ; cut *= 8 {
		if cut > 1<<22 {
			cut = -1 // SQLite: no limit
		}
		hits, rows, err := d.keywordPass(ctx, q, append([]any{match}, rankArgs...), cut, args, limit)
		if err != nil {
			return nil, err
		}
		if len(hits) >= limit || cut < 0 || rows < cut {
			return hits, nil
		}
	}
}

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

// rankWeights is the FTS5 "rank MATCH" clause for bm25 column weights, none
// when both are 1 (FTS5's default rank is bm25 with every weight 1). The
// weights are printed as numbers: no user text reaches the rank function.
func rankWeights(titleWeight, bodyWeight float64) ([]any, string, error) {
	for _, w := range []float64{titleWeight, bodyWeight} {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, "", fmt.Errorf("keyword search: column weight %v must be a finite non-negative number", w)
		}
	}
	if titleWeight == 1 && bodyWeight == 1 {
		return nil, "", nil
	}
	return []any{fmt.Sprintf("bm25(%g, %g)", titleWeight, bodyWeight)}, " AND rank MATCH ?", nil
}

// keywordCap is the first cut of a keyword match: 8 chunks per note wanted
// (a note is rarely matched in more sections than that), 64 under filters,
// which drop rows after the cut.
func keywordCap(limit int, f Filter) int {
	if f.Empty() {
		return max(8*limit, 64)
	}
	return max(64*limit, 512)
}

func (d *DB) keywordPass(ctx context.Context, q string, matchArgs []any, cut int, args []any, limit int) ([]Hit, int, error) {
	rows, err := d.sql.QueryContext(ctx, q, append(append(matchArgs, cut), args...)...)
	if err != nil {
		return nil, 0, fmt.Errorf("keyword search: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	seen := map[int64]bool{}
	n := 0
	for rows.Next() {
		var h Hit
		var rank float64
		var ok bool
		if err := rows.Scan(&h.ChunkID, &h.NoteID, &rank, &ok); err != nil {
			return nil, 0, err
		}
		n++
		if !ok || seen[h.NoteID] || len(hits) == limit {
			continue
		}
		seen[h.NoteID] = true
		h.Score = -rank
		hits = append(hits, h)
	}
	return hits, n, rows.Err()
}
