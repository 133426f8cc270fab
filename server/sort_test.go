package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/models/bow"
)

// datedNotes all mention the lighthouse. Five state a date (frontmatter or
// file name), two of them the same day; two state none, and their file
// times lie one before every stated date and one after, so an order by the
// file time would put one of them first either way.
var datedNotes = map[string]string{
	"a/old.md":             "---\ndate: 2023-05-01\n---\n# Old\n\nThe lighthouse keeper logs the lamp.\n",
	"b/new.md":             "---\ndate: 2025-09-09\n---\n# New\n\nThe lighthouse lamp was replaced.\n",
	"c/mid.md":             "---\ndate: 2024-07-07\n---\n# Mid\n\nA lighthouse storm report.\n",
	"f/same.md":            "---\ndate: 2024-07-07\n---\n# Same day\n\nThe lighthouse log of the same day.\n",
	"e/2022-01-15-trip.md": "# Trip\n\nWe walked to the lighthouse.\n",
	"d/undated.md":         "# Undated\n\nA lighthouse without a date.\n",
	"z/undated.md":         "# Also undated\n\nThe lighthouse lamp again, undated.\n",
}

var undatedTimes = map[string]time.Time{
	"d/undated.md": time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
	"z/undated.md": time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
}

// datedServer serves datedNotes indexed with bag-of-words vectors and
// searched with the keyword configuration: no model is needed.
func datedServer(t *testing.T) *Server {
	t.Helper()
	vaultPath, db := t.TempDir(), filepath.Join(t.TempDir(), "vault.db")
	vaulttest.WriteTree(t, vaultPath, datedNotes, fixedNow)
	for rel, mt := range undatedTimes {
		if err := os.Chtimes(filepath.Join(vaultPath, filepath.FromSlash(rel)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	emb := bow.Embedder{ModelName: models.DefaultEmbedder}
	if _, err := index.Build(context.Background(), emb, index.BuildOptions{VaultPath: vaultPath, DBPath: db}); err != nil {
		t.Fatal(err)
	}
	return newModelFreeServer(t, func(o *Options) {
		o.VaultPath, o.DBPath, o.ConfigName = vaultPath, db, "keyword"
		o.wrapEmbedder = func(index.Embedder) index.Embedder { return emb }
	})
}

// sortedNote is a note of vault_search's or vault_list's answer as these
// tests read it.
type sortedNote struct {
	Rank     int    `json:"rank"`
	Path     string `json:"path"`
	Date     string `json:"date"`
	Modified string `json:"modified"`
}

type sortedOut struct {
	Total      int          `json:"total"`
	NextOffset *int         `json:"next_offset"`
	Notes      []sortedNote `json:"notes"`
}

func notePaths(ns []sortedNote) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Path)
	}
	return out
}

func noteDates(ns []sortedNote) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Date)
	}
	return out
}

func TestSortSearch(t *testing.T) {
	s := datedServer(t)
	c := connectStdio(t, s)
	search := func(sort string) []sortedNote {
		t.Helper()
		args := map[string]any{"query": "lighthouse", "k": 10}
		if sort != "" {
			args["sort"] = sort
		}
		var out sortedOut
		callOK(t, c, ToolSearch, args, &out)
		if len(out.Notes) != len(datedNotes) {
			t.Fatalf("sort %q: %d notes %v, want all %d", sort, len(out.Notes), notePaths(out.Notes), len(datedNotes))
		}
		return out.Notes
	}

	for _, sort := range []string{"", SortRelevance} {
		notes := search(sort)
		for i, n := range notes {
			if n.Rank != i+1 {
				t.Errorf("sort %q: %s at %d has rank %d, want relevance order", sort, n.Path, i+1, n.Rank)
			}
		}
	}

	byRank := search("")
	for _, tc := range []struct {
		sort  string
		dates []string
	}{
		{SortDate, []string{"2022-01-15", "2023-05-01", "2024-07-07", "2024-07-07", "2025-09-09", "", ""}},
		{SortDateDesc, []string{"2025-09-09", "2024-07-07", "2024-07-07", "2023-05-01", "2022-01-15", "", ""}},
	} {
		notes := search(tc.sort)
		if got := noteDates(notes); !slices.Equal(got, tc.dates) {
			t.Errorf("sort %s: dates %q (%v), want %q", tc.sort, got, notePaths(notes), tc.dates)
		}
		// Undated notes come last whatever their file time; they and the
		// notes of one day keep their relevance order; rank stays the
		// relevance rank.
		last := notePaths(notes[len(notes)-2:])
		slices.Sort(last)
		if !slices.Equal(last, []string{"d/undated.md", "z/undated.md"}) {
			t.Errorf("sort %s: last two %v, want the undated notes", tc.sort, last)
		}
		for i := 1; i < len(notes); i++ {
			if notes[i].Date == notes[i-1].Date && notes[i].Rank < notes[i-1].Rank {
				t.Errorf("sort %s: %s (rank %d) after %s (rank %d) of the same date", tc.sort, notes[i].Path, notes[i].Rank, notes[i-1].Path, notes[i-1].Rank)
			}
		}
		for _, n := range notes {
			if want := byRank[n.Rank-1].Path; n.Path != want {
				t.Errorf("sort %s: %s carries rank %d, which is %s's", tc.sort, n.Path, n.Rank, want)
			}
			if n.Date == "" && n.Modified == "" {
				t.Errorf("sort %s: %s has neither a date nor a modified day", tc.sort, n.Path)
			}
		}
	}

	msg := callErr(t, c, ToolSearch, map[string]any{"query": "lighthouse", "sort": "sideways"})
	for _, w := range []string{`"sort"`, `"sideways"`, `"relevance"`, `"date"`, `"date_desc"`} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal %q does not name %s", msg, w)
		}
	}
}

