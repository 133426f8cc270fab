package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/models"
)

func TestToolsListed(t *testing.T) {
	s := newServer(t, nil)
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		required := map[string][]string{}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			required[tool.Name] = tool.InputSchema.Required
			if tool.InputSchema.AdditionalProperties != false {
				t.Errorf("%s: additionalProperties = %v, want false (strict schema)", tool.Name, tool.InputSchema.AdditionalProperties)
			}
			if tool.Description == "" {
				t.Errorf("%s has no description", tool.Name)
			}
		}
		slices.Sort(names)
		want := []string{ToolDelta, ToolGrep, ToolList, ToolOverview, ToolRead, ToolReindex, ToolSearch}
		if !slices.Equal(names, want) {
			t.Fatalf("tools = %v, want %v", names, want)
		}
		for _, tool := range res.Tools {
			if tool.Name != ToolSearch {
				continue
			}
			// The client's expansions: optional, and described so that the
			// calling model knows what to write (the keywords by example).
			for p, want := range map[string]string{"keywords": "E.g. ", "hypothetical_answer": "sentences"} {
				prop, _ := tool.InputSchema.Properties[p].(map[string]any)
				desc, _ := prop["description"].(string)
				if prop["type"] != "string" || slices.Contains(tool.InputSchema.Required, p) || !strings.Contains(desc, want) {
					t.Errorf("vault_search %s: schema %v, want an optional string whose description says %q", p, prop, want)
				}
			}
		}
		for tool, req := range map[string][]string{ToolSearch: {"query"}, ToolGrep: {"pattern"}, ToolRead: {"path"}, ToolDelta: {"items"}} {
			if !slices.Equal(required[tool], req) {
				t.Errorf("%s requires %v, want %v", tool, required[tool], req)
			}
		}
	})
}

// searchOut is vault_search's JSON as a client reads it.
type searchOut struct {
	Config string `json:"config"`
	Query  string `json:"query"`
	Now    string `json:"now"`
	Notes  []struct {
		Rank     int    `json:"rank"`
		Path     string `json:"path"`
		Title    string `json:"title"`
		Date     string `json:"date"`
		Modified string `json:"modified"`
		Match    struct {
			Ranks   map[string]int `json:"ranks"`
			Missing []string       `json:"missing"`
		} `json:"match"`
		Passages []struct {
			Heading string `json:"heading"`
			Text    string `json:"text"`
			More    bool   `json:"more"`
		} `json:"passages"`
		Explain []struct {
			Stage string `json:"stage"`
		} `json:"explain"`
		Related []struct {
			Path      string `json:"path"`
			Direction string `json:"direction"`
		} `json:"related"`
	} `json:"notes"`
	Stages []struct {
		Stage string `json:"stage"`
		Count int    `json:"count"`
		Info  string `json:"info"`
	} `json:"stages"`
	Scope *struct {
		Outcome string `json:"outcome"`
	} `json:"scope"`
	Degraded []string `json:"degraded"`
}

