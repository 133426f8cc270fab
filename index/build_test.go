package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	vpkg "github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models/bow"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// fixture is the vault most build tests index. Path order (and so note id in
// a full build): 2026-02-03-daily, alpha, archive/gamma, beta, café/menu,
// delta, projects/gamma, warn, Über Notes.
func fixture() map[string]string {
	return map[string]string{
		"alpha.md": "---\ntype: Meeting\ndate: 2026-01-10\nproject: Apollo\nstatus: done\ntopics: [rust, go]\n---\n" +
			"# Alpha\nintro about zebras\n\n" +
			"## Plan\nLinks to [[beta]], [[projects/gamma#Goals|the gamma]] and [[missing note]].\n\n" +
			"## Details\nxylophone details here\n",
		"beta.md":             "# Beta\nBack to [[ALPHA]] and over to [[Über Notes]] and [[gamma]].\n\n## Body\nquokka facts\n",
		"projects/gamma.md":   "---\ntype: project\nproject: apollo\nstatus: active\ntopics: go\n---\n# Gamma\n## Goals\nship the release\n",
		"archive/gamma.md":    "# Old Gamma\narchived notes\n",
		"delta.md":            "# Delta\nSee [[alpha#Plan]].\n",
		"2026-02-03-daily.md": "# Daily\nwalked the dog\n",
		"Über Notes.md":       "# Über\numlaut content\n",
		"café/menu.md":        "# Menu\ncroissant\n",
		"warn.md":             "---\ntopics: [a\n---\n# Warn\nstill indexed\n",
		"empty.md":            "",
		"blank.md":            "  \n\n",
		"templates/t.md":      "# template\n",
	}
}

const (
	fixtureNotes  = 9
	fixtureChunks = 12 // alpha 3, beta 2, the rest 1 each
	fixtureLinks  = 7
)

// newFixture writes the fixture vault and returns it and an index path.
func newFixture(t *testing.T) (vault, dbPath string) {
	t.Helper()
	vault = filepath.Join(t.TempDir(), "vault")
	vaulttest.WriteTree(t, vault, fixture(), testTime)
	return vault, filepath.Join(t.TempDir(), "idx", "vault.db")
}

func build(t *testing.T, emb Embedder, vault, dbPath string, incremental bool) Report {
	t.Helper()
	rep, err := Build(context.Background(), emb, BuildOptions{VaultPath: vault, DBPath: dbPath, Incremental: incremental})
	if err != nil {
		t.Fatalf("Build(incremental=%v): %v", incremental, err)
	}
	return rep
}

