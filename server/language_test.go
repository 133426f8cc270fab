package server

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/models/bow"
)

// searchTexts are what a client reads of vault_search: its description and
// those of its expansions.
func searchTexts(t *testing.T, tools []mcp.Tool) (desc, keywords, answer string) {
	t.Helper()
	for _, tool := range tools {
		if tool.Name != ToolSearch {
			continue
		}
		get := func(p string) string {
			prop, _ := tool.InputSchema.Properties[p].(map[string]any)
			d, _ := prop["description"].(string)
			return d
		}
		return tool.Description, get("keywords"), get("hypothetical_answer")
	}
	t.Fatalf("no %s among the tools", ToolSearch)
	return
}

// checkLanguageTexts checks that vault_search's texts give one rule: the
// notes' language (want), never the question's; and that the instructions,
// which point to vault_search, do not give another.
func checkLanguageTexts(t *testing.T, instructions string, tools []mcp.Tool, want []string) {
	t.Helper()
	desc, keywords, answer := searchTexts(t, tools)
	if strings.Contains(instructions, "language") {
		t.Errorf("the instructions speak of a language, which is vault_search's description's to give:\n%s", instructions)
	}
	texts := map[string]string{"vault_search": desc, "keywords": keywords, "hypothetical_answer": answer}
	for name, text := range texts {
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s does not say %q:\n%s", name, w, text)
			}
		}
		if !strings.Contains(text, "whatever the language of the question") {
			t.Errorf("%s does not say the question's language does not matter:\n%s", name, text)
		}
		if strings.Contains(text, "question's language") || strings.Contains(text, "in the language of the question") {
			t.Errorf("%s still asks for the question's language:\n%s", name, text)
		}
	}
	if !strings.Contains(instructions, "vault_overview") {
		t.Errorf("the instructions do not point to vault_overview:\n%s", instructions)
	}
}

func TestLanguageRule(t *testing.T) {
	zh := vault.Language{Name: "Chinese", Script: "Han"}
	en := vault.Language{Name: "English", Script: "Latin"}
	fr := vault.Language{Name: "French", Script: "Latin"}
	with := func(l vault.Language, n int) vault.Language { l.Notes = n; return l }
	for _, tc := range []struct {
		name  string
		langs vault.Languages
		rule  string
		want  []string // in every text
		not   []string // in no text
	}{
		{"Chinese", vault.Languages{with(zh, 170), with(en, 3)},
			"The notes are written in Chinese: write keywords and hypothetical_answer in Chinese, whatever the language of the question.",
			[]string{"Chinese"}, []string{"English,", "several"}},
		{"English", vault.Languages{with(en, 33)},
			"The notes are written in English: write keywords and hypothetical_answer in English, whatever the language of the question.",
			[]string{"English"}, []string{"The example below is in English only"}},
		{"mixed", vault.Languages{with(zh, 60), with(en, 30), with(fr, 10)},
			"The notes are written in several languages, Chinese (60% of the notes) and English (30% of the notes): write keywords in each of them, side by side, and hypothetical_answer once in each, whatever the language of the question.",
			[]string{"Chinese", "English"}, []string{"French"}},
		{"script only", vault.Languages{{Script: "Arabic", Notes: 12}},
			"The notes are written in a language written in Arabic script that the server cannot name: write keywords and hypothetical_answer in the language of the notes (as vault_search and vault_read show them), whatever the language of the question.",
			[]string{"language of the notes"}, nil},
		{"unknown", nil,
			"The server cannot tell what language the notes are written in: write keywords and hypothetical_answer in the language of the notes (as vault_search and vault_read show them), whatever the language of the question.",
			[]string{"language of the notes"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LanguageRule(tc.langs); got != tc.rule {
				t.Errorf("rule:\n got %s\nwant %s", got, tc.rule)
			}
			instructions, tools := Instructions(tc.langs, AllTools()), Tools(tc.langs, AllTools())
			if desc, _, _ := searchTexts(t, tools); !strings.Contains(desc, tc.rule) {
				t.Errorf("vault_search's description does not give the rule:\n%s", desc)
			}
			checkLanguageTexts(t, instructions, tools, tc.want)
			desc, keywords, answer := searchTexts(t, tools)
			for _, text := range []string{instructions, desc, keywords, answer} {
				for _, n := range tc.not {
					if strings.Contains(text, n) {
						t.Errorf("%q in %s", n, text)
					}
				}
			}
		})
	}
}