func TestSearch(t *testing.T) {
	s := newServer(t, nil)
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		var out searchOut
		callOK(t, c, ToolSearch, map[string]any{"query": "lease expiry storm", "k": 5, "related": true}, &out)
		if out.Config != "test-hybrid" {
			t.Errorf("config %q", out.Config)
		}
		if len(out.Notes) == 0 || len(out.Notes) > 5 {
			t.Fatalf("got %d notes, want 1..5", len(out.Notes))
		}
		top := out.Notes[0]
		if top.Path != "sessions/orchard/2025-11-18-lease-expiry-storm.md" {
			t.Errorf("top hit %s, want the lease expiry storm", top.Path)
		}
		if len(top.Passages) == 0 || top.Passages[0].Text == "" {
			t.Errorf("top hit has no passage: %+v", top)
		}
		if top.Match.Ranks["keyword"] == 0 || top.Match.Ranks["vector"] == 0 {
			t.Errorf("top hit's match %+v does not say both branches found it", top.Match)
		}
		if len(top.Match.Missing) != 0 {
			t.Errorf("top hit's match %+v says it lacks words of the question it holds", top.Match)
		}
		if top.Date != "2025-11-18" || top.Modified != "" {
			t.Errorf("top hit: date %q modified %q; want the date its file name states and no file day beside it", top.Date, top.Modified)
		}
		// The storm note links to idempotency.md: the top hit's related notes say so.
		found := false
		for _, r := range top.Related {
			if r.Path == "knowledge/engineering/idempotency.md" && r.Direction == "links to" {
				found = true
			}
		}
		if !found {
			t.Errorf("top hit's related notes %+v lack idempotency.md, which it links to", top.Related)
		}
		if out.Stages != nil || out.Now != "" {
			t.Errorf("without explain an answer carries no stages (%v) and no clock (%q)", out.Stages, out.Now)
		}
		if out.Scope != nil {
			t.Errorf("an unfiltered search reports a scope: %+v", out.Scope)
		}
		if out.Degraded != nil {
			t.Errorf("degraded = %q with nothing degraded", out.Degraded)
		}
		var plain searchOut
		callOK(t, c, ToolSearch, map[string]any{"query": "lease expiry storm", "k": 5}, &plain)
		if len(plain.Notes) == 0 || plain.Notes[0].Related != nil {
			t.Errorf("related notes are listed only when asked for: %+v", plain.Notes)
		}
		var ex searchOut
		callOK(t, c, ToolSearch, map[string]any{"query": "lease expiry storm", "explain": true}, &ex)
		var stageNames []string
		for _, st := range ex.Stages {
			stageNames = append(stageNames, st.Stage)
		}
		if !slices.Equal(stageNames, []string{"keyword", "vector", "rrf"}) {
			t.Errorf("stages %v", stageNames)
		}
		if ex.Now != fixedNow.Format(time.RFC3339) {
			t.Errorf("now = %s, want the server clock %s", ex.Now, fixedNow.Format(time.RFC3339))
		}
	})
}

func TestSearchFiltersAndOptions(t *testing.T) {
	s := newServer(t, nil)
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		var out searchOut
		callOK(t, c, ToolSearch, map[string]any{"query": "what went wrong overnight", "path": "sessions/", "type": "session", "explain": true, "now": "2026-01-01"}, &out)
		if len(out.Notes) == 0 {
			t.Fatal("no notes in sessions/")
		}
		for _, n := range out.Notes {
			if !strings.HasPrefix(n.Path, "sessions/") {
				t.Errorf("%s is outside the path scope", n.Path)
			}
			if len(n.Explain) != 3 {
				t.Errorf("%s: explain has %d stages, want 3", n.Path, len(n.Explain))
			}
		}
		if out.Scope == nil || !(strings.HasPrefix(out.Scope.Outcome, "filled:") || strings.HasPrefix(out.Scope.Outcome, "drained:") || strings.HasPrefix(out.Scope.Outcome, "ladder-end:")) {
			t.Errorf("scope escalation outcome missing or odd: %+v", out.Scope)
		}
		if out.Now != "2026-01-01T00:00:00Z" {
			t.Errorf("now = %s, want the given day", out.Now)
		}

		var empty searchOut
		callOK(t, c, ToolSearch, map[string]any{"query": "sourdough", "project": "no-such-project"}, &empty)
		if len(empty.Notes) != 0 || empty.Scope == nil || !strings.HasPrefix(empty.Scope.Outcome, "drained:") {
			t.Errorf("an empty scope should come back drained and empty: %+v", empty)
		}

		var kw searchOut
		callOK(t, c, ToolSearch, map[string]any{"query": "FERR-4102", "config": "keyword", "explain": true}, &kw)
		if kw.Config != "keyword" || len(kw.Stages) != 1 || kw.Stages[0].Stage != "keyword" {
			t.Errorf("config keyword ran %s with stages %+v", kw.Config, kw.Stages)
		}
		var exp searchOut
		callOK(t, c, ToolSearch, map[string]any{"query": "sourdough", "config": "vector", "topics": []any{"baking"}}, &exp)
		if len(exp.Notes) != 1 || exp.Notes[0].Path != "personal/baking/sourdough-starter.md" {
			t.Errorf("experiments/vector.yaml with topic baking: %+v", exp.Notes)
		}
	})
}

