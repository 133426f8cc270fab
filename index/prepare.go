package index

import (
	"context"
	"strings"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// parsed is a note ready to be written: parsed, chunked, and per chunk its
// embedding text, embed hash and tokens.
type parsed struct {
	note   vault.Note
	texts  []string  // embedding text per chunk
	hashes []string  // embed hash per chunk
	ntoks  []int     // tokens per chunk (for length-sorted batching)
	ids    [][]int32 // token ids per chunk, when the embedder gives them
	vecs   [][]float32
}

// tokenMemo counts tokens for the chunker and remembers the ids, so a chunk's
// text is tokenized once: the chunker counts every final chunk's text.
type tokenMemo struct {
	emb Embedder
	tok TokenEmbedder // nil when emb does not hand out ids
	ids map[string][]int32
	n   map[string]int
}

func newTokenMemo(emb Embedder) *tokenMemo {
	m := &tokenMemo{emb: emb}
	m.tok, _ = emb.(TokenEmbedder)
	return m
}

func (m *tokenMemo) reset() { m.ids, m.n = map[string][]int32{}, map[string]int{} }

func (m *tokenMemo) count(s string) int {
	if m.tok != nil {
		ids, ok := m.ids[s]
		if !ok {
			ids = m.tok.Tokens(s)
			m.ids[s] = ids
		}
		return len(ids)
	}
	n, ok := m.n[s]
	if !ok {
		n = m.emb.CountTokens(s)
		m.n[s] = n
	}
	return n
}

// window is the longest sequence the model embeds; longer ones are cut.
func (m *tokenMemo) window() int {
	if m.tok != nil && m.tok.Window() > 0 {
		return m.tok.Window()
	}
	return vault.MaxTokens
}

// prepareNote parses and chunks one file: the one step both builds take for
// every file they read. An empty file is no note: ok is false and rep
// records it as skipped; a note's warnings go to rep.Warnings.
func prepareNote(f vault.File, emb Embedder, memo *tokenMemo, rep *Report) (p parsed, ok bool) {
	if len(strings.TrimSpace(string(f.Raw))) == 0 {
		rep.Skipped = append(rep.Skipped, vault.Skipped{Path: f.Path, Problem: vault.NewProblem("empty file")})
		return p, false
	}
	memo.reset()
	n := vault.ParseNote(f.Path, f.Raw, f.ModTime)
	n.Chunks = vault.ChunkNote(n.Title, n.Body, memo.count, vault.MaxTokens)
	for _, w := range n.Warnings {
		rep.Warnings = append(rep.Warnings, vault.Skipped{Path: f.Path, Problem: w})
	}
	p.note = n
	for _, c := range n.Chunks {
		t := vault.EmbedText(n.Title, c)
		p.texts = append(p.texts, t)
		p.hashes = append(p.hashes, embedHash(emb.Name(), t))
		p.ntoks = append(p.ntoks, min(memo.count(t), memo.window()))
		if memo.tok != nil {
			p.ids = append(p.ids, memo.ids[t])
		}
	}
	return p, true
}

// prepare runs prepareNote over files, keeping the notes in memory: what an
// incremental build needs of the few files that changed.
func prepare(files []vault.File, emb Embedder, rep *Report) []parsed {
	var out []parsed
	memo := newTokenMemo(emb)
	for _, f := range files {
		if p, ok := prepareNote(f, emb, memo, rep); ok {
			out = append(out, p)
		}
	}
	return out
}

// ChunkTexts returns the texts a full build of the vault would embed, in
// order: what a benchmark hands the model directly to compare its rate with
// the indexer's.
func ChunkTexts(ctx context.Context, vaultPath string, emb Embedder) ([]string, error) {
	files, _, err := vault.Scan(ctx, vaultPath, vault.ScanOptions{})
	if err != nil {
		return nil, err
	}
	ps := prepare(files, emb, &Report{})
	var out []string
	for _, p := range ps {
		out = append(out, p.texts...)
	}
	return out, nil
}
