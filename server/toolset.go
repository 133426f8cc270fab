package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// Tool sets: every conversation a client holds pays for the tools it lists,
// whether or not it asks about notes, so the server lists a small default set
// and offers the rest by name (Options.Tools, `serve --tools`,
// VAULT_RAG_TOOLS). ListingBudget bounds what the default set costs
// (TestListingBudget; `vault-rag bench` reports it).
const (
	ToolsetDefault = "default"
	ToolsetAll     = "all"
	// ListingBudget is the most bytes the initialize instructions and the
	// tools/list answer of the default set may take together.
	ListingBudget = 6 << 10
)

// defaultTools are the tools a server lists unless told otherwise: the
// search, the exact search and the reads an assistant's loop needs.
var defaultTools = [...]string{ToolSearch, ToolGrep, ToolRead}

// DefaultTools returns the default set's tool names, in listing order.
func DefaultTools() []string { return slices.Clone(defaultTools[:]) }

// AllTools returns every tool's name, in listing order.
func AllTools() []string {
	var out []string
	for _, t := range toolSpecs(nil) {
		out = append(out, t.def.Name)
	}
	return out
}

// ParseTools reads a tool set as `serve --tools` takes it: a comma-separated
// list of tool names (with or without the "vault_" prefix) and the sets
// "default" and "all", in any mix ("default,list"). An empty spec is the
// default set. The names come back in listing order, each once; an unknown
// name is an error that lists the known ones.
func ParseTools(spec string) ([]string, error) {
	all := AllTools()
	want := map[string]bool{}
	if strings.TrimSpace(spec) == "" {
		spec = ToolsetDefault
	}
	for _, f := range strings.Split(spec, ",") {
		name := strings.ToLower(strings.TrimSpace(f))
		switch {
		case name == "":
			continue
		case name == ToolsetDefault:
			for _, n := range defaultTools {
				want[n] = true
			}
		case name == ToolsetAll:
			for _, n := range all {
				want[n] = true
			}
		case slices.Contains(all, name):
			want[name] = true
		case slices.Contains(all, "vault_"+name):
			want["vault_"+name] = true
		default:
			return nil, fmt.Errorf("unknown tool %q: the tools are %s, and the sets %q and %q", strings.TrimSpace(f), strings.Join(all, ", "), ToolsetDefault, ToolsetAll)
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("no tool named in %q", spec)
	}
	var out []string
	for _, n := range all {
		if want[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// enabledSpecs are the entries of toolSpecs that names lists (nil: the
// default set), in listing order. Without vault_overview, vault_search is
// listed without the parameters searchDef gives only in full.
func enabledSpecs(ls vault.Languages, names []string) []toolSpec {
	if names == nil {
		names = defaultTools[:]
	}
	var out []toolSpec
	for _, t := range toolSpecs(ls) {
		if !slices.Contains(names, t.def.Name) {
			continue
		}
		if t.def.Name == ToolSearch && !slices.Contains(names, ToolOverview) {
			schema := t.def.RawOutputSchema
			t.def = searchDef(ls, false)
			t.def.RawOutputSchema = schema
		}
		out = append(out, t)
	}
	return out
}
