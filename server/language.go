package server

import (
	"fmt"
	"math"
	"strings"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
)

// The caller writes vault_search's keywords and hypothetical_answer, and a
// language model writes them in the question's language unless told
// otherwise. On the Chinese help vault, English questions with English
// expansions find far less than the same questions with expansions written
// in Chinese (the +vault-language rows of docs/results.md, `make eval`): the
// words must be the notes' words. So the
// server says which language the notes are written in, with one rule, in
// its instructions, in vault_search's description and parameters, and in
// vault_overview.

// vaultLanguages is what the server says of the vault's language: the
// index's count of its notes by language, or, for a vault without an index
// yet (or an index that did not count them), a scan of the vault, so that
// the instructions are right from the first initialize.
func (s *Server) vaultLanguages(db *index.DB) vault.Languages {
	if db != nil && db.HasLanguages() {
		return db.Languages()
	}
	ls, err := vault.DetectLanguages(s.ctx, s.realVault, s.opts.Scan)
	if err != nil {
		s.log.Warn("cannot tell the vault's language; the instructions will not name it", "err", err)
		return nil
	}
	return ls
}

// share is n of total as a whole percentage.
func share(n, total int) int {
	if total == 0 {
		return 0
	}
	return int(math.Round(100 * float64(n) / float64(total)))
}

// languageTarget says in what language to write the expansions: for
// keywords (each language's terms side by side) and for the answer (once in
// each) when the vault is mixed. example says it again in short, for the
// note on the English examples; "" when the target is English alone and
// they need none.
func languageTarget(ls vault.Languages) (keywords, answer, example string) {
	main := ls.Main()
	switch {
	case len(main) == 0, len(main) == 1 && main[0].Name == "":
		return "the language of the notes", "the language of the notes", "the language of the notes"
	case len(main) == 1 && main[0].Name == "English":
		return "English", "English", ""
	case len(main) == 1:
		return main[0].Name, main[0].Name, main[0].Name
	}
	names := make([]string, len(main))
	for i, l := range main {
		names[i] = l.Label()
	}
	both := "both"
	if len(main) > 2 {
		both = "all"
	}
	return fmt.Sprintf("%s of the notes' languages (%s), side by side", both, vault.JoinAnd(names)),
		fmt.Sprintf("each of the notes' languages (%s), one sentence or two in each", vault.JoinAnd(names)),
		"the notes' languages, as said above"
}

// LanguageRule is the one rule the server gives its callers for the
// language of vault_search's keywords and hypothetical_answer, from the
// vault's notes counted by language: the notes' language, whatever the
// question's.
func LanguageRule(ls vault.Languages) string {
	main, total := ls.Main(), ls.Total()
	const tail = ", whatever the language of the question."
	switch {
	case len(main) == 0:
		return "The server cannot tell what language the notes are written in: write keywords and hypothetical_answer in the language of the notes " +
			"(as vault_search and vault_read show them)" + tail
	case len(main) == 1 && main[0].Name == "":
		return fmt.Sprintf("The notes are written in %s that the server cannot name: write keywords and hypothetical_answer in the language of the notes "+
			"(as vault_search and vault_read show them)"+tail, main[0].Label())
	case len(main) == 1:
		return fmt.Sprintf("The notes are written in %s: write keywords and hypothetical_answer in %s"+tail, main[0].Name, main[0].Name)
	}
	parts := make([]string, len(main))
	for i, l := range main {
		parts[i] = fmt.Sprintf("%s (%d%% of the notes)", l.Label(), share(l.Notes, total))
	}
	return fmt.Sprintf("The notes are written in several languages, %s: write keywords in each of them, side by side, and hypothetical_answer once in each"+tail,
		vault.JoinAnd(parts))
}

// LanguageInfo is what vault_overview says of the notes' language.
type LanguageInfo struct {
	// Rule is the rule for vault_search's keywords and hypothetical_answer
	// (LanguageRule), as the instructions give it.
	Rule string `json:"rule"`
	// Languages counts the notes by language, most first: each note's
	// language told from its first KiB of prose.
	Languages []LanguageShare `json:"languages"`
	// Script is the vault's dominant writing system and ScriptShare its
	// share of the letters (as /health's language reports them).
	Script      string  `json:"script,omitempty"`
	ScriptShare float64 `json:"script_share,omitempty"`
}

// LanguageShare is one language of the vault and its notes.
type LanguageShare struct {
	Name   string  `json:"name,omitempty"` // "" when only the script is known
	Script string  `json:"script"`
	Notes  int     `json:"notes"`
	Share  float64 `json:"share"` // of the notes counted, 2 decimals
}

// languageInfo describes the language of the vault an index was built from;
// langs stands in for an index that did not count its notes by language.
func languageInfo(db *index.DB, langs vault.Languages) LanguageInfo {
	if db.HasLanguages() {
		langs = db.Languages()
	}
	info := LanguageInfo{Rule: LanguageRule(langs), Languages: []LanguageShare{}}
	info.Script, info.ScriptShare = db.Script()
	total := langs.Total()
	for _, l := range langs {
		info.Languages = append(info.Languages, LanguageShare{Name: l.Name, Script: l.Script, Notes: l.Notes,
			Share: math.Round(100*float64(l.Notes)/float64(total)) / 100})
	}
	return info
}

// toolBriefs are the instructions' line for each tool, in listing order.
var toolBriefs = map[string]string{
	ToolSearch:   "Start with vault_search, with keywords and a hypothetical_answer: the first notes' passages often hold the answer; read further only when they do not.",
	ToolGrep:     "vault_grep finds exact text or a regex line by line: which notes mention X, exact names, codes and keys.",
	ToolRead:     "vault_read reads more of a note: a section, the paragraphs around a passage, or file lines.",
	ToolList:     "vault_list pages through notes by metadata.",
	ToolOverview: "vault_overview lists the values the filters take.",
	ToolReindex:  "vault_reindex refreshes the index (the server also watches the vault).",
	ToolDelta:    "vault_delta tells which candidate items the vault already covers.",
}

// Instructions are what the server tells a client at initialize: what the
// vault is and what each tool of the set listed (tools, as Options.Tools;
// nil: the default set) is for. The language rule is vault_search's
// description's, which every client shows the model (not every client
// shows the instructions); it is not said twice.
func Instructions(ls vault.Languages, tools []string) string {
	lines := []string{"vault-rag searches a folder of markdown notes (an Obsidian-style vault)."}
	for _, t := range enabledSpecs(ls, tools) {
		lines = append(lines, toolBriefs[t.def.Name])
	}
	return strings.Join(lines, "\n")
}
