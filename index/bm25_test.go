package index

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index/postings"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// bm25Words is the test vaults' vocabulary: stems shared by several words,
// diacritics, digits, and words every note has.
var bm25Words = strings.Fields(`run running runs runner lease leases leasing writer writers
	compaction compact stall stalls café cafe naïve naive über ferr 4102 ttl ms file mtime
	the and of to in is it wombat burrow burrows burrowing tunnel tunnels token tokens
	index indexes indexing vector vectors merge merging segment segments alpha beta gamma`)

func bm25Vault(rng *rand.Rand, n int) map[string]string {
	files := map[string]string{}
	word := func() string {
		// Zipf-like: low indexes far more often.
		return bm25Words[int(float64(len(bm25Words))*rng.Float64()*rng.Float64())]
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		typ := []string{"log", "howto", "ref"}[i%3]
		fmt.Fprintf(&b, "---\ntype: %s\n---\n# %s %s\n\n", typ, word(), word())
		for s := 0; s < 1+rng.Intn(4); s++ {
			fmt.Fprintf(&b, "## %s\n\n", word())
			for w := 0; w < 3+rng.Intn(60); w++ {
				b.WriteString(word() + " ")
			}
			b.WriteString("\n\n")
		}
		dir := []string{"", "a/", "b/"}[i%3]
		files[fmt.Sprintf("%sn%03d.md", dir, i)] = b.String()
	}
	return files
}

func bm25Queries(rng *rand.Rand, n int) []string {
	var qs []string
	for i := 0; i < n; i++ {
		var ts []string
		for j := 0; j < 1+rng.Intn(6); j++ {
			ts = append(ts, `"`+bm25Words[rng.Intn(len(bm25Words))]+`"`)
		}
		if i%9 == 0 {
			ts = append(ts, ts[0]) // a repeated term is a second phrase
		}
		if i%11 == 0 {
			ts = append(ts, `"zyzzyva"`) // in no note
		}
		qs = append(qs, strings.Join(ts, " OR "))
	}
	return append(qs, `"wombat burrows"`, `"run" OR "wombat tunnel"`, `"o""brien" OR "lease"`, `lease AND writer`)
}

// sameAsFTS5 checks every keyword search on the postings against FTS5 doing
// the same search: the same chunks, in the same order, with the same scores
// to the bit.
func sameAsFTS5(t *testing.T, d *DB, queries []string) {
	t.Helper()
	ctx := context.Background()
	filters := []Filter{{}, {Type: "howto"}, {PathPrefix: "b/"}}
	for _, q := range queries {
		// Only a quoted OR list of one-token terms runs on the postings.
		terms, plain := quotedTerms(q)
		want := plain && !strings.ContainsAny(strings.Join(terms, ""), ` "`)
		if _, onPostings, err := d.planBM25(ctx, KeywordQuery{Match: q, TitleWeight: 1, BodyWeight: 1}); err != nil || onPostings != want {
			t.Fatalf("%s: on the postings %v (%v), want %v", q, onPostings, err, want)
		}
		for _, w := range [][2]float64{{1, 1}, {3, 1}, {0.3, 1}, {2.5, 0.7}} {
			for _, limit := range []int{1, 7, 40} {
				for _, f := range filters {
					for _, perChunk := range []bool{false, true} {
						kq := KeywordQuery{Match: q, TitleWeight: w[0], BodyWeight: w[1], Limit: limit, Filter: f, PerChunk: perChunk}
						got, err := d.Keyword(ctx, kq)
						if err != nil {
							t.Fatalf("%s: %v", q, err)
						}
						fts := kq
						fts.Engine = EngineFTS5
						want, err := d.Keyword(ctx, fts)
						if err != nil {
							t.Fatalf("%s (FTS5): %v", q, err)
						}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("%s, weights %v, limit %d, %+v, per chunk %v:\npostings %v\nFTS5     %v", q, w, limit, f, perChunk, got, want)
						}
						if !plain {
							continue
						}
						// The same terms given as terms: the same search.
						byTerms := kq
						byTerms.Match, byTerms.Terms = "", terms
						if again, err := d.Keyword(ctx, byTerms); err != nil || !reflect.DeepEqual(again, got) {
							t.Fatalf("%s as terms %q: %v (%v), as a match %v", q, terms, again, err, got)
						}
					}
				}
			}
		}
	}
}

