package index

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

// KeywordQuery is one keyword search: bm25 over the chunks' titles and
// bodies, the order total (score, then chunk id). Its zero value, with terms
// and a limit, is the plain search: each note's best chunk, on the postings.
type KeywordQuery struct {
	// Terms are searched as phrases joined by OR, each quoted (QuoteTerms),
	// so user text never reaches FTS5 as query syntax. Match, read only when
	// Terms is empty, is an FTS5 match expression taken as it is.
	Terms []string
	Match string
	// TitleWeight and BodyWeight are bm25's column weights; 0 means 1.
	TitleWeight, BodyWeight float64
	Limit                   int // at most this many hits
	Filter                  Filter
	// PerChunk returns every matching chunk, a note as often as it matches
	// (what a note-level score summed over a note's chunks reads); by
	// default each note's best chunk stands for it, once.
	PerChunk bool
	Engine   Engine
	// MinMatch, above 0, keeps only the chunks that hold at least this share
	// (0..1, rounded up) of the query's distinct rare terms: those found in
	// at most CommonShare of the chunks (0 means DefaultCommonShare). It is
	// Lucene's common-terms query with minimum_should_match: a chunk that
	// shares only the question's common words with it ("why", "did", "the",
	// "in") is no match, and its common words still add to the score of a
	// chunk that is. A term found in no chunk is not counted; a query
	// without a rare term is not constrained. The
	// postings run it; a query FTS5 must run (a term of several tokens, such
	// as lease_ttl_ms) is an OR of its terms, as before.
	MinMatch    float64
	CommonShare float64
	// Extra are terms searched after Terms only when rare: a term found in
	// more than CommonShare of the chunks (0 means DefaultCommonShare) is
	// left out unless it is also one of Terms (stem for stem, then it counts
	// again, as a repeat in Terms does). What the caller writes beside the
	// question — a 60-word hypothetical answer — brings the question's
	// subject in its rare words and little but cost in its common ones: on
	// a 137,000-chunk index their posting lists are the longest there are.
	// The df decides before any list is read, so a common term costs one
	// row of kw_postings, not its postings. Read only with Terms; a query
	// FTS5 runs (its engine, or a term of several tokens) searches every
	// extra term, as an OR with the others.
	Extra []string
	// ExtraPostings, above 0, replaces Extra's rule by a budget: the extra
	// terms are taken rarest first while the postings they add (the sum of
	// their document frequencies) stay within it; a term of Terms costs
	// nothing, and the first term over what is left ends the list. The budget
	// bounds what the caller's text costs on any vault: a vault of a few
	// thousand chunks keeps every term of a 60-word answer, a vault of
	// 137,000 only its rarer ones (measured in docs/performance.md).
	ExtraPostings int64
}

// DefaultCommonShare is the share of chunks above which a term is common for
// KeywordQuery.MinMatch: in one chunk of 20.
const DefaultCommonShare = 0.05

// Engine is what runs a keyword search. Both give the same hits with the
// same scores, to the bit (tested on every dataset's queries).
type Engine int

const (
	// EnginePostings, the default, runs on the index's own keyword postings
	// (bm25.go): FTS5's bm25 without scoring every matching row as FTS5 must
	// (a four-word query of common words matches 46k of 137k chunks). A
	// match that is not a quoted OR list of one-token terms goes to FTS5.
	EnginePostings Engine = iota
	// EngineFTS5 runs the search by FTS5 alone (bm25 over every matching row,
	// then the cut): the reference the postings are tested and benchmarked
	// against.
	EngineFTS5
)

// Keyword runs a keyword search and returns its hits, best first, at most
// q.Limit. Score is -bm25 (higher is better).
//
// Per note, the match is cut to the first `cap` chunks of the total order
// (bm25, chunk id), the cut is filtered, and each note's first chunk is
// kept. A note's first chunk in the total order is its best, so when the cut
// holds Limit notes that pass the filter the answer is exactly the uncut
// one; when it does not and more chunks match, the cut grows (×8, then no
// cut). See keywordCap. Per chunk, the cut is Limit, widened the same way
// when the filter drops chunks. The postings filter inside the merge, before
// the cut (bm25.go), so their cut holds only chunks that pass; FTS5 filters
// the cut.
func (d *DB) Keyword(ctx context.Context, q KeywordQuery) ([]Hit, error) {
	if q.TitleWeight == 0 {
		q.TitleWeight = 1
	}
	if q.BodyWeight == 0 {
		q.BodyWeight = 1
	}
	rankArgs, rankClause, err := rankWeights(q.TitleWeight, q.BodyWeight)
	if err != nil {
		return nil, err
	}
	switch q.Engine {
	case EnginePostings:
		if hits, ok, err := d.keywordPostings(ctx, q); ok || err != nil {
			return hits, err
		}
	case EngineFTS5:
	default:
		return nil, fmt.Errorf("keyword search: no engine %d", q.Engine)
	}
	match := append([]any{q.match()}, rankArgs...)
	if q.PerChunk {
		return d.chunksFTS5(ctx, match, rankClause, q.Limit, q.Filter)
	}
	return d.notesFTS5(ctx, match, rankClause, q.Limit, q.Filter)
}