func TestSearchRefusals(t *testing.T) {
	s := newServer(t, nil)
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"unknown parameter", map[string]any{"query": "x", "limit": 3}, []string{`unknown parameter "limit"`, "query"}},
		{"two unknown parameters", map[string]any{"query": "x", "top": 3, "filter": "y"}, []string{`"filter", "top"`}},
		{"missing query", map[string]any{"k": 3}, []string{`"query" is required`}},
		{"blank query", map[string]any{"query": "  "}, []string{`"query" is empty`}},
		{"k zero", map[string]any{"query": "x", "k": 0}, []string{`"k"`, "1..50"}},
		{"k too large", map[string]any{"query": "x", "k": 51}, []string{`"k"`, "1..50"}},
		{"k fractional", map[string]any{"query": "x", "k": 2.5}, []string{`"k" must be an integer`}},
		{"k a string", map[string]any{"query": "x", "k": "5"}, []string{`"k" must be an integer, not a string`}},
		{"bad date", map[string]any{"query": "x", "date_from": "2024/01/01"}, []string{`"date_from"`, "YYYY-MM-DD"}},
		{"impossible date", map[string]any{"query": "x", "date_to": "2024-02-30"}, []string{`"date_to"`}},
		{"dates reversed", map[string]any{"query": "x", "date_from": "2025-01-01", "date_to": "2024-01-01"}, []string{"after date_to"}},
		{"bad now", map[string]any{"query": "x", "now": "yesterday"}, []string{`"now"`, "RFC 3339"}},
		{"topics a string", map[string]any{"query": "x", "topics": "baking"}, []string{`"topics" must be an array`}},
		{"explain a string", map[string]any{"query": "x", "explain": "yes"}, []string{`"explain" must be true or false`}},
		{"config a path", map[string]any{"query": "x", "config": "../configs/keyword"}, []string{"bare name"}},
		{"config a yaml file", map[string]any{"query": "x", "config": "/etc/passwd.yaml"}, []string{"bare name"}},
		{"unknown config", map[string]any{"query": "x", "config": "nope"}, []string{`no configuration named "nope" in configs/ or experiments/`}},
		{"keywords a list", map[string]any{"query": "x", "keywords": []any{"a", "b"}}, []string{`"keywords" must be a string`}},
		{"answer a number", map[string]any{"query": "x", "hypothetical_answer": 3}, []string{`"hypothetical_answer" must be a string`}},
		{"answer too long", map[string]any{"query": "x", "hypothetical_answer": strings.Repeat("a", 20000)}, []string{"the answer is 20000 bytes", "16384"}},
	}
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				msg := callErr(t, c, ToolSearch, tc.args)
				for _, w := range tc.want {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q lacks %q", msg, w)
					}
				}
			})
		}
	})
}

type readOut struct {
	Path       string   `json:"path"`
	Title      string   `json:"title"`
	Type       string   `json:"type"`
	Date       string   `json:"date"`
	Topics     []string `json:"topics"`
	Headings   []string `json:"headings"`
	Section    string   `json:"section"`
	Lines      string   `json:"lines"`
	Content    string   `json:"content"`
	TotalBytes int      `json:"total_bytes"`
}