// postingsAgree checks kw_postings against FTS5's own vocabulary: the same
// terms, each in as many chunks.
func postingsAgree(t *testing.T, dbPath string) {
	t.Helper()
	db, err := openSQLite(dbPath, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, chunks_fts, row)`); err != nil {
		t.Fatal(err)
	}
	read := func(q string) map[string]int64 {
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]int64{}
		for rows.Next() {
			var term string
			var n int64
			if err := rows.Scan(&term, &n); err != nil {
				t.Fatal(err)
			}
			m[term] = n
		}
		return m
	}
	fts := read(`SELECT term, doc FROM temp.v`)
	ours := read(`SELECT term, df FROM kw_postings`)
	if len(fts) == 0 || !reflect.DeepEqual(fts, ours) {
		t.Fatalf("kw_postings has %d terms, chunks_fts %d; they differ", len(ours), len(fts))
	}
	var term string
	var df int64
	var data []byte
	rows, err := conn.QueryContext(ctx, `SELECT term, df, data FROM kw_postings`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&term, &df, &data); err != nil {
			t.Fatal(err)
		}
		ps, err := postings.Decode(data)
		if err != nil || int64(len(ps)) != df {
			t.Fatalf("%q: %d postings decoded (%v), df %d", term, len(ps), err, df)
		}
	}
}

func TestBM25MatchesFTS5(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vault := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "index.db")
	files := bm25Vault(rng, 120)
	vaulttest.WriteTree(t, vault, files, testTime)
	build(t, newFake(), vault, dbPath, false)
	postingsAgree(t, dbPath)
	queries := bm25Queries(rng, 60)
	d := open(t, dbPath)
	sameAsFTS5(t, d, queries)

	// An incremental build patches the lists: notes changed, removed, added.
	i := 0
	for p := range files {
		switch i % 10 {
		case 0:
			os.Remove(filepath.Join(vault, p))
		case 1:
			os.WriteFile(filepath.Join(vault, p), []byte("# Changed\n\nwombat running über alles\n\n## Two\n\ncafé lease\n"), 0o644)
		}
		i++
	}
	extra := bm25Vault(rand.New(rand.NewSource(2)), 15)
	for p, s := range extra {
		extra["new/"+p] = s
		delete(extra, p)
	}
	vaulttest.WriteTree(t, vault, extra, testTime.Add(time.Hour))
	rep := build(t, newFake(), vault, dbPath, true)
	if rep.Mode != "incremental" || rep.Removed == 0 || rep.Changed == 0 || rep.Added == 0 {
		t.Fatalf("the second build was not an incremental one with removals, changes and additions: %+v", rep.Counts)
	}
	postingsAgree(t, dbPath)
	d = open(t, dbPath)
	sameAsFTS5(t, d, queries)
}

// A plain query goes to the postings, anything else to FTS5.
func TestQuotedTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`"a"`, []string{"a"}},
		{`"a" OR "b" OR "a"`, []string{"a", "b", "a"}},
		{`"o""brien" OR "x"`, []string{`o"brien`, "x"}},
		{`""`, []string{""}},
		{`a`, nil},
		{`"a" AND "b"`, nil},
		{`"a" OR b`, nil},
		{`"a`, nil},
		{`"a" OR `, nil},
		{`"a"OR "b"`, nil},
		{``, nil},
	} {
		got, ok := quotedTerms(tc.in)
		if ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("quotedTerms(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
		if ok {
			if back := QuoteTerms(got); back != tc.in {
				t.Errorf("QuoteTerms(%q) = %q, want %q", got, back, tc.in)
			}
		}
	}
}