// buildBowIndex indexes a vault with the bag-of-words embedder under the
// default embedder's name, as a vault of that script's first index would be.
func buildBowIndex(t *testing.T, files map[string]string) (vaultPath, db string) {
	t.Helper()
	vaultPath, db = t.TempDir(), filepath.Join(t.TempDir(), "vault.db")
	vaulttest.WriteTree(t, vaultPath, files, fixedNow)
	if _, err := index.Build(context.Background(), bow.Embedder{ModelName: models.DefaultEmbedder}, index.BuildOptions{VaultPath: vaultPath, DBPath: db}); err != nil {
		t.Fatal(err)
	}
	return vaultPath, db
}

var (
	chineseNotes = map[string]string{
		"同步/设置.md":   "---\ntype: 帮助\ntopics: [同步, 设置]\ndate: 2024-05-01\n---\n# 设置同步\n\n在设置中打开同步功能，选择要同步的文件夹和文件类型，然后登录你的账户。\n",
		"同步/冲突.md":   "---\ntype: 帮助\ntopics: [同步]\ndate: 2025-02-03\n---\n# 冲突\n\n两台设备同时修改同一篇笔记时，同步会保留两个版本，并在文件名后加上冲突标记。\n",
		"插件/社区插件.md": "---\ntype: 参考\ntopics: [插件]\n---\n# 社区插件\n\n用 Templater 和 Dataview 插件管理笔记模板和查询，在设置里打开社区插件。\n",
	}
	englishNotes = map[string]string{
		"sync/setup.md":    "---\ntype: Help\ntopics: [sync, settings]\ndate: 2024-05-01\n---\n# Set up sync\n\nOpen the settings, turn sync on, and choose which folders and file types are synced to your account.\n",
		"sync/conflict.md": "---\ntype: help\ntopics: [sync]\ndate: 2025-02-03\n---\n# Conflicts\n\nWhen two devices change the same note at once, sync keeps both versions and marks the file name with a conflict.\n",
		"plugins/core.md":  "---\ntype: reference\ntopics: [plugins]\n---\n# Core plugins\n\nThe core plugins are turned on in the settings, and each of them can be configured there.\n",
	}
)

// TestLanguageToldToClient: a client learns the notes' language at
// initialize and in tools/list, over both transports, whether the server
// opened an index or is still building its first one.
func TestLanguageToldToClient(t *testing.T) {
	for _, tc := range []struct {
		name  string
		notes map[string]string
		lang  string
	}{
		{"Chinese", chineseNotes, "Chinese"},
		{"English", englishNotes, "English"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vaultPath, db := buildBowIndex(t, tc.notes)
			s := newModelFreeServer(t, func(o *Options) { o.VaultPath, o.DBPath, o.ConfigName = vaultPath, db, "keyword" })
			for _, connect := range []struct {
				name string
				f    func(*testing.T, *Server) (*client.Client, *mcp.InitializeResult)
			}{
				{"stdio", connectStdioInit},
				{"http", func(t *testing.T, s *Server) (*client.Client, *mcp.InitializeResult) { return connectHTTPInit(t, s) }},
			} {
				t.Run(connect.name, func(t *testing.T) {
					c, init := connect.f(t, s)
					res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
					if err != nil {
						t.Fatal(err)
					}
					checkToldLanguage(t, init.Instructions, res.Tools, tc.lang)
				})
			}
		})
	}
	t.Run("Chinese, no index yet", func(t *testing.T) {
		vaultPath := t.TempDir()
		vaulttest.WriteTree(t, vaultPath, chineseNotes, fixedNow)
		g := newGate() // never opened: the first build waits until the server closes
		s := newModelFreeServer(t, func(o *Options) {
			o.VaultPath, o.DBPath, o.ConfigName, o.wrapBuild = vaultPath, filepath.Join(t.TempDir(), "vault.db"), "keyword", g.wrap
		})
		c, init := connectStdioInit(t, s)
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		checkToldLanguage(t, init.Instructions, res.Tools, "Chinese")
	})
}

