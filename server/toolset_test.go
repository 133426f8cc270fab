package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// listingBytes is what a conversation pays before its first question: the
// initialize instructions and the tools/list answer of the tools names.
func listingBytes(t *testing.T, ls vault.Languages, names []string) (instructions, tools int) {
	t.Helper()
	raw, err := json.Marshal(mcp.ListToolsResult{Tools: Tools(ls, names)})
	if err != nil {
		t.Fatal(err)
	}
	return len(Instructions(ls, names)), len(raw)
}

// TestListingBudget: the default tool set's instructions and tools/list,
// output schemas included, stay within ListingBudget for a vault in any of
// the language situations the descriptions word differently.
func TestListingBudget(t *testing.T) {
	en := vault.Language{Name: "English", Script: "Latin", Notes: 60}
	zh := vault.Language{Name: "Chinese", Script: "Han", Notes: 30}
	ja := vault.Language{Name: "Japanese", Script: "Han", Notes: 20}
	for name, ls := range map[string]vault.Languages{
		"unknown": nil, "English": {en}, "Chinese": {zh}, "three languages": {en, zh, ja},
	} {
		ins, tools := listingBytes(t, ls, nil)
		t.Logf("%s: instructions %d B + tools/list %d B = %d B", name, ins, tools, ins+tools)
		if ins+tools > ListingBudget {
			t.Errorf("%s: the default listing is %d B, over the %d B budget", name, ins+tools, ListingBudget)
		}
	}
	ins, tools := listingBytes(t, vault.Languages{en}, AllTools())
	t.Logf("every tool (English): %d B", ins+tools)
}

func TestParseTools(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
		err  string
	}{
		{"", DefaultTools(), ""},
		{"default", []string{ToolSearch, ToolGrep, ToolRead}, ""},
		{"all", AllTools(), ""},
		{"default,list", []string{ToolSearch, ToolGrep, ToolRead, ToolList}, ""},
		{" vault_overview , search ", []string{ToolSearch, ToolOverview}, ""},
		{"search,search", []string{ToolSearch}, ""},
		{"serch", nil, `unknown tool "serch"`},
		{",", nil, "no tool named"},
	} {
		got, err := ParseTools(tc.spec)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseTools(%q): error %v, want one saying %q", tc.spec, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("ParseTools(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
}

// TestDefaultToolSet: a server told nothing lists the default set, names
// only those tools in its instructions, and refuses the others by name; a
// server given a set lists that set.
func TestDefaultToolSet(t *testing.T) {
	s := newModelFreeServer(t, func(o *Options) { o.Tools = nil })
	c, init := connectStdioInit(t, s)
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if len(tl.RawOutputSchema) == 0 && tl.OutputSchema.Type == "" {
			t.Errorf("%s has no outputSchema", tl.Name)
		}
	}
	if slices.Sort(names); !slices.Equal(names, []string{ToolGrep, ToolRead, ToolSearch}) {
		t.Errorf("tools/list = %v, want %v", names, DefaultTools())
	}
	if strings.Contains(init.Instructions, ToolList) || !strings.Contains(init.Instructions, ToolGrep) {
		t.Errorf("the instructions name tools not listed, or not the listed ones:\n%s", init.Instructions)
	}
	if text, _, err := callRaw(c, ToolList, map[string]any{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("vault_list, not in the default set, answered: %s, %v", text, err)
	}
	if text, isErr := call(t, c, ToolSearch, map[string]any{"query": "x", "type": "note"}); !isErr || !strings.Contains(text, "type") {
		t.Errorf("a metadata filter, not listed without vault_overview, was taken: %s", text)
	}
	s2 := newModelFreeServer(t, func(o *Options) { o.Tools = []string{ToolSearch, ToolList} })
	res, err = connectStdio(t, s2).ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil || len(res.Tools) != 2 || res.Tools[0].Name != ToolList || res.Tools[1].Name != ToolSearch {
		t.Errorf("Tools [search list]: %v, %v", res, err)
	}
	o := Options{ConfigRoot: fx.configs, ConfigName: "test-hybrid", Tools: []string{ToolSearch, "vault_nope"}}
	if err := o.checkConfig(); err == nil || !strings.Contains(err.Error(), `unknown tool "vault_nope"`) {
		t.Errorf("an unknown tool: %v", err)
	}
	// Options take tools by their names; a short name would list nothing.
	o.Tools = []string{"search"}
	if err := o.checkConfig(); err == nil || !strings.Contains(err.Error(), `unknown tool "search"`) {
		t.Errorf("a short name in Options.Tools: %v", err)
	}
}

// New refuses a vault that is not a folder in the words every command uses.
func TestNewVaultProblem(t *testing.T) {
	missing := t.TempDir() + "/missing"
	_, err := New(Options{VaultPath: missing, DBPath: t.TempDir() + "/x.db", ConfigRoot: fx.configs, ConfigName: "test-hybrid", Registry: fx.reg, Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "the vault folder "+missing+" does not exist; set VAULT_PATH") {
		t.Errorf("a missing vault: %v", err)
	}
}