func open(t *testing.T, dbPath string) *DB {
	t.Helper()
	d, err := Open(context.Background(), dbPath)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// noteIDs maps every indexed path to its note id.
func noteIDs(t *testing.T, d *DB) map[string]int64 {
	t.Helper()
	rows, _, err := d.List(context.Background(), Filter{}, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, n := range rows {
		out[n.Path] = n.ID
	}
	return out
}

// linkTable renders the links table as "source#ord target -> resolved path".
func linkTable(t *testing.T, d *DB) []string {
	t.Helper()
	rows, err := d.db.Query(`SELECT s.path, l.ord, l.target, coalesce(n.path, '<dangling>')
		FROM links l JOIN notes s ON s.id = l.note_id LEFT JOIN notes n ON n.id = l.target_id ORDER BY s.path, l.ord`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var src, target, resolved string
		var ord int
		if err := rows.Scan(&src, &ord, &target, &resolved); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s#%d %s -> %s", src, ord, target, resolved))
	}
	return out
}

func keywordPaths(t *testing.T, d *DB, match string, f Filter) []string {
	t.Helper()
	hits, err := d.Keyword(context.Background(), KeywordQuery{Match: match, Limit: 100, Filter: f})
	if err != nil {
		t.Fatalf("Keyword(%s): %v", match, err)
	}
	return hitPaths(t, d, hits)
}

// hitPaths names the notes of hits, in order.
func hitPaths(t *testing.T, d *DB, hits []Hit) []string {
	t.Helper()
	var ids []int64
	for _, h := range hits {
		ids = append(ids, h.NoteID)
	}
	notes, err := d.Notes(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, notes[h.NoteID].Path)
	}
	return out
}

func TestBuildFull(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	emb := newFake()
	var progress [][2]int
	rep, err := Build(ctx, emb, BuildOptions{VaultPath: vault, DBPath: dbPath,
		Progress: func(p Progress) {
			if p.Phase == "embedding" {
				progress = append(progress, [2]int{p.Done, p.Total})
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "full" || rep.Fallback != "" || rep.Notes != fixtureNotes || rep.Added != fixtureNotes ||
		rep.Chunks != fixtureChunks || rep.Embedded != fixtureChunks || rep.Reused != 0 || rep.Truncated != 0 {
		t.Errorf("report = %+v, want a full build of %d notes, %d chunks all embedded", rep, fixtureNotes, fixtureChunks)
	}
	if len(progress) == 0 || progress[len(progress)-1] != [2]int{fixtureChunks, fixtureChunks} {
		t.Errorf("progress = %v, want it to end at %d of %d", progress, fixtureChunks, fixtureChunks)
	}
	skipped := map[string]string{}
	for _, s := range rep.Skipped {
		skipped[s.Path] = s.Reason
	}
	wantSkipped := map[string]string{"blank.md": "empty file", "empty.md": "empty file", "templates/": "templates folder"}
	if !reflect.DeepEqual(skipped, wantSkipped) {
		t.Errorf("skipped = %v, want %v", skipped, wantSkipped)
	}
	if !sort.SliceIsSorted(rep.Skipped, func(i, j int) bool { return rep.Skipped[i].Path < rep.Skipped[j].Path }) {
		t.Errorf("skipped not in path order: %v", rep.Skipped)
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0].Path != "warn.md" || !strings.Contains(rep.Warnings[0].Reason, "YAML") {
		t.Errorf("warnings = %v, want one for warn.md about YAML", rep.Warnings)
	}

	d := open(t, dbPath)
	st, err := d.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Notes != fixtureNotes || st.Chunks != fixtureChunks || st.Links != fixtureLinks || st.Embedder != "fake-bow" ||
		!regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(st.Fingerprint) || st.BuiltAt.IsZero() || st.Bytes <= 0 {
		t.Errorf("stats = %+v, want %d notes, %d chunks, %d links by fake-bow with a fingerprint", st, fixtureNotes, fixtureChunks, fixtureLinks)
	}
	absVault, _ := filepath.Abs(vault)
	for k, want := range map[string]string{"embedder": "fake-bow", "dim": "384", "schema_version": SchemaVersion, "vault": absVault, "fingerprint": st.Fingerprint} {
		if got := d.Meta(k); got != want {
			t.Errorf("Meta(%q) = %q, want %q", k, got, want)
		}
	}
	if n, err := d.ChunkCount(ctx); err != nil || n != fixtureChunks {
		t.Errorf("ChunkCount = %d, %v; want %d", n, err, fixtureChunks)
	}
	if d.Path() != dbPath {
		t.Errorf("Path = %q, want %q", d.Path(), dbPath)
	}

	// Note ids follow path order; chunk ids are note id << 16 + ord.
	ids := noteIDs(t, d)
	wantOrder := []string{"2026-02-03-daily.md", "alpha.md", "archive/gamma.md", "beta.md", "café/menu.md", "delta.md", "projects/gamma.md", "warn.md", "Über Notes.md"}
	for i, p := range wantOrder {
		if ids[p] != int64(i+1) {
			t.Errorf("note id of %s = %d, want %d", p, ids[p], i+1)
		}
	}
	alphaChunks, err := d.NoteChunks(ctx, ids["alpha.md"])
	if err != nil {
		t.Fatal(err)
	}
	wantAlpha := []ChunkRow{
		{ID: 2<<16 + 0, NoteID: 2, Ord: 0, Heading: "", Body: "intro about zebras"},
		{ID: 2<<16 + 1, NoteID: 2, Ord: 1, Heading: "Plan", Body: "Links to [[beta]], [[projects/gamma#Goals|the gamma]] and [[missing note]]."},
		{ID: 2<<16 + 2, NoteID: 2, Ord: 2, Heading: "Details", Body: "xylophone details here"},
	}
	if !reflect.DeepEqual(alphaChunks, wantAlpha) {
		t.Errorf("alpha chunks =\n%#v\nwant\n%#v", alphaChunks, wantAlpha)
	}

	// Stored note rows.
	rows := map[string]NoteRow{}
	for _, p := range []string{"alpha.md", "2026-02-03-daily.md", "café/menu.md", "warn.md"} {
		n, err := d.NoteByPath(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		rows[p] = n
	}
	if n := rows["alpha.md"]; n.Title != "Alpha" || n.Type != "meeting" || n.Date != "2026-01-10" || n.DateSource != "frontmatter" ||
		n.Project != "apollo" || n.Status != "done" || !reflect.DeepEqual(n.Topics, []string{"rust", "go"}) || len(n.Warnings) != 0 {
		t.Errorf("alpha row = %+v", n)
	}
	if n := rows["2026-02-03-daily.md"]; n.Date != "2026-02-03" || n.DateSource != "filename" {
		t.Errorf("daily row date = %s (%s), want 2026-02-03 (filename)", n.Date, n.DateSource)
	}
	if n := rows["café/menu.md"]; n.Date != testTime.Format("2006-01-02") || n.DateSource != "mtime" {
		t.Errorf("menu row date = %s (%s), want the file time", n.Date, n.DateSource)
	}
	if n := rows["warn.md"]; len(n.Warnings) != 1 {
		t.Errorf("warn row warnings = %q, want one", n.Warnings)
	}
	if _, err := d.NoteByPath(ctx, "empty.md"); err == nil {
		t.Error("NoteByPath(empty.md) found a skipped note")
	}

	// No half-built file is left beside the index.
	entries, _ := os.ReadDir(filepath.Dir(dbPath))
	for _, e := range entries {
		if e.Name() != "vault.db" && e.Name() != "vault.db"+CacheSuffix && e.Name() != "vault.db"+LockSuffix {
			t.Errorf("left beside the index: %s", e.Name())
		}
	}
}

func TestKeyword(t *testing.T) {
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	tests := []struct {
		match string
		f     Filter
		want  []string
	}{
		{`"xylophone"`, Filter{}, []string{"alpha.md"}},
		{`"zebras"`, Filter{}, []string{"alpha.md"}},
		{`"quokka"`, Filter{}, []string{"beta.md"}},
		{`"croissant"`, Filter{}, []string{"café/menu.md"}},
		{`"umlaut"`, Filter{}, []string{"Über Notes.md"}},
		{`"nothing-like-this"`, Filter{}, nil},
		{`"gamma"`, Filter{PathPrefix: "projects/"}, []string{"projects/gamma.md"}},
		{`"gamma"`, Filter{Status: "active"}, []string{"projects/gamma.md"}},
		{`"details"`, Filter{}, []string{"alpha.md"}}, // heading words are searchable
		{`"release"`, Filter{Type: "meeting"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.match, func(t *testing.T) {
			if got := keywordPaths(t, d, tc.match, tc.f); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Keyword(%s, %+v) = %v, want %v", tc.match, tc.f, got, tc.want)
			}
		})
	}

	// One hit per note (its best chunk), never two chunks of one note.
	hits, err := d.Keyword(context.Background(), KeywordQuery{Match: `"gamma" OR "alpha" OR "beta"`, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for i, h := range hits {
		if seen[h.NoteID] {
			t.Errorf("note %d returned twice", h.NoteID)
		}
		seen[h.NoteID] = true
		if h.ChunkID>>16 != h.NoteID {
			t.Errorf("hit %+v: chunk does not belong to its note", h)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("hits not best first: %v", hits)
		}
	}
	if len(hits) < 4 {
		t.Errorf("%d hits for three common words, want at least 4", len(hits))
	}
	if _, err := d.Keyword(context.Background(), KeywordQuery{Match: `"unbalanced`, Limit: 10}); err == nil {
		t.Error("a malformed match expression did not fail")
	}
}

func TestVectorExact(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	ids := noteIDs(t, d)
	tests := []struct {
		path  string
		title string
		ord   int
	}{
		{"alpha.md", "Alpha", 0},
		{"alpha.md", "Alpha", 2},
		{"beta.md", "Beta", 1},
		{"café/menu.md", "Menu", 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s#%d", tc.path, tc.ord), func(t *testing.T) {
			chunks, err := d.NoteChunks(ctx, ids[tc.path])
			if err != nil {
				t.Fatal(err)
			}
			if len(chunks) <= tc.ord {
				t.Fatalf("%s has %d chunks", tc.path, len(chunks))
			}
			c := chunks[tc.ord]
			v := bow.Vector(vpkg.EmbedText(tc.title, vpkg.Chunk{Heading: c.Heading, Body: c.Body}))
			hits, err := exactKNN(ctx, d, v, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 3 {
				t.Fatalf("%d hits, want 3", len(hits))
			}
			if hits[0].ChunkID != c.ID || hits[0].NoteID != ids[tc.path] {
				t.Errorf("nearest = %+v, want chunk %d of note %d", hits[0], c.ID, ids[tc.path])
			}
			if math.Abs(hits[0].Score-1) > 1e-5 {
				t.Errorf("score of the identical vector = %v, want 1", hits[0].Score)
			}
			if hits[1].Score > hits[0].Score || hits[2].Score > hits[1].Score {
				t.Errorf("hits not nearest first: %+v", hits)
			}
			stored, err := d.Vectors(ctx, []int64{c.ID})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(stored[c.ID], v) {
				t.Errorf("stored vector differs from the embedder's")
			}
		})
	}
	if hits, err := exactKNN(ctx, d, bow.Vector("zebras"), 100); err != nil || len(hits) != fixtureChunks {
		t.Errorf("exact KNN (k=100) = %d hits, %v; want every chunk (%d)", len(hits), err, fixtureChunks)
	}
}

func TestLinksAndRelated(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)

	want := []string{
		"alpha.md#0 beta -> beta.md",                     // by file name
		"alpha.md#1 projects/gamma -> projects/gamma.md", // by path
		"alpha.md#2 missing note -> <dangling>",          // no such note
		"beta.md#0 ALPHA -> alpha.md",                    // case-insensitive
		"beta.md#1 Über Notes -> Über Notes.md",          // non-ASCII name
		"beta.md#2 gamma -> archive/gamma.md",            // file name shared: first in path order
		"delta.md#0 alpha -> alpha.md",                   // with a #heading
	}
	if got := linkTable(t, d); !reflect.DeepEqual(got, want) {
		t.Errorf("links =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	ids := noteIDs(t, d)
	tests := []struct {
		path string
		want []Related
	}{
		{"alpha.md", []Related{
			{Path: "beta.md", Title: "Beta", Direction: "links to"},
			{Path: "projects/gamma.md", Title: "Gamma", Direction: "links to", Heading: "Goals"},
			{Path: "delta.md", Title: "Delta", Direction: "linked from"},
		}},
		{"beta.md", []Related{
			{Path: "alpha.md", Title: "Alpha", Direction: "links to"},
			{Path: "archive/gamma.md", Title: "Old Gamma", Direction: "links to"},
			{Path: "Über Notes.md", Title: "Über", Direction: "links to"},
		}},
		{"projects/gamma.md", []Related{{Path: "alpha.md", Title: "Alpha", Direction: "linked from"}}},
		{"archive/gamma.md", []Related{{Path: "beta.md", Title: "Beta", Direction: "linked from"}}},
		{"delta.md", []Related{{Path: "alpha.md", Title: "Alpha", Direction: "links to", Heading: "Plan"}}},
		{"café/menu.md", nil},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			got, err := d.Related(ctx, ids[tc.path])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Related(%s) =\n%+v\nwant\n%+v", tc.path, got, tc.want)
			}
		})
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	all := []string{"2026-02-03-daily.md", "alpha.md", "archive/gamma.md", "beta.md", "café/menu.md", "delta.md", "projects/gamma.md", "warn.md", "Über Notes.md"}
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"everything", Filter{}, all},
		{"path prefix", Filter{PathPrefix: "projects/"}, []string{"projects/gamma.md"}},
		{"path prefix with a leading slash", Filter{PathPrefix: "/projects/"}, []string{"projects/gamma.md"}},
		{"path prefix of a name", Filter{PathPrefix: "a"}, []string{"alpha.md", "archive/gamma.md"}},
		{"non-ASCII path prefix", Filter{PathPrefix: "café/"}, []string{"café/menu.md"}},
		{"non-ASCII file prefix", Filter{PathPrefix: "Über"}, []string{"Über Notes.md"}},
		{"type, any case", Filter{Type: "MEETING"}, []string{"alpha.md"}},
		{"project", Filter{Project: "Apollo"}, []string{"alpha.md", "projects/gamma.md"}},
		{"status", Filter{Status: "active"}, []string{"projects/gamma.md"}},
		{"one topic", Filter{Topics: []string{"go"}}, []string{"alpha.md", "projects/gamma.md"}},
		{"all topics", Filter{Topics: []string{"go", "rust"}}, []string{"alpha.md"}},
		{"topic as a tag", Filter{Topics: []string{"#Rust"}}, []string{"alpha.md"}},
		{"unknown topic", Filter{Topics: []string{"nope"}}, nil},
		{"date from", Filter{DateFrom: "2026-01-01"}, []string{"2026-02-03-daily.md", "alpha.md"}},
		{"date to", Filter{DateTo: "2026-01-31"}, all[1:]},
		{"one day, inclusive", Filter{DateFrom: "2026-01-10", DateTo: "2026-01-10"}, []string{"alpha.md"}},
		{"fields combine", Filter{Project: "apollo", Status: "done"}, []string{"alpha.md"}},
		{"nothing matches", Filter{Type: "project", Status: "done"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, total, err := d.List(ctx, tc.f, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var ids []int64
			for _, r := range rows {
				got = append(got, r.Path)
				ids = append(ids, r.ID)
			}
			if !reflect.DeepEqual(got, tc.want) || total != len(tc.want) {
				t.Errorf("List(%+v) = %v (total %d), want %v", tc.f, got, total, tc.want)
			}
			if tc.f.Empty() != (tc.name == "everything") {
				t.Errorf("Empty() = %v", tc.f.Empty())
			}
			// Matching agrees with List.
			allIDs := []int64{}
			for _, id := range noteIDs(t, d) {
				allIDs = append(allIDs, id)
			}
			m, err := d.Matching(ctx, allIDs, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if len(m) != len(ids) {
				t.Errorf("Matching = %v, want ids %v", m, ids)
			}
			for _, id := range ids {
				if !m[id] {
					t.Errorf("Matching lacks %d", id)
				}
			}
		})
	}

	t.Run("paging", func(t *testing.T) {
		pages := []struct{ offset, limit int }{{0, 2}, {2, 3}, {8, 5}, {9, 5}, {20, 5}}
		for _, p := range pages {
			rows, total, err := d.List(ctx, Filter{}, p.offset, p.limit)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, r.Path)
			}
			lo, hi := min(p.offset, len(all)), min(p.offset+p.limit, len(all))
			if total != len(all) || strings.Join(got, ",") != strings.Join(all[lo:hi], ",") {
				t.Errorf("List(offset %d, limit %d) = %v (total %d), want %v (total %d)", p.offset, p.limit, got, total, all[lo:hi], len(all))
			}
		}
	})
}

func TestFilterValidate(t *testing.T) {
	tests := []struct {
		f  Filter
		ok bool
	}{
		{Filter{}, true},
		{Filter{DateFrom: "2026-01-02", DateTo: "2026-12-31"}, true},
		{Filter{DateFrom: "2026-1-2"}, false},
		{Filter{DateTo: "yesterday"}, false},
		{Filter{DateTo: "2026-02-30"}, false},
	}
	for _, tc := range tests {
		if err := tc.f.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tc.f, err, tc.ok)
		}
	}
}

// chunkDump renders every note's chunks and vectors by path, to compare two
// indexes whose ids may differ.
func chunkDump(t *testing.T, d *DB) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for p, id := range noteIDs(t, d) {
		chunks, err := d.NoteChunks(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var cids []int64
		for _, c := range chunks {
			cids = append(cids, c.ID)
		}
		vecs, err := d.Vectors(ctx, cids)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range chunks {
			fmt.Fprintf(&b, "%d/%d %q %q %v\n", c.Ord, c.Part, c.Heading, c.Body, vecs[c.ID])
		}
		out[p] = b.String()
	}
	return out
}

func TestBuildIncremental(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	emb := newFake()
	build(t, emb, vault, dbPath, false)
	d := open(t, dbPath) // stays open across the in-place updates
	lastIDs := noteIDs(t, d)

	write := func(rel, content string) func(t *testing.T) {
		return func(t *testing.T) { vaulttest.WriteTree(t, vault, map[string]string{rel: content}, testTime) }
	}
	type counts struct{ notes, chunks, added, changed, removed, unchanged, embedded, reused int }
	steps := []struct {
		name     string
		change   func(t *testing.T)
		want     counts
		embedded []string // exactly the texts the model saw, when not nil
		check    func(t *testing.T, ids map[string]int64)
	}{
		{
			name:   "unchanged vault",
			change: func(t *testing.T) {},
			want:   counts{notes: 9, chunks: 12, unchanged: 9},
		},
		{
			name:     "one section edited",
			change:   write("alpha.md", strings.Replace(fixture()["alpha.md"], "xylophone", "marimba", 1)),
			want:     counts{notes: 9, chunks: 12, changed: 1, unchanged: 8, embedded: 1, reused: 2},
			embedded: []string{"Alpha\nDetails\nmarimba details here"},
			check: func(t *testing.T, ids map[string]int64) {
				if got := keywordPaths(t, d, `"xylophone"`, Filter{}); got != nil {
					t.Errorf("old word still found in %v", got)
				}
				if got := keywordPaths(t, d, `"marimba"`, Filter{}); !reflect.DeepEqual(got, []string{"alpha.md"}) {
					t.Errorf("new word found in %v, want alpha.md", got)
				}
			},
		},
		{
			name: "sections reordered: nothing to embed",
			change: write("alpha.md", strings.Replace(fixture()["alpha.md"], "xylophone", "marimba", 1)[:strings.Index(fixture()["alpha.md"], "## Plan")]+
				"## Details\nmarimba details here\n\n## Plan\nLinks to [[beta]], [[projects/gamma#Goals|the gamma]] and [[missing note]].\n"),
			want:     counts{notes: 9, chunks: 12, changed: 1, unchanged: 8, embedded: 0, reused: 3},
			embedded: []string{},
		},
		{
			name:   "note removed",
			change: func(t *testing.T) { os.Remove(filepath.Join(vault, "delta.md")) },
			want:   counts{notes: 8, chunks: 11, removed: 1, unchanged: 8},
			check: func(t *testing.T, ids map[string]int64) {
				if _, err := d.NoteByPath(ctx, "delta.md"); err == nil {
					t.Error("delta.md still in the index")
				}
				rel, _ := d.Related(ctx, ids["alpha.md"])
				for _, r := range rel {
					if r.Path == "delta.md" {
						t.Error("alpha still linked from the removed delta")
					}
				}
				if got := keywordPaths(t, d, `"see"`, Filter{}); got != nil {
					t.Errorf("removed note's text still found: %v", got)
				}
			},
		},
		{
			name:     "note added resolves a dangling link",
			change:   write("missing note.md", "# Missing Note\nnow it exists\n"),
			want:     counts{notes: 9, chunks: 12, added: 1, unchanged: 8, embedded: 1},
			embedded: []string{"Missing Note\nnow it exists"},
			check: func(t *testing.T, ids map[string]int64) {
				if ids["missing note.md"] != 10 {
					t.Errorf("new note id = %d, want 10 (after the largest id in the index)", ids["missing note.md"])
				}
				found := false
				for _, l := range linkTable(t, d) {
					found = found || l == "alpha.md#2 missing note -> missing note.md"
				}
				if !found {
					t.Errorf("alpha's link to the new note is not resolved: %v", linkTable(t, d))
				}
			},
		},
		{
			name:   "a file that became empty is removed",
			change: write("beta.md", ""),
			want:   counts{notes: 8, chunks: 10, removed: 1, unchanged: 8},
			check: func(t *testing.T, ids map[string]int64) {
				if _, err := d.NoteByPath(ctx, "beta.md"); err == nil {
					t.Error("beta.md still in the index")
				}
				for _, l := range linkTable(t, d) {
					if strings.HasPrefix(l, "beta.md#") {
						t.Errorf("link of the emptied note kept: %s", l)
					}
					if strings.HasPrefix(l, "alpha.md#0 ") && l != "alpha.md#0 beta -> <dangling>" {
						t.Errorf("link to the emptied note still resolves: %s", l)
					}
				}
				if got := keywordPaths(t, d, `"quokka"`, Filter{}); got != nil {
					t.Errorf("emptied note's text still found: %v", got)
				}
			},
		},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.change(t)
			emb.reset()
			rep := build(t, emb, vault, dbPath, true)
			got := counts{rep.Notes, rep.Chunks, rep.Added, rep.Changed, rep.Removed, rep.Unchanged, rep.Embedded, rep.Reused}
			if rep.Mode != "incremental" || rep.Fallback != "" || got != s.want {
				t.Errorf("report %s %q %+v, want incremental %+v", rep.Mode, rep.Fallback, got, s.want)
			}
			if s.embedded != nil {
				if texts := emb.texts(); !reflect.DeepEqual(texts, s.embedded) && !(len(texts) == 0 && len(s.embedded) == 0) {
					t.Errorf("embedded %q, want %q", texts, s.embedded)
				}
			}
			if d.Stale() {
				t.Error("an incremental build made the open index stale")
			}
			st, err := d.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Notes != s.want.notes || st.Chunks != s.want.chunks {
				t.Errorf("the open index sees %d notes, %d chunks; want %d, %d", st.Notes, st.Chunks, s.want.notes, s.want.chunks)
			}
			ids := noteIDs(t, d)
			for p, id := range ids {
				if old, ok := lastIDs[p]; ok && old != id {
					t.Errorf("note id of %s changed from %d to %d", p, old, id)
				}
			}
			if s.check != nil {
				s.check(t, ids)
			}
			lastIDs = ids
		})
	}

	// The result equals a full build of the same vault.
	fullPath := filepath.Join(t.TempDir(), "full.db")
	build(t, newFake(), vault, fullPath, false)
	full := open(t, fullPath)
	if d.Meta("fingerprint") == "" {
		t.Fatal("no fingerprint")
	}
	inc, err := d.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fst, err := full.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Fingerprint != fst.Fingerprint || inc.Notes != fst.Notes || inc.Chunks != fst.Chunks || inc.Links != fst.Links {
		t.Errorf("incremental %+v, full %+v: want the same content", inc, fst)
	}
	if a, b := chunkDump(t, d), chunkDump(t, full); !reflect.DeepEqual(a, b) {
		t.Errorf("incremental and full builds hold different chunks or vectors")
	}
	if a, b := linkTable(t, d), linkTable(t, full); !reflect.DeepEqual(a, b) {
		t.Errorf("links differ:\nincremental %v\nfull %v", a, b)
	}
}

func TestBuildIncrementalFallback(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		prep   func(t *testing.T, dbPath string) // after a full build with fake-bow
		emb    string
		reason string
	}{
		{"no index yet", func(t *testing.T, p string) { os.Remove(p) }, "fake-bow", "no index"},
		{"another embedder", func(t *testing.T, p string) {}, "fake-other", "fake-other"},
		{"another schema", func(t *testing.T, p string) {
			db, err := openSQLite(p, false)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`UPDATE meta SET value = '0' WHERE key = 'schema_version'`); err != nil {
				t.Fatal(err)
			}
		}, "fake-bow", "schema"},
		{"garbage file", func(t *testing.T, p string) {
			if err := os.WriteFile(p, bytes.Repeat([]byte("garbage!"), 1000), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "fake-bow", "unreadable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vault, dbPath := newFixture(t)
			build(t, newFake(), vault, dbPath, false)
			tc.prep(t, dbPath)
			emb := newFake()
			emb.ModelName = tc.emb
			rep := build(t, emb, vault, dbPath, true)
			if rep.Mode != "full" || !strings.Contains(rep.Fallback, tc.reason) {
				t.Errorf("mode %q, fallback %q; want full because of %q", rep.Mode, rep.Fallback, tc.reason)
			}
			// The embedding cache beside the index outlives it: the same
			// embedder reuses every vector, another one (the model is in
			// the key) embeds every chunk.
			wantEmbedded := 0
			if tc.emb != "fake-bow" {
				wantEmbedded = fixtureChunks
			}
			if rep.Embedded != wantEmbedded || rep.Embedded+rep.Reused != fixtureChunks || rep.Notes != fixtureNotes {
				t.Errorf("report %+v, want %d chunks embedded, the rest reused", rep, wantEmbedded)
			}
			d := open(t, dbPath)
			if got := d.Embedder(); got != tc.emb {
				t.Errorf("index embedder = %q, want %q", got, tc.emb)
			}
			if st, err := d.Stats(ctx); err != nil || st.Notes != fixtureNotes {
				t.Errorf("stats = %+v, %v", st, err)
			}
		})
	}
}

