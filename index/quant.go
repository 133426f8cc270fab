package index

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
)

// The quantized vector search. sqlite-vec's KNN is a brute-force float scan
// whose top-k selection is O(k) per stored vector, so on a large index it is
// the slowest part of a query, and it runs again on every rung of a filtered
// ladder (vector-exact against vector in docs/performance.md). The binary
// path keeps one bit per dimension of every chunk vector — the sign of
// (embedding - centre), the centre being the mean vector of the index at its
// full build (bge vectors share a large common component; without centring
// most bits are the same for every chunk) — in memory, ranks all chunks by
// its agreement with the query (the query's floats against the
// code's signs, see nearest), and rescores the best
// DefaultOversample × k of them with their exact float vectors (plain rows in
// chunk_vectors, read by primary key). The result has exact scores; only the
// candidate set is approximate, and recall@10 against the exact KNN is
// measured on real vectors (bench, TestBinaryRecall).

const metaCentre = "quant_centre" // base64 of the float32 centre, little-endian

// syncCodes gives every row of chunk_vectors its binary code. A full build
// computes the centre; an incremental one keeps the index's, so old and new
// codes stay comparable.
func syncCodes(ctx context.Context, tx *sql.Tx, dim int) error {
	var enc string
	err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaCentre).Scan(&enc)
	var centre []float32
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if centre, err = meanVector(ctx, tx, dim); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?)`, metaCentre, encodeCentre(centre)); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if centre, err = decodeCentre(enc, dim); err != nil {
			return err
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, embedding FROM chunk_vectors WHERE id NOT IN (SELECT id FROM chunk_codes)`)
	if err != nil {
		return err
	}
	type coded struct {
		id   int64
		code []byte
	}
	var todo []coded
	for rows.Next() {
		var id int64
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			rows.Close()
			return err
		}
		todo = append(todo, coded{id, encodeCode(quantize(decodeVector(blob), centre))})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO chunk_codes(id, code) VALUES(?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, c := range todo {
		if _, err := ins.ExecContext(ctx, c.id, c.code); err != nil {
			return err
		}
	}
	return nil
}

func meanVector(ctx context.Context, tx *sql.Tx, dim int) ([]float32, error) {
	sum := make([]float64, dim)
	n := 0
	rows, err := tx.QueryContext(ctx, `SELECT embedding FROM chunk_vectors`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var blob []byte
		if err := rows.Scan(&blob); err != nil {
			return nil, err
		}
		for i, x := range decodeVector(blob) {
			if i < dim {
				sum[i] += float64(x)
			}
		}
		n++
	}
	c := make([]float32, dim)
	for i := range c {
		if n > 0 {
			c[i] = float32(sum[i] / float64(n))
		}
	}
	return c, rows.Err()
}