func TestRead(t *testing.T) {
	s := newServer(t, nil)
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		var whole readOut
		callOK(t, c, ToolRead, map[string]any{"path": "knowledge/engineering/idempotency.md"}, &whole)
		if whole.Title != "Idempotency" || whole.Type != "knowledge" || whole.Date != "2025-11-24" || !slices.Contains(whole.Topics, "retries") {
			t.Errorf("metadata: %+v", whole)
		}
		if !slices.Equal(whole.Headings, []string{"# Idempotency", "## What it means", "## Idempotency keys", "## Where to store the key", "## Pitfalls"}) {
			t.Errorf("headings %v", whole.Headings)
		}
		if !strings.Contains(whole.Content, "at-least-once delivery") || strings.Contains(whole.Content, "topics:") {
			t.Errorf("content should be the body without frontmatter: %.200s", whole.Content)
		}

		var sec readOut
		callOK(t, c, ToolRead, map[string]any{"path": "knowledge/engineering/idempotency.md", "section": "idempotency KEYS"}, &sec)
		if sec.Section != "Idempotency › Idempotency keys" || sec.Lines != "19-23" || !strings.HasPrefix(sec.Content, "## Idempotency keys\n") || strings.Contains(sec.Content, "## Pitfalls") {
			t.Errorf("section read: %+v", sec)
		}
		var fenced readOut
		callOK(t, c, ToolRead, map[string]any{"path": "reference/sections.md", "section": "## alpha"}, &fenced)
		if !strings.Contains(fenced.Content, "aardvarks") || !strings.Contains(fenced.Content, "## not a heading, inside a fence") || strings.Contains(fenced.Content, "badgers") {
			t.Errorf("a fenced ## line is not a section: %q", fenced.Content)
		}

		msg := callErr(t, c, ToolRead, map[string]any{"path": "knowledge/engineering/idempotency.md", "section": "Nope"})
		for _, h := range []string{`"Nope"`, `"Idempotency › What it means"`, `"Idempotency › Pitfalls"`} {
			if !strings.Contains(msg, h) {
				t.Errorf("unknown-section error %q lacks %s", msg, h)
			}
		}

		var anchored readOut
		callOK(t, c, ToolRead, map[string]any{"path": "knowledge/engineering/idempotency.md", "anchor": "at-least-once   DELIVERY, every handler"}, &anchored)
		if anchored.Section != "Idempotency" || !strings.HasPrefix(anchored.Content, "An operation is idempotent") || anchored.Lines != "11-11" {
			t.Errorf("anchor read: %+v", anchored)
		}
		var lines readOut
		callOK(t, c, ToolRead, map[string]any{"path": "knowledge/engineering/idempotency.md", "lines": "1-2", "max_bytes": MinReadBytes}, &lines)
		if lines.Content != "---\ntype: knowledge" || lines.TotalBytes != len(lines.Content) {
			t.Errorf("lines read: %+v", lines)
		}
		for _, bad := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"section": "Pitfalls", "lines": "1-2"}, "give one of section, anchor and lines, not section and lines"},
			{map[string]any{"max_bytes": 10}, `"max_bytes" is 10, outside 500..100000`},
			{map[string]any{"offset": -1}, `"offset" is -1, outside`},
			{map[string]any{"anchor": strings.Repeat("a", MaxAnchorBytes+1)}, `"anchor" is 4097 bytes, over the 4096`},
			{map[string]any{"anchor": "no such passage"}, `anchor "no such passage" is not in note`},
			{map[string]any{"lines": 7}, `"lines" must be a string`},
		} {
			bad.args["path"] = "knowledge/engineering/idempotency.md"
			if msg := callErr(t, c, ToolRead, bad.args); !strings.Contains(msg, bad.want) {
				t.Errorf("%v: error %q lacks %q", bad.args, msg, bad.want)
			}
		}
		h, release, err := s.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for target, want := range map[string]string{"idempotency": "knowledge/engineering/idempotency.md",
			"Knowledge/Engineering/IDEMPOTENCY.md": "knowledge/engineering/idempotency.md", "no such note": ""} {
			if got, ok, err := h.db.ResolveLink(context.Background(), target); got != want || ok != (want != "") || err != nil {
				t.Errorf("ResolveLink(%q) = %q, %v, %v; want %q", target, got, ok, err, want)
			}
		}
		release()

		for _, p := range []string{"reference/100% done.md", "reference/sections-link.md", "./knowledge/engineering/idempotency.md", "knowledge//engineering/idempotency.md"} {
			var ok readOut
			callOK(t, c, ToolRead, map[string]any{"path": p}, &ok)
			if ok.Content == "" {
				t.Errorf("%s: empty content", p)
			}
		}
	})
}

func TestReadRefusals(t *testing.T) {
	s := newModelFreeServer(t, nil)
	cases := []struct {
		path any
		want string
	}{
		{"../x.md", `".." segment`},
		{"../outside/secret.md", `".." segment`},
		{"/etc/passwd", "absolute"},
		{"/" + fx.outside, "absolute"},
		{"%2e%2e/x.md", `(URL-decoded: "../`},
		{"..%2fx.md", `(URL-decoded: "../`},
		{"%2e%2e%2f%2e%2e%2fetc%2fpasswd", `(URL-decoded: "../../etc/passwd") contains a ".." segment`},
		{"%252e%252e/x.md", `(URL-decoded: "../`},
		{"a/../../x.md", `".." segment`},
		{"knowledge/..", `".." segment`},
		{"x.md\x00", "NUL byte"},
		{"x.md%00", `(URL-decoded: "x.md\x00") contains a NUL byte`},
		{`..\x.md`, "backslash"},
		{`knowledge\engineering\idempotency.md`, "backslash"},
		{"%5c..%5cx.md", `(URL-decoded: "\\..\\x.md") contains a backslash`},
		{"C:/Windows/win.md", "absolute"},
		{"%2fetc%2fpasswd", `(URL-decoded: "/etc/passwd") is absolute`},
		{"knowledge/escape.md", "symlink leading outside the vault"},
		{"knowledge/relative-out.md", "symlink leading outside the vault"},
		{"linked/secret.md", "symlink leading outside the vault"},
		{"templates/session-template.md", "template"},
		{".obsidian/workspace.md", "hidden folder"},
		{"lint-report-2026-03-01.md", "lint report"},
		{"reference/blob.md", "binary"},
		{"missing.md", `no note "missing.md"`},
		{"knowledge/engineering", "not a markdown note"},
		{"knowledge/engineering/idempotency.txt", "not a markdown note"},
		{".", "vault root"},
		{"", `"path" is empty`},
		{42, `"path" must be a string`},
	}
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%q", tc.path), func(t *testing.T) {
				msg := callErr(t, c, ToolRead, map[string]any{"path": tc.path})
				if !strings.Contains(msg, tc.want) {
					t.Errorf("error %q lacks %q", msg, tc.want)
				}
			})
		}
		msg := callErr(t, c, ToolRead, map[string]any{"path": "knowledge/engineering/idempotency.md", "mode": "raw"})
		if !strings.Contains(msg, `unknown parameter "mode"`) {
			t.Errorf("unknown parameter error: %q", msg)
		}
	})
}