func TestBuildSwapsAtomically(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	old := open(t, dbPath)
	if old.Stale() {
		t.Fatal("a fresh index is stale")
	}

	vaulttest.WriteTree(t, vault, map[string]string{"pelican.md": "# Pelican\na pelican note\n"}, testTime)
	build(t, newFake(), vault, dbPath, false)

	entries, _ := os.ReadDir(filepath.Dir(dbPath))
	for _, e := range entries {
		if e.Name() != "vault.db" && e.Name() != "vault.db"+CacheSuffix && e.Name() != "vault.db"+LockSuffix {
			t.Errorf("left beside the index: %s", e.Name())
		}
	}
	if _, running, err := RunningBuild(dbPath); err != nil || running {
		t.Errorf("after the build, RunningBuild = %v, %v; want no build", running, err)
	}
	// The rebuild was copied into the file the old handle holds open: the
	// handle says so, and answers (whole) from the new build.
	if !old.Stale() {
		t.Error("the index opened before the rebuild is not stale")
	}
	st, err := old.Stats(ctx)
	if err != nil {
		t.Fatalf("the old handle stopped answering: %v", err)
	}
	if st.Notes != fixtureNotes+1 {
		t.Errorf("old handle sees %d notes, want the new %d", st.Notes, fixtureNotes+1)
	}
	if got := keywordPaths(t, old, `"pelican"`, Filter{}); !reflect.DeepEqual(got, []string{"pelican.md"}) {
		t.Errorf("old handle search = %v, want pelican.md", got)
	}

	fresh := open(t, dbPath)
	if fresh.Stale() {
		t.Error("the new index is stale")
	}
	if got := keywordPaths(t, fresh, `"pelican"`, Filter{}); !reflect.DeepEqual(got, []string{"pelican.md"}) {
		t.Errorf("new index search = %v, want pelican.md", got)
	}
}

