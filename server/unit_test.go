package server

import (
	"context"
	"encoding/json"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
)

// These tests need no model: they run wherever the package builds.

// TestForeignScript: an item mostly in a script the embedder was not trained
// on is named by that script; one mostly in a script it reads is not.
func TestForeignScript(t *testing.T) {
	en := models.Spec{Name: "en", Scripts: []string{"Latin"}}
	zh := models.Spec{Name: "zh", Scripts: []string{"Han", "Latin"}}
	for _, tc := range []struct {
		text string
		spec models.Spec
		want string
	}{
		{"Idempotency keys must be stable.", en, ""},
		{"Идемпотентность означает одно и то же.", en, "Cyrillic"},
		{"Ключи: idempotency keys must be stable across runs", en, ""}, // 5 of 41 letters
		{"Ключи идемпотентности: stable keys", en, "Cyrillic"},
		{"1234 — !!", en, ""},
		{"", en, ""},
		{"从印象笔记导入笔记", en, "Han"},
		{"从印象笔记导入笔记", zh, ""},
		{"Импорт из Evernote", zh, "Cyrillic"},
		{"Any text at all", models.Spec{Name: "any"}, ""}, // a model naming no scripts reads any
	} {
		if got := foreignScript(tc.text, tc.spec); got != tc.want {
			t.Errorf("foreignScript(%q, %s) = %q, want %q", tc.text, tc.spec.Name, got, tc.want)
		}
	}
}

func TestCheckArgs(t *testing.T) {
	tool := mcp.NewTool("t", mcp.WithString("a"), mcp.WithInteger("b"))
	if _, err := checkArgs(tool, map[string]any{"a": "x", "b": 1}); err != nil {
		t.Errorf("declared parameters: %v", err)
	}
	if _, err := checkArgs(tool, nil); err != nil {
		t.Errorf("no arguments: %v", err)
	}
	_, err := checkArgs(tool, map[string]any{"a": "x", "zz": 1, "c": 2})
	if err == nil || !strings.Contains(err.Error(), `unknown parameters "c", "zz"`) || !strings.Contains(err.Error(), "parameters a, b") {
		t.Errorf("unknown parameters: %v", err)
	}
	if _, err := checkArgs(tool, []any{1}); err == nil {
		t.Error("an array is not an arguments object")
	}
	a := args{m: map[string]any{"k": 2.0, "f": 2.5, "s": "x", "big": 1e20}}
	if v, err := a.integer("k", 1, 3, 0); v != 2 || err != nil {
		t.Errorf("integer: %v %v", v, err)
	}
	for _, name := range []string{"f", "s", "big"} {
		if _, err := a.integer(name, 1, 3, 0); err == nil {
			t.Errorf("integer(%s) accepted %v", name, a.m[name])
		}
	}
}