type listOut struct {
	Total      int  `json:"total"`
	Offset     int  `json:"offset"`
	Limit      int  `json:"limit"`
	NextOffset *int `json:"next_offset"`
	Notes      []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	} `json:"notes"`
}

func TestList(t *testing.T) {
	s := newServer(t, nil)
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		var all listOut
		callOK(t, c, ToolList, map[string]any{}, &all)
		if all.Total != fx.notes || len(all.Notes) != fx.notes || all.NextOffset != nil {
			t.Fatalf("list all: total %d, %d notes, next %v; the index holds %d", all.Total, len(all.Notes), all.NextOffset, fx.notes)
		}
		var paths []string
		for _, n := range all.Notes {
			paths = append(paths, n.Path)
		}
		if !slices.IsSorted(paths) {
			t.Errorf("not in path order: %v", paths)
		}
		if slices.Contains(paths, "templates/session-template.md") || slices.Contains(paths, "knowledge/escape.md") {
			t.Errorf("list shows what is not a note: %v", paths)
		}

		var page listOut
		callOK(t, c, ToolList, map[string]any{"limit": 3}, &page)
		if len(page.Notes) != 3 || page.NextOffset == nil || *page.NextOffset != 3 || page.Notes[0].Path != paths[0] {
			t.Errorf("first page: %+v", page)
		}
		var last listOut
		callOK(t, c, ToolList, map[string]any{"limit": 3, "offset": fx.notes - 1}, &last)
		if len(last.Notes) != 1 || last.NextOffset != nil || last.Notes[0].Path != paths[len(paths)-1] {
			t.Errorf("last page: %+v", last)
		}

		var sessions listOut
		callOK(t, c, ToolList, map[string]any{"type": "session", "path": "sessions/orchard/"}, &sessions)
		if sessions.Total != 2 {
			t.Errorf("orchard sessions: %d, want 2", sessions.Total)
		}
		for _, n := range sessions.Notes {
			if n.Type != "session" || !strings.HasPrefix(n.Path, "sessions/orchard/") {
				t.Errorf("filter let through %+v", n)
			}
		}
		var dated listOut
		callOK(t, c, ToolList, map[string]any{"date_from": "2025-01-01", "date_to": "2025-12-31", "path": "sessions/"}, &dated)
		if dated.Total != 2 {
			t.Errorf("sessions dated 2025: %d, want 2 (%+v)", dated.Total, dated.Notes)
		}

		for _, bad := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"limit": 0}, `"limit"`},
			{map[string]any{"limit": 201}, "1..200"},
			{map[string]any{"offset": -1}, `"offset"`},
			{map[string]any{"page": 2}, `unknown parameter "page"`},
			{map[string]any{"date_from": "01/02/2025"}, "YYYY-MM-DD"},
		} {
			if msg := callErr(t, c, ToolList, bad.args); !strings.Contains(msg, bad.want) {
				t.Errorf("%v: error %q lacks %q", bad.args, msg, bad.want)
			}
		}
	})
}

type reindexOut struct {
	Run       int    `json:"run"`
	Mode      string `json:"mode"`
	Notes     int    `json:"notes"`
	Unchanged int    `json:"unchanged"`
	Embedded  int    `json:"embedded"`
	TookMS    *int64 `json:"took_ms"`
}