func TestBuildFailureKeepsIndex(t *testing.T) {
	// 300 one-chunk notes: three embedder calls of up to 128 texts.
	notes, edited := map[string]string{}, map[string]string{}
	for i := range 300 {
		p := fmt.Sprintf("n%03d.md", i)
		notes[p] = fmt.Sprintf("# Note %d\nword%d\n", i, i)
		edited[p] = notes[p] + "edited\n" // every note changes: both kinds of build embed 300 texts
	}
	base := t.TempDir()
	vaulttest.WriteTree(t, base, notes, testTime)
	basePath := filepath.Join(t.TempDir(), "base.db")
	build(t, newFake(), base, basePath, false)
	before, err := os.ReadFile(basePath)
	if err != nil {
		t.Fatal(err)
	}
	vault := t.TempDir()
	vaulttest.WriteTree(t, vault, edited, testTime)

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name        string
		incremental bool
		failAfter   int
		ctx         context.Context
	}{
		{"full, embedder fails on the second call", false, 1, context.Background()},
		{"full, embedder fails on the first call", false, 0, context.Background()},
		{"incremental, embedder fails on the third call", true, 2, context.Background()},
		{"full, canceled", false, -1, canceled},
		{"incremental, canceled", true, -1, canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "vault.db")
			if err := os.WriteFile(dbPath, before, 0o644); err != nil {
				t.Fatal(err)
			}
			emb := newFake()
			emb.failAfter = tc.failAfter
			// Force: the index copied in was built from the base vault.
			_, err = Build(tc.ctx, emb, BuildOptions{VaultPath: vault, DBPath: dbPath, Incremental: tc.incremental, Force: true})
			if err == nil {
				t.Fatal("Build succeeded, want an error")
			}
			if tc.failAfter >= 0 && emb.calls != tc.failAfter+1 {
				t.Errorf("embedder called %d times, want %d", emb.calls, tc.failAfter+1)
			}
			after, err := os.ReadFile(dbPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("a failed build changed the index file")
			}
			entries, _ := os.ReadDir(filepath.Dir(dbPath))
			for _, e := range entries {
				if e.Name() != "vault.db" && e.Name() != "vault.db"+CacheSuffix && e.Name() != "vault.db"+LockSuffix {
					t.Errorf("left beside the index: %s", e.Name())
				}
			}
			d := open(t, dbPath)
			if st, err := d.Stats(context.Background()); err != nil || st.Notes != 300 {
				t.Errorf("the index after a failed build: %+v, %v", st, err)
			}
			if got := keywordPaths(t, d, `"edited"`, Filter{}); got != nil {
				t.Errorf("the failed build's content is visible: %d notes", len(got))
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	vault, good := newFixture(t)
	build(t, newFake(), vault, good, false)
	real, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := func(name string, content []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	foreign := filepath.Join(dir, "foreign.db")
	db, err := openSQLite(foreign, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE stuff(x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	oldSchema := file("old-schema.db", real)
	if db, err := openSQLite(oldSchema, false); err != nil {
		t.Fatal(err)
	} else {
		if _, err := db.Exec(`UPDATE meta SET value = '0' WHERE key = 'schema_version'`); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	// Damage the middle of a copy: page contents, not the header.
	damaged := append([]byte(nil), real...)
	for i := len(damaged) / 3; i < len(damaged)/3+8192; i++ {
		damaged[i] = 0xA5
	}

	withMarker := func(p string) string {
		if err := setDirty(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "nope.db"), ErrNoIndex},
		{"garbage", file("garbage.db", bytes.Repeat([]byte("not a database "), 500)), ErrCorrupt},
		{"empty file", file("empty.db", nil), ErrCorrupt},
		{"header only", file("header.db", real[:100]), ErrCorrupt},
		{"truncated to half", file("half.db", real[:len(real)/2]), ErrCorrupt},
		{"damaged pages, a writer died", withMarker(file("damaged.db", damaged)), ErrCorrupt},
		{"another SQLite file", foreign, ErrCorrupt},
		{"another schema version", oldSchema, ErrCorrupt},
		{"a folder", dir, ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(ctx, tc.path)
			if err == nil {
				d.Close()
				t.Fatalf("Open(%s) succeeded, want %v", tc.name, tc.want)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("Open = %v, want it to wrap %v", err, tc.want)
			}
			if tc.want == ErrCorrupt && errors.Is(err, ErrNoIndex) {
				t.Errorf("Open = %v, also wraps ErrNoIndex", err)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name the file", err)
			}
			if d != nil {
				t.Error("Open returned a DB with an error")
			}
		})
	}

	// The good index still opens.
	d := open(t, good)
	if st, err := d.Stats(ctx); err != nil || st.Notes != fixtureNotes {
		t.Errorf("good index: %+v, %v", st, err)
	}
}

// Three notes share a byte-identical section; a word only in it scores the
// same in all three, and the order is the chunk ids', every time. The titles
// have the same length: FTS5's bm25 takes the row length over every column,
// and the title is a column of the row.
func TestKeywordExactTies(t *testing.T) {
	ctx := context.Background()
	conventions := "## Conventions\nFiles use kebab-case names; the flibbertigibbet rule applies to every folder.\n"
	vault := t.TempDir()
	vaulttest.WriteTree(t, vault, map[string]string{
		"one.md":   "# One\nA short intro.\n\n" + conventions,
		"three.md": "# Three\nA much longer introduction with many more words in it than the others.\n\n## Extra\nmore\n\n" + conventions + "\n## Tail\nend\n",
		"two.md":   "# Two\n" + conventions,
		"zz.md":    "# Unrelated\nno such word here\n",
	}, testTime)
	dbPath := filepath.Join(t.TempDir(), "vault.db")
	build(t, newFake(), vault, dbPath, false)

	var first []Hit
	for run := range 3 {
		d := open(t, dbPath)
		for i := range 10 {
			hits, err := d.Keyword(ctx, KeywordQuery{Match: `"flibbertigibbet"`, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if run == 0 && i == 0 {
				first = hits
				if len(hits) != 3 {
					t.Fatalf("%d hits, want 3: %+v", len(hits), hits)
				}
				chunks, err := d.Chunks(ctx, []int64{hits[0].ChunkID, hits[1].ChunkID, hits[2].ChunkID})
				if err != nil {
					t.Fatal(err)
				}
				for j, h := range hits {
					if chunks[h.ChunkID].Heading != "Conventions" {
						t.Errorf("hit %d is chunk %q, want the Conventions section", j, chunks[h.ChunkID].Heading)
					}
					if h.Score != hits[0].Score {
						t.Errorf("hit %d score %v, want the exact tie %v", j, h.Score, hits[0].Score)
					}
					if j > 0 && h.ChunkID <= hits[j-1].ChunkID {
						t.Errorf("hits not in chunk-id order: %+v", hits)
					}
				}
				continue
			}
			if !reflect.DeepEqual(hits, first) {
				t.Fatalf("run %d/%d: %+v, first %+v", run, i, hits, first)
			}
		}
		// A rebuild of the same vault answers the same.
		build(t, newFake(), vault, dbPath, false)
	}
	if hits := first; len(hits) == 3 {
		if got := keywordPaths(t, open(t, dbPath), `"flibbertigibbet"`, Filter{}); !reflect.DeepEqual(got, []string{"one.md", "three.md", "two.md"}) {
			t.Errorf("paths = %v, want one, three, two (note id order)", got)
		}
		d := open(t, dbPath)
		two, err := d.Keyword(ctx, KeywordQuery{Match: `"flibbertigibbet"`, Limit: 2})
		if err != nil || !reflect.DeepEqual(two, first[:2]) {
			t.Errorf("limit 2 = %+v, %v; want the first two %+v", two, err, first[:2])
		}
	}
}