func encodeCentre(c []float32) string {
	b := make([]byte, 4*len(c))
	for i, x := range c {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func decodeCentre(s string, dim int) ([]float32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 4*dim {
		return nil, fmt.Errorf("index metadata %s is damaged; run `vault-rag reindex`", metaCentre)
	}
	return decodeVector(b), nil
}

// quantize returns the sign bits of v - centre, 64 dimensions to a word.
func quantize(v, centre []float32) []uint64 {
	out := make([]uint64, (len(v)+63)/64)
	for i, x := range v {
		c := float32(0)
		if i < len(centre) {
			c = centre[i]
		}
		if x-c > 0 {
			out[i/64] |= 1 << (i % 64)
		}
	}
	return out
}

func encodeCode(w []uint64) []byte {
	b := make([]byte, 8*len(w))
	for i, x := range w {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// codeSet is every chunk's binary code, loaded once per version of the index.
type codeSet struct {
	version string // meta built_at and fingerprint when loaded
	centre  []float32
	words   int      // uint64 words per code
	ids     []int64  // chunk ids, ascending
	codes   []uint64 // len(ids) × words
}

// codeCache holds the loaded codes of one open DB. An incremental build
// changes the open file in place, and finish() rewrites built_at and the
// fingerprint (a staged build's last commit, the vector count), so a query
// compares those and reloads when they moved.
type codeCache struct {
	mu  sync.Mutex
	set *codeSet
}

func (d *DB) codes(ctx context.Context) (*codeSet, error) {
	var version string
	if err := d.sql.QueryRowContext(ctx, `SELECT group_concat(value, ' ') FROM (SELECT value FROM meta WHERE key IN ('built_at', 'fingerprint', 'vectors_embedded') ORDER BY key)`).Scan(&version); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	d.cc.mu.Lock()
	defer d.cc.mu.Unlock()
	if s := d.cc.set; s != nil && s.version == version {
		return s, nil
	}
	dim := 0
	fmt.Sscan(d.meta["dim"], &dim)
	var enc string
	if err := d.sql.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaCentre).Scan(&enc); err != nil {
		return nil, fmt.Errorf("vector search: no quantization centre in the index (%v); run `vault-rag reindex`", err)
	}
	centre, err := decodeCentre(enc, dim)
	if err != nil {
		return nil, err
	}
	s := &codeSet{version: version, centre: centre, words: (dim + 63) / 64}
	rows, err := d.sql.QueryContext(ctx, `SELECT id, code FROM chunk_codes ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("load vector codes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return nil, err
		}
		if len(b) != 8*s.words {
			return nil, fmt.Errorf("%w: chunk %d has a %d-byte vector code, want %d; run `vault-rag reindex`", ErrCorrupt, id, len(b), 8*s.words)
		}
		s.ids = append(s.ids, id)
		for i := 0; i < s.words; i++ {
			s.codes = append(s.codes, binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	d.cc.set = s
	return s, nil
}

// nearest returns the n chunks whose codes score best against the float
// query q (already centred), best first, ties by chunk id. The score is the
// asymmetric one: the query keeps its floats and each code stands for a
// vector of ±1, so score = Σ q_i·(±1) = 2·Σ_{bit i set} q_i − Σ q_i. It ranks
// far better than the Hamming distance between two sign codes, at the cost of
// a table lookup per code byte: per query, table[b][x] holds the sum of q over
// the bits set in byte value x at byte position b.
func (s *codeSet) nearest(q []float32, n int) []int64 {
	nbytes := 8 * s.words
	table := make([]float32, nbytes*256)
	for b := 0; b < nbytes; b++ {
		t := table[b*256 : (b+1)*256]
		for x := 1; x < 256; x++ {
			low := x & -x // the lowest set bit
			i := 8*b + bits.TrailingZeros(uint(low))
			qi := float32(0)
			if i < len(q) {
				qi = q[i]
			}
			t[x] = t[x^low] + qi
		}
	}
	h := topN[float32]{n: n}
	for i := range s.ids {
		c := s.codes[i*s.words : (i+1)*s.words]
		var sc float32
		for w, x := range c {
			t := table[w*8*256:]
			sc += t[x&0xff] + t[256+(x>>8&0xff)] + t[512+(x>>16&0xff)] + t[768+(x>>24&0xff)] +
				t[1024+(x>>32&0xff)] + t[1280+(x>>40&0xff)] + t[1536+(x>>48&0xff)] + t[1792+(x>>56)]
		}
		h.offer(sc, s.ids[i])
	}
	best := h.sorted()
	out := make([]int64, len(best))
	for i, it := range best {
		out[i] = it.id
	}
	return out
}

// nearestBinary is nearestExact through the quantized first pass: the
// candidates that score best against the query's floats (see
// codeSet.nearest) are rescored with their float vectors, and the k nearest
// of those come back, nearest first, ties by chunk id, with the scores
// nearestExact gives them. With k or candidates at least the chunk count it
// examines every chunk and equals nearestExact.
func (d *DB) nearestBinary(ctx context.Context, v []float32, k, candidates int) ([]Hit, error) {
	if done, err := d.vectorsComplete(ctx); err != nil {
		return nil, err
	} else if !done {
		// A staged build is still embedding: no codes yet (staged.go).
		return d.nearestExact(ctx, v, k)
	}
	s, err := d.codes(ctx)
	if err != nil {
		return nil, err
	}
	if len(v) != len(s.centre) {
		return nil, fmt.Errorf("vector search: the query has %d dimensions, the index %d", len(v), len(s.centre))
	}
	n := max(k, candidates)
	qc := make([]float32, len(v))
	for i := range v {
		qc[i] = v[i] - s.centre[i]
	}
	ids := s.nearest(qc, n)
	if len(ids) == 0 {
		return nil, nil
	}
	blob, err := sqlite_vec.SerializeFloat32(v)
	if err != nil {
		return nil, err
	}
	// The note is in the chunk id (note id × chunkIDsPerNote + ord): no join
	// with chunks, whose rows carry the text.
	rows, err := d.sql.QueryContext(ctx, `SELECT id, id / ?, vec_distance_l2(embedding, ?) AS dist
		FROM chunk_vectors WHERE id IN (SELECT value FROM json_each(?)) ORDER BY dist, id LIMIT ?`, chunkIDsPerNote, blob, jsonIDs(ids), k)
	return vectorHits(rows, err)
}