// checkToldLanguage checks what a client received: the rule for a vault in
// one language, lang, in vault_search's description,
// and that language in the expansions' descriptions.
func checkToldLanguage(t *testing.T, instructions string, tools []mcp.Tool, lang string) {
	t.Helper()
	checkLanguageTexts(t, instructions, tools, []string{"in " + lang + ", whatever the language of the question"})
	rule := "The notes are written in " + lang + ": write keywords and hypothetical_answer in " + lang + ", whatever the language of the question."
	desc, _, _ := searchTexts(t, tools)
	if !strings.Contains(desc, rule) {
		t.Errorf("the rule %q is not in vault_search's description:\n%s", rule, desc)
	}
}

// overviewOut is vault_overview's JSON as a client reads it.
type overviewOut struct {
	Notes      int            `json:"notes"`
	Chunks     int            `json:"chunks"`
	Limit      int            `json:"limit"`
	Titles     []FolderTitles `json:"titles"`
	TitlesMore int            `json:"titles_more_folders"`
	Language   struct {
		Rule      string `json:"rule"`
		Languages []struct {
			Name  string  `json:"name"`
			Notes int     `json:"notes"`
			Share float64 `json:"share"`
		} `json:"languages"`
		Script string `json:"script"`
	} `json:"language"`
	Dates struct {
		From    string         `json:"from"`
		To      string         `json:"to"`
		Sources map[string]int `json:"sources"`
	} `json:"dates"`
	Facets map[string]*Facet `json:"facets"`
}