func TestSortList(t *testing.T) {
	s := datedServer(t)
	c := connectStdio(t, s)
	list := func(args map[string]any) sortedOut {
		t.Helper()
		var out sortedOut
		callOK(t, c, ToolList, args, &out)
		return out
	}
	byPath := []string{"a/old.md", "b/new.md", "c/mid.md", "d/undated.md", "e/2022-01-15-trip.md", "f/same.md", "z/undated.md"}
	for _, tc := range []struct {
		sort string
		want []string
	}{
		{"", byPath},
		{"path", byPath},
		{SortDate, []string{"e/2022-01-15-trip.md", "a/old.md", "c/mid.md", "f/same.md", "b/new.md", "d/undated.md", "z/undated.md"}},
		{SortDateDesc, []string{"b/new.md", "c/mid.md", "f/same.md", "a/old.md", "e/2022-01-15-trip.md", "d/undated.md", "z/undated.md"}},
	} {
		args := map[string]any{}
		if tc.sort != "" {
			args["sort"] = tc.sort
		}
		out := list(args)
		if got := notePaths(out.Notes); !slices.Equal(got, tc.want) || out.Total != len(tc.want) {
			t.Errorf("sort %q: %v (total %d), want %v", tc.sort, got, out.Total, tc.want)
		}
		for _, n := range out.Notes {
			if strings.Contains(n.Path, "undated") && n.Date != "" {
				t.Errorf("sort %q: %s states no date, yet lists %s", tc.sort, n.Path, n.Date)
			}
		}
	}

	// Pages of one order follow each other.
	first := list(map[string]any{"sort": SortDateDesc, "limit": 4})
	if first.NextOffset == nil || *first.NextOffset != 4 {
		t.Fatalf("first page: next offset %v, want 4", first.NextOffset)
	}
	rest := list(map[string]any{"sort": SortDateDesc, "limit": 4, "offset": 4})
	if got := append(notePaths(first.Notes), notePaths(rest.Notes)...); !slices.Equal(got, []string{"b/new.md", "c/mid.md", "f/same.md", "a/old.md", "e/2022-01-15-trip.md", "d/undated.md", "z/undated.md"}) || rest.NextOffset != nil {
		t.Errorf("two pages: %v, next offset %v", got, rest.NextOffset)
	}
	// The order applies within a filter.
	if got := notePaths(list(map[string]any{"sort": SortDate, "date_from": "2024-01-01", "date_to": "2025-12-31"}).Notes); !slices.Equal(got, []string{"c/mid.md", "f/same.md", "b/new.md"}) {
		t.Errorf("filtered by date, sorted by date: %v", got)
	}

	for _, bad := range []string{"sideways", SortRelevance} {
		msg := callErr(t, c, ToolList, map[string]any{"sort": bad})
		for _, w := range []string{`"sort"`, `"` + bad + `"`, `"path"`, `"date"`, `"date_desc"`} {
			if !strings.Contains(msg, w) {
				t.Errorf("refusal of %q: %q does not name %s", bad, msg, w)
			}
		}
	}
}

func TestSortNotesUnit(t *testing.T) {
	mk := func(spec ...string) []SearchNote {
		var out []SearchNote
		for i := 0; i < len(spec); i += 2 {
			n := SearchNote{Rank: len(out) + 1, Path: spec[i]}
			n.Date = spec[i+1]
			out = append(out, n)
		}
		return out
	}
	paths := func(ns []SearchNote) string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Path)
		}
		return strings.Join(out, " ")
	}
	in := func() []SearchNote {
		return mk("u1", "", "b", "2024-02-01", "a", "2023-01-01", "u2", "", "c", "2024-02-01")
	}
	for order, want := range map[string]string{
		"":            "u1 b a u2 c",
		SortRelevance: "u1 b a u2 c",
		SortDate:      "a b c u1 u2",
		SortDateDesc:  "b c a u1 u2",
	} {
		ns := in()
		sortNotes(ns, order)
		if got := paths(ns); got != want {
			t.Errorf("sortNotes(%q) = %s, want %s", order, got, want)
		}
	}
}