func TestReindexTool(t *testing.T) {
	// Its own copy: an incremental build rewrites the index's metadata.
	vault, db := copyFixture(t)
	s := newServer(t, func(o *Options) { o.VaultPath, o.DBPath = vault, db })
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		var out reindexOut
		callOK(t, c, ToolReindex, nil, &out)
		if out.Mode != "incremental" || out.Notes != fx.notes || out.Unchanged != fx.notes || out.Embedded != 0 || out.TookMS == nil || out.Run < 1 {
			t.Errorf("reindex of an unchanged vault: %+v", out)
		}
		msg := callErr(t, c, ToolReindex, map[string]any{"full": true})
		if !strings.Contains(msg, `unknown parameter "full"`) || !strings.Contains(msg, "no parameters") {
			t.Errorf("unknown parameter error: %q", msg)
		}
	})
}

type deltaOut struct {
	Threshold float64 `json:"threshold"`
	Model     string  `json:"model"`
	Items     []struct {
		Index      int      `json:"index"`
		Status     string   `json:"status"`
		Similarity *float64 `json:"similarity"`
		Path       string   `json:"path"`
		Heading    string   `json:"heading"`
	} `json:"items"`
	Counts map[string]int `json:"counts"`
}

func TestDelta(t *testing.T) {
	s := newServer(t, nil)
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		var sec readOut
		callOK(t, c, ToolRead, map[string]any{"path": "knowledge/engineering/idempotency.md", "section": "Idempotency keys"}, &sec)
		body := strings.TrimPrefix(sec.Content, "## Idempotency keys\n\n")
		items := []any{
			// The section as the index embedded it: title, heading, body.
			map[string]any{"title": "Idempotency", "text": "Idempotency keys\n" + body},
			map[string]any{"text": "Patagonia hiking itinerary: two weeks of trails around El Chaltén and Torres del Paine in February."},
			map[string]any{"text": "Идемпотентность означает, что повторный вызов операции не меняет результат."},
			map[string]any{"title": "Ключи", "text": "Idempotency keys must be stable across retries."},
		}
		var out deltaOut
		callOK(t, c, ToolDelta, map[string]any{"items": items}, &out)
		if out.Threshold != DefaultNoveltyThreshold || out.Model != models.DefaultEmbedder || len(out.Items) != 4 {
			t.Fatalf("delta: %+v", out)
		}
		covered, novel, cyr, mixed := out.Items[0], out.Items[1], out.Items[2], out.Items[3]
		if covered.Status != StatusCovered || covered.Path != "knowledge/engineering/idempotency.md" || covered.Heading != "Idempotency keys" || covered.Similarity == nil || *covered.Similarity < 0.99 {
			t.Errorf("a section of the vault should be covered by itself: %+v", covered)
		}
		if novel.Status != StatusNew || novel.Similarity == nil || *novel.Similarity >= DefaultNoveltyThreshold || novel.Path == "" {
			t.Errorf("an unrelated item should be new, with its nearest note as evidence: %+v", novel)
		}
		if cyr.Status != StatusLanguage || cyr.Similarity != nil || cyr.Path != "" {
			t.Errorf("a Cyrillic item must come back unscored, without a similarity: %+v", cyr)
		}
		if mixed.Status == StatusLanguage || mixed.Similarity == nil {
			t.Errorf("an English item with a short Cyrillic title is scored: %+v", mixed)
		}
		if out.Counts[StatusLanguage] != 1 || out.Counts[StatusCovered]+out.Counts[StatusNew] != 3 {
			t.Errorf("counts %v", out.Counts)
		}

		var lenient deltaOut
		callOK(t, c, ToolDelta, map[string]any{"items": items[1:3], "threshold": 0}, &lenient)
		if lenient.Items[0].Status != StatusCovered || lenient.Items[1].Status != StatusLanguage {
			t.Errorf("threshold 0 covers every scored item and still never scores Cyrillic: %+v", lenient.Items)
		}
	})
}

