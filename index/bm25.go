package index

/*
#cgo LDFLAGS: -lm
#include <math.h>
static double vr_log(double x) { return log(x); }
*/
import "C"

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vault-rag/vault-rag/index/postings"
)

// The keyword search's own bm25. FTS5 scores every row that matches any term
// before it can sort: a title of four common words matches 46,000 of the
// 137,000 chunks of a 30,000-note vault, and each of those rows costs a
// position-list decode and a call through the auxiliary-function API (the
// "keyword index call by FTS5" rows of docs/performance.md). Here the
// query's terms' posting lists (package postings) are merged document at a time
// and only the best `cut` chunks are kept, with FTS5's formula computed the
// way FTS5's C computes it — same constants, same
// operation order, the same libm log, FTS5's own row and token totals — so
// each score is bit for bit the one `ORDER BY rank` gives (tested against
// FTS5 on every dataset's queries), and the order (score, then chunk id) is
// the same.
//
// A match expression that is not a plain OR of quoted one-token terms (what
// the keyword stage always sends) goes to FTS5 as before.

// Variables, not constants: Go folds constant expressions exactly, and FTS5
// computes k1 + 1.0 in float64 at run time.
var (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// bm25Plan is a keyword query ready to run on the postings: one phrase per
// query term, in order (a repeated term counts again, as in FTS5).
type bm25Plan struct {
	phrases []string
	// extra are KeywordQuery.Extra's phrases, in order: bm25Top appends
	// those that are rare, or are phrases already, to phrases.
	extra       []string
	title, body float64 // column weights
	// minMatch and commonShare are KeywordQuery's MinMatch and CommonShare.
	minMatch, commonShare float64
	// extraPostings is KeywordQuery.ExtraPostings.
	extraPostings int64
}

// planBM25 returns the plan for a query, ok false when FTS5 must run it (not
// a quoted OR list, or a term that is not one token).
func (d *DB) planBM25(ctx context.Context, q KeywordQuery) (bm25Plan, bool, error) {
	terms, ok := q.terms()
	if !ok {
		return bm25Plan{}, false, nil
	}
	toks, err := d.queryTokenizer.queryTokens(ctx, append(slices.Clip(terms), q.Extra...))
	if err != nil {
		return bm25Plan{}, false, err
	}
	p := bm25Plan{title: q.TitleWeight, body: q.BodyWeight, minMatch: q.MinMatch, commonShare: q.CommonShare, extraPostings: q.ExtraPostings}
	if p.commonShare == 0 {
		p.commonShare = DefaultCommonShare
	}
	for i, t := range toks {
		if len(t) != 1 {
			return bm25Plan{}, false, nil
		}
		if i < len(terms) {
			p.phrases = append(p.phrases, t[0])
		} else {
			p.extra = append(p.extra, t[0])
		}
	}
	return p, true, nil
}

// withRareExtra is the plan's phrases followed by those of its extra phrases
// Extra's rule keeps: a phrase of the plan already, or found in at most
// commonShare of the nRow chunks — or, with a budget (extraPostings), the
// rarest that fit in it (keptWithin). Only the extra phrases' document
// frequencies are read, never their lists.
func withRareExtra(ctx context.Context, tx *sql.Tx, p bm25Plan, nRow int64) ([]string, error) {
	if len(p.extra) == 0 {
		return p.phrases, nil
	}
	have := map[string]bool{}
	for _, t := range p.phrases {
		have[t] = true
	}
	var ask []any
	for _, t := range p.extra {
		if !have[t] {
			ask = append(ask, t)
		}
	}
	dfs := map[string]int64{}
	if len(ask) > 0 {
		rows, err := tx.QueryContext(ctx, `SELECT term, df FROM kw_postings WHERE term IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ask)), ",")+`)`, ask...)
		if err != nil {
			return nil, fmt.Errorf("keyword search: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var term string
			var df int64
			if err := rows.Scan(&term, &df); err != nil {
				return nil, err
			}
			dfs[term] = df
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("keyword search: %w", err)
		}
	}
	keep := func(t string) bool {
		df, found := dfs[t]
		return have[t] || (found && float64(df) <= p.commonShare*float64(nRow))
	}
	if p.extraPostings > 0 {
		kept := keptWithin(p.extra, have, dfs, p.extraPostings)
		keep = func(t string) bool { return have[t] || kept[t] }
	}
	out := slices.Clip(p.phrases)
	for _, t := range p.extra {
		if keep(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// keptWithin is the extra phrases a postings budget keeps: rarest first (ties
// in query order), each distinct phrase paying its document frequency once,
// while the sum stays within budget: the first that does not fit ends it. A
// phrase the plan has already is free and not counted here; one found in no
// chunk has no list to read and no match to add.
func keptWithin(extra []string, have map[string]bool, dfs map[string]int64, budget int64) map[string]bool {
	var cand []string
	seen := map[string]bool{}
	for _, t := range extra {
		if df, found := dfs[t]; found && df > 0 && !have[t] && !seen[t] {
			seen[t] = true
			cand = append(cand, t)
		}
	}
	slices.SortStableFunc(cand, func(a, b string) int { return cmp.Compare(dfs[a], dfs[b]) })
	kept := map[string]bool{}
	for _, t := range cand {
		if dfs[t] > budget {
			break // the rest are commoner still
		}
		budget -= dfs[t]
		kept[t] = true
	}
	return kept
}

// ftsTotals reads what FTS5's xRowCount and xColumnTotalSize read: the
// averages record of chunks_fts (rowid 1 of its data table), SQLite varints:
// rows, then tokens per column.
func ftsTotals(ctx context.Context, q queryer) (rows, tokens int64, err error) {
	var blob []byte
	err = q.QueryRowContext(ctx, `SELECT block FROM chunks_fts_data WHERE id = 1`).Scan(&blob)
	if err == sql.ErrNoRows {
		return 0, 0, nil // nothing indexed yet
	}
	if err != nil {
		return 0, 0, err
	}
	var vals []int64
	for len(blob) > 0 {
		v, n := sqliteVarint(blob)
		if n == 0 {
			return 0, 0, fmt.Errorf("%w: chunks_fts's totals record is damaged", ErrCorrupt)
		}
		vals = append(vals, int64(v))
		blob = blob[n:]
	}
	if len(vals) == 0 {
		return 0, 0, nil
	}
	for _, v := range vals[1:] {
		tokens += v
	}
	return vals[0], tokens, nil
}

// sqliteVarint decodes SQLite's varint (big-endian 7-bit groups, the ninth
// byte whole); n is 0 when b ends first.
func sqliteVarint(b []byte) (v uint64, n int) {
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return v, 9
}

// bm25Top returns the best cut chunks that hold a term of the plan, of the
// notes that pass the filter, in the total order (cut < 0: all), and whether
// more match.
func (d *DB) bm25Top(ctx context.Context, p bm25Plan, f Filter, cut int) ([]scored[float64], bool, error) {
	tx, done, err := d.readTx(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("keyword search: %w", err)
	}
	defer done() // read only: one snapshot for the totals, the notes and the lists
	nRow, nTok, err := ftsTotals(ctx, tx)
	if err != nil {
		return nil, false, fmt.Errorf("keyword search: %w", err)
	}
	if p.phrases, err = withRareExtra(ctx, tx, p, nRow); err != nil {
		return nil, false, err
	}
	if len(p.phrases) == 0 {
		return nil, false, nil // only extra terms, every one common
	}
	var notes []int64 // nil: every note
	if !f.Empty() {
		if notes, err = filteredNotes(ctx, tx, f); err != nil || len(notes) == 0 {
			return nil, false, err
		}
	}
	lists, dfs, err := readLists(ctx, tx, p.phrases)
	if err != nil {
		return nil, false, err
	}
	return scoreLists(ctx, p, lists, dfs, nRow, nTok, notes, cut)
}

// filteredNotes is the ids of the notes that pass the filter, ascending.
func filteredNotes(ctx context.Context, q queryer, f Filter) ([]int64, error) {
	where, args := f.where()
	rows, err := q.QueryContext(ctx, `SELECT n.id FROM notes n WHERE `+where+` ORDER BY n.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	defer rows.Close()
	notes := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		notes = append(notes, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return notes, nil
}

// readLists reads the posting lists and document frequencies of the terms
// (each once); a term in no chunk has neither.
func readLists(ctx context.Context, tx *sql.Tx, terms []string) (map[string]*postings.Iterator, map[string]int64, error) {
	distinct := slices.Compact(slices.Sorted(slices.Values(terms)))
	args := make([]any, len(distinct))
	for i, t := range distinct {
		args[i] = t
	}
	rows, err := tx.QueryContext(ctx, `SELECT term, df, data FROM kw_postings WHERE term IN (`+strings.TrimSuffix(strings.Repeat("?,", len(args)), ",")+`)`, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("keyword search: %w", err)
	}
	defer rows.Close()
	lists := map[string]*postings.Iterator{}
	dfs := map[string]int64{}
	for rows.Next() {
		var term string
		var df int64
		var data []byte
		if err := rows.Scan(&term, &df, &data); err != nil {
			return nil, nil, err
		}
		lists[term] = postings.NewIterator(data)
		dfs[term] = df
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("keyword search: %w", err)
	}
	return lists, dfs, nil
}

// Evidence is how much of a query's rare-term weight one chunk holds: the
// summed idf of the query's distinct rare terms (in at most CommonShare of
// the chunks, as for MinMatch) that the chunk holds, and of all of them.
// A keyword list whose best chunk holds little of it matched the question's
// common words, not its subject. total is 0 when the query has no rare term,
// or cannot run on the postings (a term of several tokens). Only Terms are
// judged, never Extra.
func (d *DB) Evidence(ctx context.Context, q KeywordQuery, chunkID int64) (held, total float64, err error) {
	p, ok, err := d.planBM25(ctx, q)
	if err != nil || !ok || len(p.phrases) == 0 {
		return 0, 0, err
	}
	tx, done, err := d.readTx(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("keyword evidence: %w", err)
	}
	defer done()
	nRow, _, err := ftsTotals(ctx, tx)
	if err != nil {
		return 0, 0, fmt.Errorf("keyword evidence: %w", err)
	}
	lists, dfs, err := readLists(ctx, tx, p.phrases)
	if err != nil {
		return 0, 0, err
	}
	for _, t := range slices.Compact(slices.Sorted(slices.Values(p.phrases))) {
		c, df := lists[t], dfs[t]
		if c == nil || float64(df) > p.commonShare*float64(nRow) {
			continue
		}
		idf := bm25IDF(nRow, df)
		total += idf
		c.Advance(chunkID)
		if err := c.Err(); err != nil {
			return 0, 0, postingsErr(err)
		}
		if c.At().ID == chunkID {
			held += idf
		}
	}
	return held, total, nil
}

// scoreLists merges the lists document at a time, with MaxScore (Turtle and
// Flood, 1995): a term adds less than idf × (k1 + 1) to any chunk, so once the
// kept chunks' worst score θ is above the sum of the smallest terms' bounds,
// a chunk holding only those terms cannot be kept; the merge then visits only
// chunks of the other terms, and steps the small terms' lists forward (over
// whole blocks) to each such chunk. Skipped chunks would not have been kept;
// every chunk it scores is scored in full. more reports that chunks beyond
// the returned ones match.
//
// notes, when not nil, are the only notes whose chunks count (ascending): the
// merge is intersected with them, stepping the lists over every other note's
// chunks (a note's chunks are the ids of its block, insertNote). A chunk's
// score does not depend on which others are counted (the totals and idfs are
// the whole index's), so the chunks returned are those the unfiltered merge
// ranks, filtered after, in the same order with the same scores.
func scoreLists(ctx context.Context, p bm25Plan, lists map[string]*postings.Iterator, dfs map[string]int64, nRow, nTok int64, notes []int64, cut int) (top []scored[float64], more bool, err error) {
	if nRow <= 0 {
		nRow = 1
	}
	s := newBM25Scorer(p, lists, dfs, nRow, nTok)
	terms := s.mergeTerms(p, dfs, nRow)
	prefix := make([]float64, len(terms)) // prefix[j]: bound of a chunk holding only terms[:j+1]
	sum, rare := 0.0, 0
	for j, t := range terms {
		sum += t.ub
		prefix[j] = sum
		if t.rare {
			rare++
		}
	}
	need := 0 // rare terms a chunk must hold
	if p.minMatch > 0 {
		need = int(math.Ceil(p.minMatch*float64(rare) - 1e-9))
	}
	h := topN[float64]{n: cut}
	matched := 0
	skip := 0 // terms[:skip] are too small to make a chunk kept alone
	for n := 0; ; n++ {
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
		}
		id := int64(postings.EndOfList)
		for _, t := range terms[skip:] {
			id = min(id, t.c.At().ID)
		}
		if id == postings.EndOfList {
			break
		}
		if notes != nil {
			j, in := slices.BinarySearch(notes, id/chunkIDsPerNote)
			if j == len(notes) {
				break // past the last note counted
			}
			notes = notes[j:]
			if !in { // a note not counted: on to the next one's chunks
				for _, t := range terms[skip:] {
					t.c.Advance(notes[0] * chunkIDsPerNote)
				}
				continue
			}
		}
		held := 0
		for j, t := range terms {
			if j < skip {
				t.c.Advance(id)
			}
			if t.rare && t.c.At().ID == id {
				held++
			}
		}
		// A chunk holding too few rare terms is no match, passed over as a
		// chunk of no term is; skipping by θ stays sound: a chunk it passes
		// over could not be kept.
		match := held >= need
		if match {
			matched++
			h.offer(s.score(id), id)
		}
		for _, t := range terms {
			if t.c.At().ID == id {
				t.c.Next()
			}
		}
		if match && cut > 0 && len(h.items) == cut {
			theta := h.items[0].score
			for skip < len(terms) && prefix[skip] < theta {
				skip++
			}
		}
	}
	for _, t := range terms {
		if err := t.c.Err(); err != nil {
			return nil, false, postingsErr(err)
		}
	}
	return h.sorted(), skip > 0 || matched > len(h.items), nil
}

// bm25Scorer scores a chunk by the query's phrases, with FTS5's bm25.
type bm25Scorer struct {
	// cur and idf are each phrase's list (nil when the phrase is in no chunk;
	// a repeated phrase shares its list) and idf.
	cur         []*postings.Iterator
	idf         []float64
	title, body float64 // column weights
	avgdl       float64
}

func newBM25Scorer(p bm25Plan, lists map[string]*postings.Iterator, dfs map[string]int64, nRow, nTok int64) bm25Scorer {
	s := bm25Scorer{cur: make([]*postings.Iterator, len(p.phrases)), idf: make([]float64, len(p.phrases)),
		title: p.title, body: p.body, avgdl: float64(nTok) / float64(nRow)}
	for i, t := range p.phrases {
		s.idf[i], s.cur[i] = bm25IDF(nRow, dfs[t]), lists[t]
	}
	return s
}

// score is the bm25 of the chunk id, which the lists holding it are on.
// The arithmetic is fts5Bm25Function's, step for step; the explicit float64
// conversions stop a compiler from fusing a multiply and an add (which would
// round once, not twice, and differ from SQLite's C).
func (s *bm25Scorer) score(id int64) float64 {
	k1, b := bm25K1, bm25B
	k1p1 := k1 + 1.0
	oneMinusB := 1 - b
	score := 0.0
	for i, c := range s.cur {
		if c == nil || c.At().ID != id {
			continue // a phrase absent from the row adds exactly 0
		}
		at := c.At()
		f := 0.0
		for j := uint32(0); j < at.Title; j++ {
			f += s.title
		}
		for j := uint32(0); j < at.Body; j++ {
			f += s.body
		}
		D := float64(at.N)
		num := float64(f * k1p1)
		den := f + float64(k1*(oneMinusB+float64(b*D)/s.avgdl))
		score += float64(s.idf[i] * (num / den))
	}
	return score
}

// mergeTerm is one distinct list of the query in the merge.
type mergeTerm struct {
	c    *postings.Iterator
	ub   float64 // more than the list's phrases can add to a chunk's score
	rare bool    // counted by minMatch
}

// mergeTerms is the query's distinct lists, smallest bound first (ties in
// query order).
func (s *bm25Scorer) mergeTerms(p bm25Plan, dfs map[string]int64, nRow int64) []mergeTerm {
	k1p1 := bm25K1 + 1.0
	var terms []mergeTerm
	index := map[*postings.Iterator]int{}
	for i, t := range p.phrases {
		c := s.cur[i]
		if c == nil {
			continue
		}
		j, ok := index[c]
		if !ok {
			j = len(terms)
			index[c] = j
			terms = append(terms, mergeTerm{c: c, rare: float64(dfs[t]) <= p.commonShare*float64(nRow)})
		}
		terms[j].ub += s.idf[i] * k1p1 * (1 + 1e-6) // margin for rounding
	}
	slices.SortStableFunc(terms, func(a, b mergeTerm) int {
		switch {
		case a.ub < b.ub:
			return -1
		case a.ub > b.ub:
			return 1
		}
		return 0
	})
	return terms
}

// bm25IDF is FTS5's idf of a term in nHit of nRow chunks, computed as its C
// computes it (libm's log), floored at 1e-6 as FTS5 floors it.
func bm25IDF(nRow, nHit int64) float64 {
	x := float64(C.vr_log(C.double((float64(nRow-nHit) + 0.5) / (float64(nHit) + 0.5))))
	if x <= 0.0 {
		x = 1e-6
	}
	return x
}

// keywordPostings is Keyword on the postings: the best cut chunks of the
// notes that pass the filter, growing the cut (×8) until q.Limit notes (or
// chunks) are kept or every match has been seen. ok is false when FTS5 must
// run the query instead.
func (d *DB) keywordPostings(ctx context.Context, q KeywordQuery) (hits []Hit, ok bool, err error) {
	p, ok, err := d.planBM25(ctx, q)
	if err != nil || !ok {
		return nil, false, err
	}
	perNote := !q.PerChunk
	cut := q.Limit
	if perNote {
		// The filter is in the merge: no chunk of the cut is dropped after it.
		cut = keywordCap(q.Limit, Filter{})
	}
	for {
		top, more, err := d.bm25Top(ctx, p, q.Filter, cut)
		if err != nil {
			return nil, true, err
		}
		hits = keepRanked(top, q.Limit, perNote)
		if len(hits) >= q.Limit || !more {
			return hits, true, nil
		}
		cut *= 8
	}
}

// keepRanked keeps ranked chunks in rank order (perNote: a note's first
// chunk only), at most limit. A chunk's note is in its id (insertNote).
func keepRanked(top []scored[float64], limit int, perNote bool) []Hit {
	ranked := func(yield func(Hit) bool) {
		for _, s := range top {
			if !yield(Hit{ChunkID: s.id, NoteID: s.id / chunkIDsPerNote, Score: s.score}) {
				return
			}
		}
	}
	if perNote {
		hits, _ := bestPerNote(ranked, limit)
		return hits
	}
	var hits []Hit
	for h := range ranked {
		if len(hits) == limit {
			break
		}
		hits = append(hits, h)
	}
	return hits
}
