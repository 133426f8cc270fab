package index

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// buildOverviewVault writes a vault and opens its index.
func buildOverviewVault(t *testing.T, files map[string]string) *DB {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	root, dbPath := filepath.Join(dir, "vault"), filepath.Join(dir, "vault.db")
	vaulttest.WriteTree(t, root, files, testTime)
	if _, err := Build(ctx, newFake(), BuildOptions{VaultPath: root, DBPath: dbPath}); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestFacets(t *testing.T) {
	ctx := context.Background()
	note := func(fm string) string {
		return "---\n" + fm + "\n---\n# Note\n\nThe lease is renewed before it expires, and the holder keeps it.\n"
	}
	db := buildOverviewVault(t, map[string]string{
		"sessions/a.md":       note("type: Session\nproject: Orchard\nstatus: done\ntopics: [leases, Storage]\ndate: 2024-03-01"),
		"sessions/b.md":       note("type: session\nproject: orchard\ntopics: [leases, leases]\ndate: 2025-01-02"),
		"sessions/deep/c.md":  note("type: session\nproject: ferrite\ntopics: '#storage'"),
		"knowledge/d.md":      note("type: knowledge\ntopics: [idempotency]"),
		"2023-05-06 daily.md": "# Daily\n\nA note at the top level, dated by its name.\n",
		"知识/e.md":             note("type: knowledge"),
	})
	all, err := db.Facets(ctx, nil, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Facet{
		FacetType:    {Values: []FacetValue{{"session", 3}, {"knowledge", 2}}, Without: 1},
		FacetProject: {Values: []FacetValue{{"orchard", 2}, {"ferrite", 1}}, Without: 3},
		FacetStatus:  {Values: []FacetValue{{"done", 1}}, Without: 5},
		// b lists leases twice: one note.
		FacetTopics:  {Values: []FacetValue{{"leases", 2}, {"storage", 2}, {"idempotency", 1}}, Without: 2},
		FacetFolders: {Values: []FacetValue{{"sessions/", 3}, {"knowledge/", 1}, {"知识/", 1}}, Without: 1},
	}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("facets:\n got %+v\nwant %+v", all, want)
	}

	// A limit keeps the values with the most notes and says how many more.
	some, err := db.Facets(ctx, []string{FacetTopics, FacetFolders, FacetTopics}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(some) != 2 || !reflect.DeepEqual(some[FacetTopics], Facet{Values: []FacetValue{{"leases", 2}}, More: 2, Without: 2}) ||
		!reflect.DeepEqual(some[FacetFolders], Facet{Values: []FacetValue{{"sessions/", 3}}, More: 2, Without: 1}) {
		t.Errorf("limit 1: %+v", some)
	}

	var unknown *UnknownFacetError
	if _, err := db.Facets(ctx, []string{"tags"}, 5); !errors.As(err, &unknown) || unknown.Name != "tags" {
		t.Errorf("unknown facet: %v", err)
	} else if msg := err.Error(); msg != `unknown facet "tags" (the facets are type, project, status, topics, folders)` {
		t.Errorf("unknown facet message: %q", msg)
	}

	dates, err := db.Dates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantDates := Dates{From: "2020-01-02", To: "2025-01-02", Sources: map[string]int{"frontmatter": 2, "filename": 1, "mtime": 3}}
	if !reflect.DeepEqual(dates, wantDates) {
		t.Errorf("dates %+v, want %+v", dates, wantDates)
	}
}

// TestFacetsBounded: a vault with many topics answers with the top ones and
// how many more there are.
func TestFacetsBounded(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("n%03d.md", i)] = fmt.Sprintf("---\ntopics: [t%03d, common]\n---\n# N%d\n\nText.\n", i, i)
	}
	db := buildOverviewVault(t, files)
	got, err := db.Facets(context.Background(), []string{FacetTopics}, 3)
	if err != nil {
		t.Fatal(err)
	}
	f := got[FacetTopics]
	want := []FacetValue{{"common", 300}, {"t000", 1}, {"t001", 1}}
	if !reflect.DeepEqual(f.Values, want) || f.More != 298 || f.Without != 0 {
		t.Errorf("topics: %+v, want %v and 298 more", f, want)
	}
}

func TestFacetsEmptyVault(t *testing.T) {
	ctx := context.Background()
	db := buildOverviewVault(t, map[string]string{"templates/t.md": "# Template\n"})
	got, err := db.Facets(ctx, nil, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range FacetNames {
		if f := got[name]; f.Values == nil || len(f.Values) != 0 || f.More != 0 || f.Without != 0 {
			t.Errorf("%s of an empty vault: %+v", name, f)
		}
	}
	dates, err := db.Dates(ctx)
	if err != nil || dates.From != "" || dates.To != "" || len(dates.Sources) != 0 {
		t.Errorf("dates of an empty vault: %+v, %v", dates, err)
	}
	if ls := db.Languages(); len(ls) != 0 || !db.HasLanguages() {
		t.Errorf("languages of an empty vault: %v (recorded: %v)", ls, db.HasLanguages())
	}
}

// TestLanguagesRecorded: a build records the vault's notes by language.
func TestLanguagesRecorded(t *testing.T) {
	zh := "# 同步\n\n同步功能可以在多台设备之间保持笔记一致。你可以在设置中选择要同步的文件夹和文件类型。\n"
	en := "# Sync\n\nSync keeps your notes the same on every device, and you can choose which folders are synced.\n"
	db := buildOverviewVault(t, map[string]string{"a.md": zh, "b.md": zh, "c.md": zh, "d.md": en})
	want := vault.Languages{{Name: "Chinese", Script: "Han", Notes: 3}, {Name: "English", Script: "Latin", Notes: 1}}
	if got := db.Languages(); !reflect.DeepEqual(got, want) {
		t.Errorf("languages %+v, want %+v", got, want)
	}
}

// TestTitles: every folder in path order with its notes' titles, a note
// counted in the folder it is directly in, both bounds kept and said.
func TestTitles(t *testing.T) {
	ctx := context.Background()
	db := buildOverviewVault(t, map[string]string{
		"top.md":             "# Top\n\nAt the top level.\n",
		"sessions/b.md":      "# beta run\n\nSecond.\n",
		"sessions/a.md":      "# Alpha run\n\nFirst.\n",
		"sessions/c.md":      "# Gamma run\n\nThird.\n",
		"sessions/deep/d.md": "# Deep one\n\nBelow.\n",
		"知识/e.md":            "# 知识笔记\n\n一个笔记。\n",
	})
	got, more, err := db.Titles(ctx, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []FolderTitles{
		{Folder: "", Notes: 1, Titles: []string{"Top"}},
		{Folder: "sessions/", Notes: 3, Titles: []string{"Alpha run", "beta run"}, More: 1},
		{Folder: "sessions/deep/", Notes: 1, Titles: []string{"Deep one"}},
		{Folder: "知识/", Notes: 1, Titles: []string{"知识笔记"}},
	}
	if !reflect.DeepEqual(got, want) || more != 0 {
		t.Errorf("titles:\n got %+v (%d more)\nwant %+v", got, more, want)
	}
	if got, more, err := db.Titles(ctx, 5, 2); err != nil || len(got) != 2 || got[1].Folder != "sessions/" || len(got[1].Titles) != 3 || more != 2 {
		t.Errorf("two folders: %+v, %d more (%v); want the first two and 2 more", got, more, err)
	}
}