func TestDeltaRefusals(t *testing.T) {
	s := newServer(t, nil)
	many := make([]any, MaxDeltaItems+1)
	for i := range many {
		many[i] = map[string]any{"text": "x"}
	}
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"no items", map[string]any{}, `"items" is required`},
		{"empty items", map[string]any{"items": []any{}}, "give 1..100"},
		{"too many items", map[string]any{"items": many}, "has 101 items"},
		{"items not an array", map[string]any{"items": "x"}, `"items" must be an array`},
		{"item not an object", map[string]any{"items": []any{"x"}}, "items[0] must be an object"},
		{"unknown item key", map[string]any{"items": []any{map[string]any{"text": "x", "url": "y"}}}, `items[0]: unknown key "url"`},
		{"empty text", map[string]any{"items": []any{map[string]any{"text": "x"}, map[string]any{"text": " "}}}, "items[1].text is empty"},
		{"text too long", map[string]any{"items": []any{map[string]any{"text": strings.Repeat("a", MaxDeltaItemBytes+1)}}}, "items[0].text is 8193 bytes"},
		{"title not a string", map[string]any{"items": []any{map[string]any{"text": "x", "title": 3}}}, "items[0].title must be a string"},
		{"threshold too high", map[string]any{"items": []any{map[string]any{"text": "x"}}, "threshold": 1.5}, `"threshold" is 1.5, outside 0..1`},
		{"unknown parameter", map[string]any{"items": []any{map[string]any{"text": "x"}}, "k": 3}, `unknown parameter "k"`},
	}
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if msg := callErr(t, c, ToolDelta, tc.args); !strings.Contains(msg, tc.want) {
					t.Errorf("error %q lacks %q", msg, tc.want)
				}
			})
		}
	})
}

// TestNoteMetaAgrees: vault_read, vault_list and vault_search report one
// note's metadata alike, the index's normalisation (type, project and status
// lower-cased, as the filters compare them), though vault_read parses the
// file afresh and the others read the index.
func TestNoteMetaAgrees(t *testing.T) {
	vaultPath, db := buildBowIndex(t, map[string]string{
		"sessions/ferrite.md": "---\ntype: Session\nproject: Ferrite\nstatus: Active\nsource: Team Call\ntopics: [Rust, Memory]\ndate: 2025-04-02\n---\n# Ferrite allocator\n\nWe profiled the ferrite allocator and found the arena reset dominates.\n",
		"knowledge/other.md":  "---\ntype: knowledge\n---\n# Other\n\nNothing about allocators here.\n",
	})
	s := newModelFreeServer(t, func(o *Options) { o.VaultPath, o.DBPath, o.ConfigName = vaultPath, db, "keyword" })
	fi, err := os.Stat(filepath.Join(vaultPath, "sessions/ferrite.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := NoteMeta{Type: "session", Date: "2025-04-02", Modified: fi.ModTime().UTC().Format(time.DateOnly), Project: "ferrite", Status: "active", Source: "Team Call", Topics: []string{"rust", "memory"}}
	c := connectStdio(t, s)

	var read struct{ NoteMeta }
	callOK(t, c, ToolRead, map[string]any{"path": "sessions/ferrite.md"}, &read)
	if !reflect.DeepEqual(read.NoteMeta, want) {
		t.Errorf("vault_read: %+v, want %+v", read.NoteMeta, want)
	}

	var list struct {
		Notes []struct {
			Path string `json:"path"`
			NoteMeta
		} `json:"notes"`
	}
	callOK(t, c, ToolList, map[string]any{"type": "Session", "project": "FERRITE", "status": "active"}, &list)
	if len(list.Notes) != 1 || list.Notes[0].Path != "sessions/ferrite.md" {
		t.Fatalf("vault_list by the metadata: %+v", list.Notes)
	}
	listWant := want
	listWant.Source = "" // a listing leaves source to vault_read
	if got := list.Notes[0].NoteMeta; !reflect.DeepEqual(got, listWant) {
		t.Errorf("vault_list: %+v, want %+v", got, listWant)
	}

	var search struct {
		Notes []struct {
			Path string `json:"path"`
			NoteMeta
		} `json:"notes"`
	}
	callOK(t, c, ToolSearch, map[string]any{"query": "ferrite allocator arena"}, &search)
	if len(search.Notes) == 0 || search.Notes[0].Path != "sessions/ferrite.md" {
		t.Fatalf("vault_search: %+v", search.Notes)
	}
	searchWant := listWant
	searchWant.Modified = "" // a note that states its date needs no file day in a search
	if got := search.Notes[0].NoteMeta; !reflect.DeepEqual(got, searchWant) {
		t.Errorf("vault_search: %+v, want %+v (a search, like a listing, leaves source to vault_read)", got, searchWant)
	}
}
