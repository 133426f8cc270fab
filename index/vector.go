package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
)

// VectorMode is how a vector search finds the chunks nearest a query.
type VectorMode int

const (
	// VectorBinary, the default, ranks every chunk by one sign bit per dimension
	// (centred) and rescores the best candidates with the float vectors
	// (quant.go): exact scores, an approximate candidate set.
	VectorBinary VectorMode = iota
	// VectorExact scans every float vector with sqlite-vec: the reference the
	// binary pass is measured against, and there for anyone who wants it.
	VectorExact
)

func (m VectorMode) String() string {
	switch m {
	case VectorBinary:
		return "binary"
	case VectorExact:
		return "exact"
	}
	return fmt.Sprintf("VectorMode(%d)", int(m))
}

// VectorQuery is one vector search. It has two shapes:
//
//   - a chunk search (K above 0): the K nearest chunks, each one, nearest
//     first, ties by chunk id; it takes no filter and no ladder;
//   - a note search (Limit above 0): each note's nearest chunk, at most Limit
//     notes, nearest first, from the notes that pass Filter.
//
// Score is the cosine similarity (the vectors are normalised).
//
// A filter applies after the KNN, and filtering a truncated top-k can leave
// nothing for a scope the vault does cover. So a note search escalates k
// along Ladder until enough in-scope notes survive, every chunk has been
// examined, or the ladder ends, and VectorResult says which: "nothing
// matched" and "stopped looking" are different answers.
type VectorQuery struct {
	Vector []float32
	Mode   VectorMode
	// Oversample is, for Binary, how many candidates the first pass hands to
	// rescoring per chunk searched (0 means DefaultOversample), at least
	// MinCandidates. Candidates, above 0, is that number itself instead (no
	// minimum); either way at least the chunks searched are rescored. Exact
	// reads neither.
	Oversample int
	Candidates int
	// K is a chunk search's depth (at most MaxKNN for Exact).
	K int
	// Limit is a note search's number of notes; Ladder its chunk counts to
	// try, ascending (nil means DefaultLadder(Limit)).
	Limit  int
	Ladder []int
	Filter Filter
}

// VectorResult is what a vector search found.
type VectorResult struct {
	// Hits are a chunk search's chunks, or a note search's notes (each
	// note's nearest chunk).
	Hits []Hit
	// The rest describes a note search. Next is the nearest chunk of a note
	// left out of Hits (nil when the examined chunks held no other note in
	// scope); Outcome is how the search ended; K the chunks its last rung
	// asked for (0 when the scope holds no note); Chunks the chunks in the
	// index; Want the notes it wanted: Limit, or the scope's notes when
	// fewer.
	Next    *Hit
	Outcome ScopeOutcome
	K       int
	Chunks  int
	Want    int
}

// ScopeOutcome is how a note search ended, which tells "nothing more is in
// scope" from "the search stopped looking". The zero value is no note search
// (a chunk search, or a stage that searches no scope). Its text, in the
// explain output and the server's answers, is its String.
type ScopeOutcome int

const (
	// ScopeFilled: Want notes were found.
	ScopeFilled ScopeOutcome = iota + 1
	// ScopeDrained: every chunk was examined (or the scope holds no note); there
	// are no more notes in scope.
	ScopeDrained
	// ScopeLadderEnd: the search stopped at the ladder's last rung, or at MaxKNN,
	// with fewer than Want notes; more may exist.
	ScopeLadderEnd
)

var scopeOutcomeNames = [...]string{"", "filled", "drained", "ladder-end"}

// String is the outcome's name: "filled", "drained" or "ladder-end"; "" for
// the zero value.
func (o ScopeOutcome) String() string {
	if o < 0 || int(o) >= len(scopeOutcomeNames) {
		return fmt.Sprintf("ScopeOutcome(%d)", int(o))
	}
	return scopeOutcomeNames[o]
}

