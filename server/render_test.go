package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/index"
)

func TestSearchText(t *testing.T) {
	r := SearchResult{Config: "shipping", Notes: []SearchNote{
		{Rank: 1, Path: "ops/db/vacuum.md", Title: "Nightly vacuum <slow> & stalls", NoteMeta: NoteMeta{Date: "2024-03-02", Topics: []string{"db"}},
			Match:    Match{Ranks: map[string]int{"keyword": 1}, Missing: []string{"the"}},
			Passages: []PassageText{{Heading: "Vacuum › Night runs", Text: "Autovacuum ran at 02:00 and held locks.", More: true}, {Text: "Second."}},
			Related:  []Link{{Path: "ops/db/locks.md", Title: "Locks", Direction: "links to"}, {Path: "log.md", Direction: "linked from", Heading: "March"}}},
		{Rank: 2, Path: "guides/install-guide.md", Title: "Install guide", Match: Match{Ranks: map[string]int{"vector": 2}}},
		{Rank: 3, Path: "zfs_storage_planning.md", Title: "Robustness"},
	}}
	got := r.Text()
	want := "1. ops/db/vacuum.md — Nightly vacuum <slow> & stalls (2024-03-02)\n" +
		"§ Vacuum › Night runs\nAutovacuum ran at 02:00 and held locks. …\nSecond.\n" +
		"→ ops/db/locks.md\n← log.md § March\n\n" +
		"2. guides/install-guide.md\n\n3. zfs_storage_planning.md"
	if got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	raw, _ := json.Marshal(r)
	if len(got) >= len(raw)/2 {
		t.Errorf("the text (%d B) is not under half the JSON (%d B)", len(got), len(raw))
	}
	if s := (SearchResult{Notes: []SearchNote{}}).Text(); s != "No note found." {
		t.Errorf("no notes: %q", s)
	}
	if s := (SearchResult{Notes: []SearchNote{}, Degraded: []string{}}).Text(); s != "No note found." {
		t.Errorf("an empty degraded list: %q", s)
	}
	scoped := SearchResult{Notes: []SearchNote{}, Degraded: []string{"rerank: model not installed"}}.Text()
	if !strings.HasPrefix(scoped, `{"degraded":["rerank: model not installed"]}`) {
		t.Errorf("degraded: %q", scoped)
	}
	explained := SearchResult{Config: "x", Notes: []SearchNote{}, Stages: []StageInfo{{Stage: "keyword"}}}.Text()
	if !strings.HasPrefix(explained, `{"config":"x"`) {
		t.Errorf("with explain the text is the JSON: %q", explained)
	}
}

func TestReadGrepListText(t *testing.T) {
	next := 6000
	rd := ReadResult{Path: "a/b.md", Title: "B", Section: "Setup", Lines: "10-20", Headings: []string{"## Setup", "## Use"}, HeadingsMore: 2,
		Content: "x < y & z", NextOffset: &next, TotalBytes: 9000}
	if got, want := rd.Text(), "a/b.md\n§ Setup\nlines 10-20\nheadings: ## Setup | ## Use (+2)\n\nx < y & z\n\n[more: offset 6000 of 9000 bytes]"; got != want {
		t.Errorf("read:\n%s\nwant:\n%s", got, want)
	}
	g := GrepResult{Matches: 3, Notes: 2, Searched: 9, Complete: true, Truncated: true, Note: "Listed 2 of 3.", Results: []GrepNote{
		{Path: "a.md", Matches: 2, Lines: []GrepLine{{Line: 3, Heading: "A", Text: "one"}, {Line: 5, Heading: "A", Text: "two"}}},
		{Path: "b.md", Matches: 1},
	}}
	if got, want := g.Text(), "3 matching lines in 2 notes (9 searched)\nListed 2 of 3.\na.md\n§ A\n3:one\n5:two\nb.md (1)"; got != want {
		t.Errorf("grep:\n%s\nwant:\n%s", got, want)
	}
	l := ListResult{Total: 3, Offset: 0, Limit: 2, NextOffset: &[]int{2}[0], Notes: []ListNote{{Path: "x.md", Title: "X"}, {Path: "y.md", Title: "Y, why", NoteMeta: NoteMeta{Date: "2025-01-01"}}}}
	if got, want := l.Text(), "3 notes, 1-2 listed, next_offset 2\nx.md\ny.md — Y, why (2025-01-01)"; got != want {
		t.Errorf("list:\n%s\nwant:\n%s", got, want)
	}
}

func TestJSONTextKeepsMarkup(t *testing.T) {
	s, err := jsonText(map[string]string{"a": "<b> & c"})
	if err != nil || s != `{"a":"<b> & c"}` {
		t.Errorf("jsonText = %q, %v", s, err)
	}
}

// TestOutputSchema: each tool's outputSchema is valid JSON, an object whose
// required fields its answer always writes, with the type it writes them
// as.
func TestOutputSchema(t *testing.T) {
	for _, sp := range toolSpecs(nil) {
		var schema struct {
			Type       string                    `json:"type"`
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(sp.def.RawOutputSchema, &schema); err != nil || schema.Type != "object" {
			t.Fatalf("%s: outputSchema %s: %v", sp.def.Name, sp.def.RawOutputSchema, err)
		}
		raw, err := json.Marshal(reflect.New(sp.answer).Elem().Interface())
		if err != nil {
			t.Fatal(err)
		}
		var zero map[string]any
		if err := json.Unmarshal(raw, &zero); err != nil {
			t.Fatal(err)
		}
		for _, name := range schema.Required {
			v, ok := zero[name]
			if !ok {
				t.Errorf("%s: required %q is not written by a zero answer", sp.def.Name, name)
				continue
			}
			typ := schema.Properties[name]["type"]
			if !typeAllows(typ, v) {
				t.Errorf("%s: %q is %T, the schema says %v", sp.def.Name, name, v, typ)
			}
		}
	}
}

func typeAllows(typ any, v any) bool {
	kind := map[string]bool{}
	switch tt := typ.(type) {
	case string:
		kind[tt] = true
	case []any:
		for _, x := range tt {
			kind[x.(string)] = true
		}
	}
	switch x := v.(type) {
	case nil:
		return kind["null"]
	case bool:
		return kind["boolean"]
	case float64:
		return kind["number"] || kind["integer"] && x == float64(int64(x))
	case string:
		return kind["string"]
	case []any:
		return kind["array"]
	case map[string]any:
		return kind["object"]
	}
	return false
}

func TestResolvePassageLinks(t *testing.T) {
	db, err := index.Open(t.Context(), fx.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	notes := []SearchNote{{Passages: []PassageText{{Text: "See [[backpressure]], ![[Retries-and-jitter#Jitter|jitter]], [[no such note]] and [[knowledge/operations/backpressure.md]]."}}}}
	resolvePassageLinks(t.Context(), db, notes)
	want := "See [[knowledge/operations/backpressure.md]], ![[knowledge/engineering/retries-and-jitter.md#Jitter|jitter]], [[no such note]] and [[knowledge/operations/backpressure.md]]."
	if got := notes[0].Passages[0].Text; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