// match is the query as an FTS5 match expression.
func (q KeywordQuery) match() string {
	if len(q.Terms) > 0 || len(q.Extra) > 0 {
		return QuoteTerms(append(slices.Clip(q.Terms), q.Extra...))
	}
	return q.Match
}

// terms is the query's terms (Extra apart), ok false when its match
// expression is not a plain OR of quoted terms.
func (q KeywordQuery) terms() (terms []string, ok bool) {
	if len(q.Terms) > 0 || len(q.Extra) > 0 {
		return q.Terms, true
	}
	return quotedTerms(q.Match)
}

// QuoteTerms makes terms an FTS5 match expression that is only ever plain
// text: each term a quoted phrase ("" inside a quote is one "), joined by
// OR. It is the form the postings run (quotedTerms reads it back).
func QuoteTerms(terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(q, " OR ")
}

// quotedTerms parses `"a" OR "b" OR ...` (QuoteTerms' form) into its terms;
// ok is false for any other expression.
func quotedTerms(match string) (terms []string, ok bool) {
	s := match
	for {
		if !strings.HasPrefix(s, `"`) {
			return nil, false
		}
		s = s[1:]
		var b strings.Builder
		for {
			i := strings.IndexByte(s, '"')
			if i < 0 {
				return nil, false
			}
			b.WriteString(s[:i])
			s = s[i+1:]
			if strings.HasPrefix(s, `"`) {
				b.WriteByte('"')
				s = s[1:]
				continue
			}
			break
		}
		terms = append(terms, b.String())
		if s == "" {
			return terms, true
		}
		if !strings.HasPrefix(s, " OR ") {
			return nil, false
		}
		s = s[len(" OR "):]
	}
}

// notesFTS5 is the per-note search by FTS5: each note's best chunk, the cut
// growing until limit notes pass the filter or every match has been seen.
// match is the match expression and the rank clause's arguments.
func (d *DB) notesFTS5(ctx context.Context, match []any, rankClause string, limit int, f Filter) ([]Hit, error) {
	where, args := f.where()
	q := `WITH m AS MATERIALIZED (SELECT rowid AS id, rank FROM chunks_fts WHERE chunks_fts MATCH ?` + rankClause + ` ORDER BY rank, rowid LIMIT ?)
	SELECT m.id, c.note_id, m.rank, (` + where + `) FROM m JOIN chunks c ON c.id = m.id JOIN notes n ON n.id = c.note_id ORDER BY m.rank, m.id`
	for cut := keywordCap(limit, f); ; cut *= 8 {
		if cut > 1<<22 {
			cut = -1 // SQLite: no limit
		}
		hits, rows, err := d.keywordPass(ctx, q, slices.Clone(match), cut, args, limit)
		if err != nil {
			return nil, err
		}
		if len(hits) >= limit || cut < 0 || rows < cut {
			return hits, nil
		}
	}
}

// chunksFTS5 is the per-chunk search by FTS5: the best limit chunks whose
// note passes the filter.
func (d *DB) chunksFTS5(ctx context.Context, match []any, rankClause string, limit int, f Filter) ([]Hit, error) {
	where, args := f.where()
	q := `WITH m AS MATERIALIZED (SELECT rowid AS id, rank FROM chunks_fts WHERE chunks_fts MATCH ?` + rankClause + `)
	SELECT m.id, c.note_id, m.rank FROM m JOIN chunks c ON c.id = m.id JOIN notes n ON n.id = c.note_id WHERE ` + where + `
	ORDER BY m.rank, m.id LIMIT ?`
	rows, err := d.sql.QueryContext(ctx, q, append(append(match, args...), limit)...)
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
// (a note is rarely matched in more sections than that), 64 under filters
// that drop rows after the cut (FTS5's).
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
	pick := firstPerNote{limit: limit}
	n := 0
	for rows.Next() { // every row, to count them
		var h Hit
		var rank float64
		var ok bool
		if err := rows.Scan(&h.ChunkID, &h.NoteID, &rank, &ok); err != nil {
			return nil, 0, err
		}
		n++
		if ok {
			h.Score = -rank
			pick.offer(h)
		}
	}
	return pick.hits, n, rows.Err()
}