// TestDecodeSearchArgs: vault_search's arguments decode into searchArgs as
// its schema declares them, every field from a parameter it declares, the
// defaults kept for those not given.
func TestDecodeSearchArgs(t *testing.T) {
	decode := func(m map[string]any) (searchArgs, error) {
		a, err := checkArgs(searchDef(nil, true), m)
		if err != nil {
			t.Fatal(err)
		}
		p := searchArgs{K: DefaultK}
		return p, a.decode(&p)
	}
	p, err := decode(map[string]any{"query": "q", "keywords": "kw", "hypothetical_answer": "ans", "k": 7, "path": "a/", "topics": []any{"x"},
		"explain": true, "related": true, "detail": "brief", "sort": SortDate, "now": "2026-03-01", "config": "keyword"})
	want := searchArgs{Query: "q", Keywords: "kw", Answer: "ans", K: 7, Filter: index.Filter{PathPrefix: "a/", Topics: []string{"x"}},
		Explain: true, Related: true, Detail: detailArg(pipeline.DetailBrief), Sort: SortDate,
		Now: clockArg{Time: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), given: true}, Config: "keyword"}
	if err != nil || !reflect.DeepEqual(p, want) {
		t.Errorf("decoded %+v, %v\nwant %+v", p, err, want)
	}
	p, err = decode(map[string]any{"query": "q", "k": nil})
	if want := (searchArgs{Query: "q", K: DefaultK, Detail: detailArg(pipeline.DetailPassage)}); err != nil || !reflect.DeepEqual(p, want) {
		t.Errorf("only a query: %+v, %v; want the defaults %+v", p, err, want)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": "q", "sort": "size"}, `parameter "sort" is "size": it takes "relevance", "date" or "date_desc"`},
		{map[string]any{"query": "q", "k": 51}, `parameter "k" is 51, outside 1..50`},
		{map[string]any{"query": "q", "explain": "yes"}, `parameter "explain" must be true or false, not a string`},
		{map[string]any{"query": "q", "now": "yesterday"}, `parameter "now" is "yesterday", neither RFC 3339 (2026-03-01T12:00:00Z) nor YYYY-MM-DD`},
		// The first parameter in searchArgs' order is the one refused.
		{map[string]any{"query": " ", "k": 51}, `parameter "query" is empty`},
		{map[string]any{"query": "q", "k": 0, "sort": "x"}, `parameter "k" is 0, outside 1..50`},
		{map[string]any{"query": "q", "detail": "full", "sort": 3}, `bad query: detail "full" is not brief, passage or section`},
	} {
		if _, err := decode(tc.args); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %s", tc.args, err, tc.want)
		}
	}

	// A struct that does not match the schema is refused, naming the field.
	tool := mcp.NewTool("t", mcp.WithString("s"), mcp.WithInteger("n"), mcp.WithBoolean("b"))
	a, err := checkArgs(tool, map[string]any{"s": "x", "n": 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dst  any
		want string
	}{
		{&struct {
			X string `arg:"x"`
		}{}, `t: field X reads parameter "x", which the tool does not declare`},
		{&struct {
			N int `arg:"n"`
		}{}, `t: integer parameter "n" has no minimum and maximum`},
		{&struct {
			S int `arg:"s"`
		}{}, `t: parameter "s", of type string, cannot be read into a int`},
		{&struct {
			B string `arg:"b"`
		}{}, `t: parameter "b", of type boolean, cannot be read into a string`},
	} {
		if err := a.decode(tc.dst); err == nil || err.Error() != tc.want {
			t.Errorf("decode into %T: %v, want %s", tc.dst, err, tc.want)
		}
	}
	if got := quoteChoices([]string{"a"}) + "|" + quoteChoices([]string{"a", "b"}); got != `"a"|"a" or "b"` {
		t.Errorf("quoteChoices: %s", got)
	}
}

func TestHostAndOrigin(t *testing.T) {
	s := &Server{opts: Options{Addr: "127.0.0.1:8848", AllowedHosts: []string{"notes.internal"}, AllowedOrigins: []string{"https://app.example"}}}
	s.boundPort.Store(8848)
	for host, ok := range map[string]bool{
		"127.0.0.1:8848": true, "localhost:8848": true, "LOCALHOST:8848": true, "[::1]:8848": true, "notes.internal:8848": true,
		"127.0.0.1:8849": false, "evil.example:8848": false, "localhost": false, "": false, "127.0.0.1.evil.example:8848": false,
	} {
		if why := s.badHost(host); (why == "") != ok {
			t.Errorf("Host %q: refused=%q, want ok=%v", host, why, ok)
		}
	}
	for origin, ok := range map[string]bool{
		"http://localhost:5173": true, "https://127.0.0.1": true, "http://[::1]:3000": true, "https://app.example": true,
		"http://localhost.evil.example": false, "null": false, "file://": false, "http://evil.example": false,
		"chrome-extension://abc": false, "http://user@localhost": false, "https://app.example.evil": false,
	} {
		if got := s.allowedOrigin(origin); got != ok {
			t.Errorf("Origin %q: allowed=%v, want %v", origin, got, ok)
		}
	}
	wild := &Server{opts: Options{Addr: "0.0.0.0:8848", Token: "t"}}
	if why := wild.badHost("192.168.1.5:8848"); why != "" {
		t.Errorf("a server on every interface (with a token) refused %q", why)
	}
}