func TestSQLiteVarint(t *testing.T) {
	for _, tc := range []struct {
		in []byte
		v  uint64
		n  int
	}{
		{[]byte{0x00}, 0, 1},
		{[]byte{0x7f}, 127, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0x82, 0x80, 0x01}, 1<<15 | 1, 3},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1<<64 - 1, 9},
		{[]byte{0x81}, 0, 0}, // cut short
		{nil, 0, 0},
	} {
		if v, n := sqliteVarint(tc.in); v != tc.v || n != tc.n {
			t.Errorf("sqliteVarint(% x) = %d, %d; want %d, %d", tc.in, v, n, tc.v, tc.n)
		}
	}
}

// The totals the postings score with are FTS5's: rows, and tokens summed
// over the chunks' lengths.
func TestFTSTotals(t *testing.T) {
	vault := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "index.db")
	vaulttest.WriteTree(t, vault, bm25Vault(rand.New(rand.NewSource(3)), 30), testTime)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	ctx := context.Background()
	rows, tokens, err := ftsTotals(ctx, d.sql)
	if err != nil {
		t.Fatal(err)
	}
	var chunks int64
	if err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&chunks); err != nil {
		t.Fatal(err)
	}
	// Every posting carries its chunk's length: sum one per chunk.
	lengths := map[int64]uint32{}
	r, err := d.sql.QueryContext(ctx, `SELECT data FROM kw_postings`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var data []byte
		r.Scan(&data)
		ps, _ := postings.Decode(data)
		for _, p := range ps {
			lengths[p.ID] = p.N
		}
	}
	r.Close()
	var sum int64
	for _, n := range lengths {
		sum += int64(n)
	}
	if rows != chunks || tokens != sum || rows == 0 {
		t.Errorf("FTS5 totals %d rows, %d tokens; the index has %d chunks of %d tokens", rows, tokens, chunks, sum)
	}
}

// randomIndex indexes a vault of n random notes drawn from rng (bm25Vault)
// and returns it with its number of chunks.
func randomIndex(t *testing.T, rng *rand.Rand, n int) (*DB, float64) {
	t.Helper()
	vault := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "index.db")
	vaulttest.WriteTree(t, vault, bm25Vault(rng, n), testTime)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	var nRow float64
	if err := d.sql.QueryRowContext(context.Background(), `SELECT count(*) FROM chunks`).Scan(&nRow); err != nil {
		t.Fatal(err)
	}
	return d, nRow
}

// TestMinMatchFiltersTheOR: with MinMatch, the postings return exactly the
// OR search's chunks (FTS5's, same scores, same order) that hold at least
// the share of the query's distinct rare terms, rare as counted from FTS5
// itself (a term in no chunk is not counted); without a rare term, the OR
// search.
func TestMinMatchFiltersTheOR(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(3))
	d, nRow := randomIndex(t, rng, 150)
	all := func(terms []string) []Hit {
		hits, err := d.Keyword(ctx, KeywordQuery{Terms: terms, Limit: 1 << 20, PerChunk: true, Engine: EngineFTS5})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	checked, constrained := 0, 0
	for _, q := range bm25Queries(rng, 80) {
		terms, ok := quotedTerms(q)
		if _, onPostings, err := d.planBM25(ctx, KeywordQuery{Terms: terms}); !ok || err != nil || !onPostings {
			continue
		}
		// Each distinct token's chunks, from FTS5.
		toks, err := d.queryTokenizer.queryTokens(ctx, terms)
		if err != nil {
			t.Fatal(err)
		}
		holds := map[string]map[int64]bool{}
		for _, tok := range toks {
			set := map[int64]bool{}
			for _, h := range all(tok) {
				set[h.ChunkID] = true
			}
			holds[tok[0]] = set
		}
		for _, share := range []float64{0.05, 0.3} {
			for _, mm := range []float64{0.5, 1} {
				rare := 0
				for _, set := range holds {
					if len(set) > 0 && float64(len(set)) <= share*nRow {
						rare++
					}
				}
				need := int(math.Ceil(mm * float64(rare)))
				var want []Hit
				for _, h := range all(terms) {
					held := 0
					for _, set := range holds {
						if float64(len(set)) <= share*nRow && set[h.ChunkID] {
							held++
						}
					}
					if held >= need {
						want = append(want, h)
					}
				}
				if need > 0 && len(want) < len(all(terms)) {
					constrained++
				}
				for _, limit := range []int{3, 40} {
					got, err := d.Keyword(ctx, KeywordQuery{Terms: terms, Limit: limit, PerChunk: true, MinMatch: mm, CommonShare: share})
					if err != nil {
						t.Fatal(err)
					}
					w := want[:min(limit, len(want))]
					if len(got) != len(w) || (len(w) > 0 && !reflect.DeepEqual(got, w)) {
						t.Fatalf("%s, min match %v of rare (≤ %v): got %v\nwant %v", q, mm, share, got, w)
					}
					checked++
				}
			}
		}
	}
	if checked == 0 || constrained == 0 {
		t.Fatalf("%d searches checked, %d constrained by min match: the test checks nothing", checked, constrained)
	}
}

