package server

import (
	"fmt"
	"math"

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

// Instructions are what the server tells a client at initialize: what the
// vault is, the language rule, and what each tool is for.
func Instructions(ls vault.Languages) string {
	return `vault-rag searches a folder of markdown notes (an Obsidian-style vault).
` + LanguageRule(ls) + `
Start with vault_search: send the question, with keywords and a hypothetical_answer. Each note found
comes with the passages that best match, under their heading path, and a match saying how each search
branch ranked it and which of your words it lacks; the first notes' passages often hold the answer,
so read further only when they do not.
vault_read reads more of a note: a section (any heading, or a passage's heading path), an anchor
passage, or file lines, a page at a time.
vault_grep finds exact text or a regular expression line by line, like grep: for which notes mention X,
for exact names, codes and keys, and with sort "date" for when X first appeared.
vault_overview lists the values the filters take (folders, types, projects, statuses, topics, dates);
vault_list pages through notes by metadata; vault_delta tells which candidate items the vault
already covers; vault_reindex refreshes the index (the server also watches the vault).`
}