// TestReindexerCoalescing drives the reindexer with a build held at a gate:
// callers arriving during a run share the one queued behind it.
func TestReindexerCoalescing(t *testing.T) {
	var mu sync.Mutex
	builds := 0
	g := newGate()
	joined := make(chan struct{}, 100)
	r := &reindexer{ctx: context.Background(), joined: joined, build: g.wrap(func(context.Context) (index.Report, error) {
		mu.Lock()
		defer mu.Unlock()
		builds++
		return index.Report{Counts: index.Counts{Notes: builds}}, nil
	})}
	const callers = 10
	seqs := make(chan int, callers)
	run := func() {
		res, err := r.Run(context.Background())
		if err != nil {
			seqs <- -1
			return
		}
		seqs <- res.seq*100 + res.rep.Notes // which run, and what its build returned
	}
	go run()
	<-joined
	<-g.started
	for i := 1; i < callers; i++ {
		go run()
	}
	for i := 1; i < callers; i++ {
		<-joined
	}
	close(g.open)
	got := map[int]int{}
	for i := 0; i < callers; i++ {
		got[<-seqs]++
	}
	if got[101] != 1 || got[202] != callers-1 || len(got) != 2 {
		t.Errorf("run×100+build per caller: %v; want run 1 (build 1) once and run 2 (build 2) %d times", got, callers-1)
	}
	r.close()
	if _, err := r.Run(context.Background()); err == nil {
		t.Error("a closed reindexer started a run")
	}
}

// The watcher looks only at files the scanner would index: a lint report,
// a template or a file in a hidden folder changing is no reason to reindex.
func TestSnapshotFollowsTheScanRules(t *testing.T) {
	root := t.TempDir()
	when := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	vaulttest.WriteTree(t, root, map[string]string{
		"a.md": "# a", "sub/b.MD": "# b", "lint-report-2026-03-01.md": "# lint", "templates/t.md": "# t",
		".obsidian/x.md": "# x", "sub/.hidden.md": "# h", "notes.txt": "text",
	}, when)
	if err := os.WriteFile(filepath.Join(root, "bad-\xff.md"), []byte("# bad"), 0o644); err != nil {
		t.Logf("this file system refuses a name that is not UTF-8 (%v); not checked", err)
	}
	snap, err := snapshot(t.Context(), root, vault.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(snap)), []string{"a.md", "sub/b.MD"}; !slices.Equal(got, want) {
		t.Errorf("snapshot watches %q, want %q", got, want)
	}
}