// MarshalText writes the outcome as its String.
func (o ScopeOutcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads an outcome's String.
func (o *ScopeOutcome) UnmarshalText(text []byte) error {
	for i, name := range scopeOutcomeNames {
		if string(text) == name {
			*o = ScopeOutcome(i)
			return nil
		}
	}
	return fmt.Errorf("no scope outcome %q (want filled, drained or ladder-end)", text)
}

// MaxKNN is the largest k sqlite-vec accepts in one KNN query.
const MaxKNN = 4096

// DefaultOversample is the default multiple of k the binary pass hands to
// rescoring.
const DefaultOversample = 8

// MinCandidates is the fewest candidates the binary pass rescores, however
// small k is: a top-10 from a few dozen candidates loses neighbours.
const MinCandidates = 256

// DefaultLadder is a note search's default ladder for limit notes: 4×, 16×
// and 64× limit chunks, then MaxKNN. Rungs past MaxKNN collapse into it;
// without the stop, a limit over 64 made a ladder that does not rise.
func DefaultLadder(limit int) []int {
	var l []int
	for _, k := range []int{4 * limit, 16 * limit, 64 * limit, MaxKNN} {
		l = append(l, min(k, MaxKNN))
		if k >= MaxKNN {
			break
		}
	}
	return l
}

// Rescored is how many chunks the binary pass rescores when q searches the
// k nearest: Candidates when set, else Oversample × k, at least
// MinCandidates; never fewer than k.
func (q VectorQuery) Rescored(k int) int {
	if q.Candidates > 0 {
		return max(k, q.Candidates)
	}
	over := q.Oversample
	if over <= 0 {
		over = DefaultOversample
	}
	return max(k, k*over, MinCandidates)
}

// Vector runs a vector search (see VectorQuery).
func (d *DB) Vector(ctx context.Context, q VectorQuery) (VectorResult, error) {
	switch {
	case q.Mode != VectorBinary && q.Mode != VectorExact:
		return VectorResult{}, fmt.Errorf("vector search: no mode %d", q.Mode)
	case q.K > 0 && q.Limit > 0:
		return VectorResult{}, errors.New("vector search: K (chunks) and Limit (notes) both set")
	case q.K > 0:
		if !q.Filter.Empty() || len(q.Ladder) > 0 {
			return VectorResult{}, errors.New("vector search: a chunk search (K) takes no filter and no ladder; a note search (Limit) does")
		}
		hits, err := d.nearest(ctx, q, q.K)
		return VectorResult{Hits: hits}, err
	case q.Limit > 0:
		return d.vectorNotes(ctx, q)
	}
	return VectorResult{}, errors.New("vector search: neither K (chunks) nor Limit (notes) is above 0")
}

// vectorNotes is the note search: the ladder.
func (d *DB) vectorNotes(ctx context.Context, q VectorQuery) (VectorResult, error) {
	total, err := d.ChunkCount(ctx)
	if err != nil {
		return VectorResult{}, err
	}
	res := VectorResult{Chunks: total, Want: q.Limit}
	if !q.Filter.Empty() {
		// A scope holding fewer notes than Limit is filled once it is all found.
		_, inScope, err := d.List(ctx, q.Filter, 0, 0)
		if err != nil {
			return VectorResult{}, err
		}
		res.Want = min(q.Limit, inScope)
		if res.Want == 0 {
			res.Outcome = ScopeDrained
			return res, nil
		}
	}
	ladder := q.Ladder
	if len(ladder) == 0 {
		ladder = DefaultLadder(q.Limit)
	}
	for i, k := range ladder {
		hits, err := d.nearest(ctx, q, k)
		if err != nil {
			return VectorResult{}, err
		}
		if !q.Filter.Empty() {
			if hits, err = d.inScope(ctx, hits, q.Filter); err != nil {
				return VectorResult{}, err
			}
		}
		res.Hits, res.Next = bestPerNote(slices.Values(hits), q.Limit)
		res.K = k
		switch {
		case len(res.Hits) >= res.Want:
			res.Outcome = ScopeFilled
			return res, nil
		case k >= total:
			res.Outcome = ScopeDrained
			return res, nil
		case i == len(ladder)-1 || k >= MaxKNN:
			res.Outcome = ScopeLadderEnd
			return res, nil
		}
	}
	return res, nil // not reached: the last rung ends the search
}

// nearest is the k chunks nearest q.Vector by q's mode.
func (d *DB) nearest(ctx context.Context, q VectorQuery, k int) ([]Hit, error) {
	if q.Mode == VectorExact {
		return d.nearestExact(ctx, q.Vector, k)
	}
	return d.nearestBinary(ctx, q.Vector, k, q.Rescored(k))
}

// inScope keeps the hits whose note passes the filter, in order.
func (d *DB) inScope(ctx context.Context, hits []Hit, f Filter) ([]Hit, error) {
	ids := make([]int64, len(hits))
	for j, h := range hits {
		ids[j] = h.NoteID
	}
	ok, err := d.Matching(ctx, ids, f)
	if err != nil {
		return nil, err
	}
	kept := hits[:0]
	for _, h := range hits {
		if ok[h.NoteID] {
			kept = append(kept, h)
		}
	}
	return kept, nil
}

// nearestExact returns the k chunks nearest to v by L2 distance, nearest
// first, ties by chunk id, by sqlite-vec's KNN.
func (d *DB) nearestExact(ctx context.Context, v []float32, k int) ([]Hit, error) {
	blob, err := sqlite_vec.SerializeFloat32(v)
	if err != nil {
		return nil, err
	}
	k = min(k, MaxKNN)
	// Materialised, so the planner cannot fold the outer ORDER BY into the
	// vec0 query, which accepts only its own.
	rows, err := d.sql.QueryContext(ctx, `WITH v AS MATERIALIZED (SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?)
		SELECT v.rowid, c.note_id, v.distance FROM v JOIN chunks c ON c.id = v.rowid ORDER BY v.distance, v.rowid`, blob, k)
	return vectorHits(rows, err)
}

// vectorHits reads (chunk id, note id, L2 distance) rows, nearest first, as
// hits scored by cosine (the vectors are unit length: cos = 1 − d²/2).
func vectorHits(rows *sql.Rows, err error) ([]Hit, error) {
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var dist float64
		if err := rows.Scan(&h.ChunkID, &h.NoteID, &dist); err != nil {
			return nil, err
		}
		h.Score = 1 - dist*dist/2
		hits = append(hits, h)
	}
	return hits, rows.Err()
}