func TestExtraKeepsOnlyRare(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(5))
	d, nRow := randomIndex(t, rng, 150)
	// Each term's token and document frequency, by FTS5.
	df := func(term string) (string, int64) { return termDF(t, d, term) }
	dropped, kept, asQuestion := 0, 0, 0
	for i, q := range bm25Queries(rng, 120) {
		terms, ok := quotedTerms(q)
		if _, onPostings, err := d.planBM25(ctx, KeywordQuery{Terms: terms}); !ok || err != nil || !onPostings || len(terms) < 2 {
			continue
		}
		split := 1 + i%(len(terms)-1)
		if i%5 == 0 {
			split = 0 // no question term: only the client's
		}
		question, extra := terms[:split], terms[split:]
		if i%7 == 0 && split > 0 {
			extra = append(extra, question[0]) // the question's term again, common or not
		}
		for _, share := range []float64{0.05, 0.3} {
			inQuestion := map[string]bool{}
			for _, term := range question {
				tok, _ := df(term)
				inQuestion[tok] = true
			}
			want := slices.Clone(question)
			for _, term := range extra {
				tok, n := df(term)
				switch {
				case inQuestion[tok]:
					asQuestion++
				case n == 0 || float64(n) > share*nRow:
					dropped++
					continue
				default:
					kept++
				}
				want = append(want, term)
			}
			for _, perChunk := range []bool{false, true} {
				kq := KeywordQuery{Terms: question, Extra: extra, Limit: 40, TitleWeight: 3, PerChunk: perChunk, CommonShare: share}
				got, err := d.Keyword(ctx, kq)
				if err != nil {
					t.Fatal(err)
				}
				var w []Hit
				if len(want) > 0 {
					ref := kq
					ref.Terms, ref.Extra, ref.Engine = want, nil, EngineFTS5
					if w, err = d.Keyword(ctx, ref); err != nil {
						t.Fatal(err)
					}
				}
				if !reflect.DeepEqual(got, w) {
					t.Fatalf("question %q, extra %q, share %v: got %v\nwant (%q) %v", question, extra, share, got, want, w)
				}
			}
		}
	}
	if dropped == 0 || kept == 0 || asQuestion == 0 {
		t.Fatalf("extra terms dropped %d, kept as rare %d, kept as the question's %d: a case is untested", dropped, kept, asQuestion)
	}
	// FTS5 (a term of several tokens sends the query to it) searches every
	// extra term.
	common := []string{"the", "run", "and"}
	for _, c := range common {
		if _, n := df(c); float64(n) <= 0.05*nRow {
			t.Fatalf("%q is in %d of %v chunks: not common, the check below checks nothing", c, n, nRow)
		}
	}
	multi := KeywordQuery{Terms: []string{"wombat tunnel"}, Extra: common, Limit: 40}
	got, err := d.Keyword(ctx, multi)
	if err != nil {
		t.Fatal(err)
	}
	all := KeywordQuery{Terms: append([]string{"wombat tunnel"}, common...), Limit: 40, Engine: EngineFTS5}
	if want, err := d.Keyword(ctx, all); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("a query FTS5 runs: got %v, want every term's %v (%v)", got, want, err)
	}
}