func TestFlatAdvice(t *testing.T) {
	empty := index.Facet{}
	folders := func(without int, values ...index.FacetValue) index.Facet {
		return index.Facet{Values: values, Without: without}
	}
	flat := func(f index.Facet) map[string]index.Facet {
		return map[string]index.Facet{index.FacetType: empty, index.FacetProject: empty, index.FacetStatus: empty, index.FacetTopics: empty, index.FacetFolders: f}
	}
	with := func(m map[string]index.Facet, name string, f index.Facet) map[string]index.Facet {
		out := map[string]index.Facet{}
		for k, v := range m {
			out[k] = v
		}
		if f.Values == nil && f.Without == 0 {
			delete(out, name)
		} else {
			out[name] = f
		}
		return out
	}
	valued := index.Facet{Values: []index.FacetValue{{Value: "x", Notes: 1}}, Without: 9}
	cases := []struct {
		name   string
		notes  int
		facets map[string]index.Facet
		want   []string // substrings of the advice; nil: no advice
	}{
		{"an empty vault", 0, flat(folders(0)), nil},
		{"all at the top level", 10, flat(folders(8, index.FacetValue{Value: "misc/", Notes: 2})), []string{"8 of 10 notes sit at the top level", "no note has topics", "vault_search", "vault_grep", "titles"}},
		{"most in one folder", 10, flat(folders(1, index.FacetValue{Value: "inbox/", Notes: 7}, index.FacetValue{Value: "misc/", Notes: 2})), []string{"7 of 10 notes sit in inbox/"}},
		{"exactly half in one place", 10, flat(folders(5, index.FacetValue{Value: "a/", Notes: 5})), []string{"5 of 10 notes sit at the top level"}},
		{"spread over folders", 10, flat(folders(1, index.FacetValue{Value: "a/", Notes: 3}, index.FacetValue{Value: "b/", Notes: 3}, index.FacetValue{Value: "c/", Notes: 3})), nil},
		{"just under half", 9, flat(folders(4, index.FacetValue{Value: "a/", Notes: 3}, index.FacetValue{Value: "b/", Notes: 2})), nil},
		{"topics on some notes", 10, with(flat(folders(9)), index.FacetTopics, index.Facet{Values: []index.FacetValue{{Value: "ops", Notes: 6}}, Without: 4}), []string{"6 of 10 notes have topics"}},
		{"a type on some note", 10, with(flat(folders(9)), index.FacetType, valued), nil},
		{"a project on some note", 10, with(flat(folders(9)), index.FacetProject, valued), nil},
		{"a status on some note", 10, with(flat(folders(9)), index.FacetStatus, valued), nil},
		{"type not asked for", 10, with(flat(folders(9)), index.FacetType, index.Facet{}), nil},
		{"folders not asked for", 10, with(flat(folders(9)), index.FacetFolders, index.Facet{}), nil},
		{"no facets asked for", 10, map[string]index.Facet{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := flatAdvice(OverviewResult{Notes: c.notes}, c.facets)
			if c.want == nil {
				if got != "" {
					t.Errorf("advice %q, want none", got)
				}
				return
			}
			if got == "" {
				t.Fatal("no advice")
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("advice %q lacks %q", got, w)
				}
			}
		})
	}
}

// TestOverviewAdviceOnFlatVault: the overview tool gives the advice on a
// vault of top-level notes without metadata, and none on one with types.
func TestOverviewAdviceOnFlatVault(t *testing.T) {
	flatNotes := map[string]string{
		"one.md":      "# One\n\nFirst note.\n",
		"two.md":      "# Two\n\nSecond note.\n",
		"three.md":    "# Three\n\nThird note.\n",
		"sub/four.md": "# Four\n\nFourth note.\n",
	}
	typed := map[string]string{
		"one.md":      "---\ntype: reference\n---\n# One\n\nFirst note.\n",
		"two.md":      "# Two\n\nSecond note.\n",
		"sub/four.md": "# Four\n\nFourth note.\n",
	}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		advice string
	}{
		{"flat", flatNotes, "3 of 4 notes sit at the top level"},
		{"typed", typed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := bowServer(t, tc.files, nil)
			c := connectStdio(t, s)
			var out struct {
				Advice string `json:"advice"`
			}
			callOK(t, c, ToolOverview, nil, &out)
			if (tc.advice == "") != (out.Advice == "") || !strings.Contains(out.Advice, tc.advice) {
				t.Errorf("advice %q, want %q", out.Advice, tc.advice)
			}
			// Without the facets, no advice.
			var none struct {
				Advice string `json:"advice"`
			}
			callOK(t, c, ToolOverview, map[string]any{"facets": []any{}}, &none)
			if none.Advice != "" {
				t.Errorf("advice %q with no facets asked for", none.Advice)
			}
		})
	}
}