func TestOverviewTool(t *testing.T) {
	vaultPath, db := buildBowIndex(t, englishNotes)
	s := newModelFreeServer(t, func(o *Options) { o.VaultPath, o.DBPath, o.ConfigName = vaultPath, db, "keyword" })
	eachTransport(t, s, func(t *testing.T, c *client.Client) {
		var all overviewOut
		callOK(t, c, ToolOverview, nil, &all)
		if all.Notes != 3 || all.Chunks == 0 || all.Limit != DefaultOverviewLimit {
			t.Errorf("counts: %+v", all)
		}
		if !strings.HasPrefix(all.Language.Rule, "The notes are written in English") || len(all.Language.Languages) != 1 ||
			all.Language.Languages[0].Name != "English" || all.Language.Languages[0].Share != 1 || all.Language.Script != "Latin" {
			t.Errorf("language: %+v", all.Language)
		}
		if all.Dates.From != "2024-05-01" || all.Dates.To != fixedNow.Format("2006-01-02") || all.Dates.Sources["frontmatter"] != 2 || all.Dates.Sources["mtime"] != 1 {
			t.Errorf("dates: %+v", all.Dates)
		}
		if len(all.Facets) != 5 {
			t.Errorf("facets: %v, want all five", all.Facets)
		}
		// "Help" and "help" are one type: the filters match them alike.
		if f := all.Facets["type"]; f == nil || len(f.Values) != 2 || f.Values[0] != (FacetValue{Value: "help", Notes: 2}) || f.More != 0 {
			t.Errorf("type: %+v", f)
		}
		if f := all.Facets["folders"]; f == nil || len(f.Values) != 2 || f.Values[0] != (FacetValue{Value: "sync/", Notes: 2}) {
			t.Errorf("folders: %+v", f)
		}
		if f := all.Facets["project"]; f == nil || len(f.Values) != 0 || f.Without != 3 {
			t.Errorf("project: %+v", f)
		}

		var some overviewOut
		callOK(t, c, ToolOverview, map[string]any{"facets": []any{"topics"}, "limit": 1}, &some)
		if f := some.Facets["topics"]; len(some.Facets) != 1 || f == nil || len(f.Values) != 1 || f.Values[0] != (FacetValue{Value: "sync", Notes: 2}) || f.More != 2 {
			t.Errorf("topics, limit 1: %+v", some.Facets)
		}
		// A listed value is one the filters take.
		var list listOut
		callOK(t, c, ToolList, map[string]any{"type": "HELP", "path": "sync/", "topics": []any{"#Sync"}}, &list)
		if list.Total != 2 {
			t.Errorf("list by the overview's values: %d notes, want 2", list.Total)
		}
		var none overviewOut
		callOK(t, c, ToolOverview, map[string]any{"facets": []any{}}, &none)
		if len(none.Facets) != 0 || none.Notes != 3 {
			t.Errorf("no facets: %+v", none)
		}

		if msg := callErr(t, c, ToolOverview, map[string]any{"facets": []any{"tags"}}); !strings.Contains(msg, `unknown facet "tags"`) || !strings.Contains(msg, "type, project, status, topics, folders") {
			t.Errorf("unknown facet: %s", msg)
		}
		for _, limit := range []any{0, 201, 2.5, "5"} {
			if msg := callErr(t, c, ToolOverview, map[string]any{"limit": limit}); !strings.Contains(msg, `"limit"`) {
				t.Errorf("limit %v: %s", limit, msg)
			}
		}

		// Titles: none unless asked for; then per folder, bounded both ways.
		if all.Titles != nil || all.TitlesMore != 0 {
			t.Errorf("titles not asked for: %+v", all.Titles)
		}
		var titled overviewOut
		callOK(t, c, ToolOverview, map[string]any{"facets": []any{}, "titles": 1, "limit": 1}, &titled)
		want := []FolderTitles{{Folder: "plugins/", Notes: 1, Titles: []string{"Core plugins"}}}
		if !reflect.DeepEqual(titled.Titles, want) || titled.TitlesMore != 1 {
			t.Errorf("titles 1, limit 1: %+v (%d more folders), want %+v and 1 more", titled.Titles, titled.TitlesMore, want)
		}
		var every overviewOut
		callOK(t, c, ToolOverview, map[string]any{"facets": []any{}, "titles": 5}, &every)
		if len(every.Titles) != 2 || every.Titles[1].Folder != "sync/" || !reflect.DeepEqual(every.Titles[1].Titles, []string{"Conflicts", "Set up sync"}) || every.TitlesMore != 0 {
			t.Errorf("titles 5: %+v, %d more folders", every.Titles, every.TitlesMore)
		}
		for _, n := range []any{-1, MaxOverviewTitles + 1, "3"} {
			if msg := callErr(t, c, ToolOverview, map[string]any{"titles": n}); !strings.Contains(msg, `"titles"`) {
				t.Errorf("titles %v: %s", n, msg)
			}
		}
	})
}

func TestOverviewEmptyVault(t *testing.T) {
	vaultPath, db := buildBowIndex(t, map[string]string{"templates/t.md": "# Template\n"})
	s := newModelFreeServer(t, func(o *Options) { o.VaultPath, o.DBPath, o.ConfigName = vaultPath, db, "keyword" })
	c := connectStdio(t, s)
	var out overviewOut
	callOK(t, c, ToolOverview, nil, &out)
	if out.Notes != 0 || len(out.Facets) != 5 || out.Dates.From != "" || len(out.Language.Languages) != 0 ||
		!strings.HasPrefix(out.Language.Rule, "The server cannot tell") {
		t.Errorf("overview of an empty vault: %+v", out)
	}
	for name, f := range out.Facets {
		if f == nil || len(f.Values) != 0 || f.More != 0 || f.Without != 0 {
			t.Errorf("%s of an empty vault: %+v", name, f)
		}
	}
}