// TestExtraWithinBudget: with ExtraPostings, the extra terms searched are the
// rarest (by FTS5's count of the chunks each is in) whose counts, each
// distinct term once, add up to at most the budget; the question's terms
// are searched whatever they cost, and a repeat of one is free. The search is
// FTS5's over exactly those terms, hit for hit.
func TestExtraWithinBudget(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	d, nRow := randomIndex(t, rng, 150)
	df := func(term string) (string, int64) { return termDF(t, d, term) }
	partial, whole, none := 0, 0, 0
	for i, q := range bm25Queries(rng, 120) {
		terms, ok := quotedTerms(q)
		if _, onPostings, err := d.planBM25(ctx, KeywordQuery{Terms: terms}); !ok || err != nil || !onPostings || len(terms) < 3 {
			continue
		}
		split := 1 + i%2
		question, extra := terms[:split], terms[split:]
		if i%4 == 0 {
			extra = append(extra, question[0], extra[0]) // the question's term again, and a client term twice
		}
		inQuestion := map[string]bool{}
		for _, term := range question {
			tok, _ := df(term)
			inQuestion[tok] = true
		}
		// The reference: distinct client tokens by count, then a running sum.
		type cand struct {
			tok string
			n   int64
		}
		var cs []cand
		seen := map[string]bool{}
		var sum int64
		for _, term := range extra {
			tok, n := df(term)
			if n > 0 && !inQuestion[tok] && !seen[tok] {
				seen[tok] = true
				cs = append(cs, cand{tok, n})
				sum += n
			}
		}
		slices.SortStableFunc(cs, func(a, b cand) int { return int(a.n - b.n) })
		if len(cs) == 0 {
			continue
		}
		// none fits (0 would be no budget), the rarest alone, about half, all
		for _, budget := range []int64{max(cs[0].n-1, 1), cs[0].n, sum / 2, sum} {
			kept, left := map[string]bool{}, budget
			for _, c := range cs {
				if c.n > left {
					break
				}
				left -= c.n
				kept[c.tok] = true
			}
			switch {
			case len(kept) == len(cs):
				whole++
			case len(kept) == 0:
				none++
			default:
				partial++
			}
			want := slices.Clone(question)
			for _, term := range extra {
				if tok, _ := df(term); inQuestion[tok] || kept[tok] {
					want = append(want, term)
				}
			}
			kq := KeywordQuery{Terms: question, Extra: extra, Limit: 40, TitleWeight: 3, ExtraPostings: budget}
			got, err := d.Keyword(ctx, kq)
			if err != nil {
				t.Fatal(err)
			}
			ref := kq
			ref.Terms, ref.Extra, ref.ExtraPostings, ref.Engine = want, nil, 0, EngineFTS5
			w, err := d.Keyword(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("question %q, extra %q, budget %d: got %v\nwant (%q) %v", question, extra, budget, got, want, w)
			}
		}
	}
	if partial == 0 || whole == 0 || none == 0 {
		t.Fatalf("budgets that kept some client terms %d, all %d, none %d: a case is untested (%v chunks)", partial, whole, none, nRow)
	}
}

// termDF is a one-token term's token and the number of chunks holding it, by
// FTS5.
func termDF(t *testing.T, d *DB, term string) (string, int64) {
	t.Helper()
	ctx := context.Background()
	toks, err := d.queryTokenizer.queryTokens(ctx, []string{term})
	if err != nil || len(toks[0]) != 1 {
		t.Fatalf("%q: tokens %v (%v)", term, toks, err)
	}
	hits, err := d.Keyword(ctx, KeywordQuery{Terms: []string{term}, Limit: 1 << 20, PerChunk: true, Engine: EngineFTS5})
	if err != nil {
		t.Fatal(err)
	}
	return toks[0][0], int64(len(hits))
}