// The watcher honours the vault's exclusions as a build does (Obsidian's
// excluded files and templates folders, VAULT_RAG_EXCLUDE): a change to an
// excluded note is not seen, so it triggers no reindex; a change to an
// included one is; and a change to the exclusions is seen, since it changes
// which notes the index holds.
func TestSnapshotHonoursExclusions(t *testing.T) {
	root := t.TempDir()
	when := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	vaulttest.WriteTree(t, root, map[string]string{
		"a.md": "# a", "Archive/old.md": "# old", "Daily/2020-01-01.md": "# day", "drafts/d.md": "# draft",
		"tpl/t.md": "# t", "b.excalidraw.md": "# drawing",
		".obsidian/app.json":       `{"userIgnoreFilters": ["Archive/", "/\\.excalidraw\\.md$/"]}`,
		".obsidian/templates.json": `{"folder": "tpl"}`,
	}, when)
	opts := vault.ScanOptions{Exclude: []string{"drafts/**"}}
	look := func() map[string]stamp {
		t.Helper()
		snap, err := snapshot(t.Context(), root, opts)
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	before := look()
	if got, want := slices.Sorted(maps.Keys(before)), []string{"Daily/2020-01-01.md", "a.md"}; !slices.Equal(got, want) {
		t.Fatalf("snapshot watches %q, want %q", got, want)
	}
	listing, err := vault.List(t.Context(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	var built []string
	for _, f := range listing.Files {
		built = append(built, f.Path)
	}
	if got := slices.Sorted(maps.Keys(before)); !slices.Equal(got, built) {
		t.Errorf("the watcher watches %q, a build indexes %q", got, built)
	}

	later := when.Add(time.Hour)
	for _, rel := range []string{"Archive/old.md", "drafts/d.md", "tpl/t.md", "b.excalidraw.md"} {
		vaulttest.WriteTree(t, root, map[string]string{rel: "# edited, and longer than before"}, later)
	}
	if after := look(); !maps.Equal(before, after) {
		t.Errorf("editing excluded notes changed what the watcher sees: %v, then %v", before, after)
	}
	vaulttest.WriteTree(t, root, map[string]string{"a.md": "# a, edited"}, later)
	edited := look()
	if maps.Equal(before, edited) {
		t.Error("editing an included note went unseen")
	}
	vaulttest.WriteTree(t, root, map[string]string{".obsidian/app.json": `{"userIgnoreFilters": ["Archive/", "Daily/"]}`}, later)
	if got, want := slices.Sorted(maps.Keys(look())), []string{"a.md", "b.excalidraw.md"}; !slices.Equal(got, want) {
		t.Errorf("after a change to Obsidian's excluded files the watcher watches %q, want %q", got, want)
	}
}

// vault_read's and vault_list's answers keep their field names, order and
// omitted empties: the metadata is NoteMeta, embedded in place, and a
// listing's is the index's row without source.
func TestNoteAnswersJSON(t *testing.T) {
	meta := NoteMeta{Type: "knowledge", Date: "2025-01-02", Modified: "2025-03-04", Project: "p", Status: "s", Source: "src", Topics: []string{"x"}}
	imeta := index.NoteMeta{Type: "knowledge", Date: "2025-01-02", Project: "p", Status: "s", Source: "src", Topics: []string{"x"}}
	mod := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"read, every field", ReadResult{Path: "a.md", Title: "A", NoteMeta: meta, Headings: []string{"## H"}, HeadingsMore: 2, Section: "A › H", OtherMatches: []string{"A › B › H"},
			Lines: "3-9", Content: "c", Offset: 5, NextOffset: new(6), TotalBytes: 9},
			`{"path":"a.md","title":"A","type":"knowledge","date":"2025-01-02","modified":"2025-03-04","project":"p","status":"s","source":"src","topics":["x"],"headings":["## H"],"headings_more":2,"section":"A › H","other_matches":["A › B › H"],"lines":"3-9","content":"c","offset":5,"next_offset":6,"total_bytes":9}`},
		{"read, bare", ReadResult{Path: "a.md", Title: "A", NoteMeta: NoteMeta{Date: "2025-01-02"}},
			`{"path":"a.md","title":"A","date":"2025-01-02","content":"","offset":0,"total_bytes":0}`},
		{"list, every field", listNote(index.NoteRow{ID: 7, Path: "a.md", Title: "A", NoteMeta: imeta, DateSource: "frontmatter", Modified: mod, Warnings: []string{"w"}}),
			`{"path":"a.md","title":"A","type":"knowledge","date":"2025-01-02","modified":"2025-03-04","project":"p","status":"s","topics":["x"]}`},
		{"list, a date from the file name", listNote(index.NoteRow{Path: "2025-01-02-a.md", Title: "A", NoteMeta: index.NoteMeta{Date: "2025-01-02"}, DateSource: "filename", Modified: mod}),
			`{"path":"2025-01-02-a.md","title":"A","date":"2025-01-02","modified":"2025-03-04"}`},
		{"list, only a file time: no date", listNote(index.NoteRow{Path: "a.md", Title: "A", NoteMeta: index.NoteMeta{Date: "2025-03-04"}, DateSource: "mtime", Modified: mod}),
			`{"path":"a.md","title":"A","modified":"2025-03-04"}`},
	} {
		raw, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, raw, tc.want)
		}
	}
}
