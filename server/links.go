package server

import (
	"context"
	"regexp"
	"strings"

	"github.com/vault-rag/vault-rag/index"
)

// wikilinkRE is a wikilink or embed: [[target]], [[target#heading]],
// [[target#^block]], each with an optional |alias.
var wikilinkRE = regexp.MustCompile(`\[\[([^\[\]|#^]+)((?:#|\^)[^\[\]|]*)?(\|[^\[\]]*)?\]\]`)

// resolvePassageLinks writes each wikilink of the notes' passages with the
// vault-relative path of the note it names, as the build resolves links
// ([[Daily note]] becomes [[journal/Daily note.md]]), so that the model can
// pass it to vault_read without a search; a link that names no note, or
// that already is its path, stays as written.
func resolvePassageLinks(ctx context.Context, db *index.DB, notes []SearchNote) {
	cache := map[string]string{}
	resolve := func(m string) string {
		sub := wikilinkRE.FindStringSubmatch(m)
		target := strings.TrimSpace(sub[1])
		p, seen := cache[target]
		if !seen {
			p, _, _ = db.ResolveLink(ctx, target)
			cache[target] = p
		}
		if p == "" || p == target || p == target+".md" {
			return m
		}
		return "[[" + p + sub[2] + sub[3] + "]]"
	}
	for i := range notes {
		for j := range notes[i].Passages {
			if t := notes[i].Passages[j].Text; strings.Contains(t, "[[") {
				notes[i].Passages[j].Text = wikilinkRE.ReplaceAllStringFunc(t, resolve)
			}
		}
	}
}
