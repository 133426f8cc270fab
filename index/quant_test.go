package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models/bow"
)

// Asked for every chunk, the binary path examines every chunk and returns
// what the exact KNN returns, in the same order with the same scores.
func TestVectorBinaryAllEqualsExact(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	for _, q := range []string{"zebras", "quokka release", "gamma project status", "croissant"} {
		v := bow.Vector(q)
		exact, err := exactKNN(ctx, d, v, fixtureChunks)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ k, cand int }{{fixtureChunks, 1}, {3, fixtureChunks}, {3, MinCandidates}} {
			bin, err := binaryKNN(ctx, d, v, c.k, c.cand)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(bin, exact[:c.k]) {
				t.Errorf("%q k=%d candidates=%d: binary %v, exact %v", q, c.k, c.cand, bin, exact[:c.k])
			}
		}
	}
}

// With fewer candidates than chunks, the binary path returns k of them,
// nearest first, each with its exact score, and the candidates are the
// nearest by Hamming distance: the chunk whose own vector is the query is
// always among them.
func TestVectorBinaryCandidates(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	all, err := exactKNN(ctx, d, bow.Vector("zebras"), fixtureChunks)
	if err != nil {
		t.Fatal(err)
	}
	score := map[int64]float64{}
	for _, h := range all {
		score[h.ChunkID] = h.Score
	}
	vecs, err := d.Vectors(ctx, []int64{all[5].ChunkID})
	if err != nil {
		t.Fatal(err)
	}
	self := vecs[all[5].ChunkID]
	hits, err := binaryKNN(ctx, d, self, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ChunkID != all[5].ChunkID || hits[0].Score < 0.99999 {
		t.Fatalf("binary search for a stored vector = %+v, want that chunk first with score 1", hits)
	}
	if hits[1].Score > hits[0].Score {
		t.Errorf("not nearest first: %+v", hits)
	}
	hits, err = binaryKNN(ctx, d, bow.Vector("zebras"), 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Score != score[h.ChunkID] {
			t.Errorf("chunk %d: binary score %v, exact %v", h.ChunkID, h.Score, score[h.ChunkID])
		}
	}
}

// An incremental build codes new and changed chunks with the index's centre
// and drops the codes of removed ones; an open DB notices and reloads.
func TestCodesFollowIncrementalBuild(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	emb := newFake()
	build(t, emb, vault, dbPath, false)
	d := open(t, dbPath)
	probe := bow.Vector("Alpha\n\nxylophone marimba glockenspiel")
	if _, err := binaryKNN(ctx, d, probe, 1, 1); err != nil { // loads the codes
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vault, "alpha.md"), []byte("# Alpha\n\nxylophone marimba glockenspiel\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(vault, "beta.md")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	build(t, emb, vault, dbPath, true)
	checkCodes(t, d)
	hits, err := binaryKNN(ctx, d, probe, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	ids := noteIDs(t, d)
	if len(hits) != 1 || hits[0].NoteID != ids["alpha.md"] || hits[0].Score < 0.99999 {
		t.Errorf("after the incremental build the open index found %+v, want the rewritten alpha.md", hits)
	}
}

// checkCodes verifies that every chunk has exactly one code, and that it is
// the sign bits of its stored vector minus the index's centre.
func checkCodes(t *testing.T, d *DB) {
	t.Helper()
	ctx := context.Background()
	var chunks, codes int
	if err := d.sql.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunk_codes)`).Scan(&chunks, &codes); err != nil {
		t.Fatal(err)
	}
	if chunks != codes {
		t.Fatalf("%d chunks, %d codes", chunks, codes)
	}
	var enc string
	if err := d.sql.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaCentre).Scan(&enc); err != nil {
		t.Fatal(err)
	}
	centre, err := decodeCentre(enc, 384)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT c.id, v.embedding, k.code FROM chunks c JOIN chunks_vec v ON v.rowid = c.id JOIN chunk_codes k ON k.id = c.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var vec, code []byte
		if err := rows.Scan(&id, &vec, &code); err != nil {
			t.Fatal(err)
		}
		if want := encodeCode(quantize(decodeVector(vec), centre)); !reflect.DeepEqual(code, want) {
			t.Errorf("chunk %d: stale code", id)
		}
	}
}

// The keyword search cuts the match to a multiple of the limit and widens the
// cut when the notes it holds are too few; the answer is the uncut one.
func TestKeywordCutGrows(t *testing.T) {
	vault := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "index.db")
	var many strings.Builder
	many.WriteString("# Many\n\n")
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&many, "## Part %d\n\nwombat wombat wombat\n\n", i)
	}
	vaulttest.WriteTree(t, vault, map[string]string{
		"many.md":    many.String(),
		"one.md":     "# One\n\nwombat and a great many other words that make this section longer than the others\n",
		"b/other.md": "# Other\n\nwombat in a longer section that says many things besides the one word\n",
	}, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	for _, tc := range []struct {
		limit int
		f     Filter
		want  []string
	}{
		{1, Filter{}, []string{"many.md"}},
		{2, Filter{}, []string{"many.md", "b/other.md"}}, // the first cut (64 rows) is all many.md
		{3, Filter{}, []string{"many.md", "b/other.md", "one.md"}},
		{1, Filter{PathPrefix: "b/"}, []string{"b/other.md"}}, // the first filtered cut (512) too
	} {
		hits, err := d.Keyword(context.Background(), KeywordQuery{Match: `"wombat"`, Limit: tc.limit, Filter: tc.f})
		if err != nil {
			t.Fatal(err)
		}
		if got := hitPaths(t, d, hits); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("limit %d %+v: %v, want %v", tc.limit, tc.f, got, tc.want)
		}
	}
}

// The weighted keyword search takes the same capped first pass as the plain
// one and gives what the uncut weighted match gives: each note at its best
// chunk, in the same order.
func TestWeightedKeywordEqualsUncut(t *testing.T) {
	vault := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "index.db")
	files := map[string]string{}
	for i := 0; i < 60; i++ {
		title := "Notes"
		if i%7 == 0 {
			title = "Wombat burrows"
		}
		files[fmt.Sprintf("n%02d.md", i)] = fmt.Sprintf("# %s %d\n\nwombat %s\n\n## More\n\nwombat and burrows %d\n", title, i, strings.Repeat("filler ", i%11), i)
	}
	vaulttest.WriteTree(t, vault, files, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	ctx := context.Background()
	for _, w := range []float64{1, 3} {
		for _, limit := range []int{1, 5, 40} {
			got, err := d.Keyword(ctx, KeywordQuery{Match: `"wombat" OR "burrows"`, TitleWeight: w, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			all, err := d.Keyword(ctx, KeywordQuery{Match: `"wombat" OR "burrows"`, TitleWeight: w, Limit: 100000, PerChunk: true})
			if err != nil {
				t.Fatal(err)
			}
			var want []Hit
			seen := map[int64]bool{}
			for _, h := range all {
				if !seen[h.NoteID] && len(want) < limit {
					seen[h.NoteID] = true
					want = append(want, h)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("title weight %g, limit %d: capped %v, uncut %v", w, limit, got, want)
			}
		}
	}
	if _, err := d.Keyword(ctx, KeywordQuery{Match: `"wombat"`, TitleWeight: -1, Limit: 5}); err == nil {
		t.Error("a negative column weight was accepted")
	}
	if _, err := d.Keyword(ctx, KeywordQuery{Match: `"wombat"`, Limit: 5, Engine: EngineFTS5 + 1}); err == nil {
		t.Error("an unknown engine was accepted")
	}
}
