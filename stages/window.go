package stages

import (
	"context"
	"strings"

	"github.com/vault-rag/vault-rag/index"
)

// DefaultWindowTokens is the "window" passage's budget when a configuration
// names none: half a 512-token window, about two demo-vault sections.
const DefaultWindowTokens = 256

// tokenCounter is what a scorer offers when it can count its own tokens (the
// cross-encoder and the embedder can); the window is measured with it.
type tokenCounter interface {
	CountTokens(text string) int
}

// approxTokens stands in for a tokenizer: English WordPiece runs at about four
// tokens to three words.
func approxTokens(text string) int { return (len(strings.Fields(text))*4 + 2) / 3 }

// windowPassage is the best-matching window of a note, at most budget tokens
// (title included): the chunk that matched, widened by whole neighbouring
// chunks, the next one first, while the whole still fits; or, when the chunk
// alone is longer than the budget, the stretch of it that holds the most query
// terms. A long note then costs the reranker what its best part costs, not
// what the whole note does.
func windowPassage(ctx context.Context, db *index.DB, n index.NoteRow, chunkID int64, terms []string, budget int, count func(string) int) (string, error) {
	cs, err := db.NoteChunks(ctx, n.ID)
	if err != nil {
		return "", err
	}
	at := -1
	for i, c := range cs {
		if c.ID == chunkID {
			at = i
			break
		}
	}
	if at < 0 { // the chunk is gone (an index changed under us): the note's start
		if len(cs) == 0 {
			return n.Title, nil
		}
		at = 0
	}
	room := budget - count(n.Title)
	text := func(c index.ChunkRow) string { return sectionText(c) }
	first := text(cs[at])
	if t := count(first); t > room {
		// Cut the chunk to the stretch with the most query terms, measured
		// in characters at the chunk's own characters-per-token.
		chars := max(1, len([]rune(first))*max(room, 1)/t)
		return n.Title + "\n" + Snippet(first, terms, chars), nil
	}
	used := count(first)
	lo, hi := at, at // the window is cs[lo..hi]
	for grew := true; grew; {
		grew = false
		if hi+1 < len(cs) {
			if t := count(text(cs[hi+1])); used+t <= room {
				hi++
				used += t
				grew = true
			}
		}
		if lo > 0 {
			if t := count(text(cs[lo-1])); used+t <= room {
				lo--
				used += t
				grew = true
			}
		}
	}
	parts := []string{n.Title}
	for _, c := range cs[lo : hi+1] {
		parts = append(parts, text(c))
	}
	return strings.Join(parts, "\n"), nil
}
