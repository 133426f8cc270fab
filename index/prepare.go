package index

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// parsed is a note ready to be written: parsed, chunked, and per chunk its
// embedding text, embed hash and tokens. A chunk indexed for keyword search
// only has no embedding text, tokens or vector, and the embed hash ""
// (keywordOnly).
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
	emb    Embedder
	tokens TokenEmbedder // nil when emb does not hand out ids
	ids    map[string][]int32
	n      map[string]int
}

func newTokenMemo(emb Embedder) *tokenMemo {
	m := &tokenMemo{emb: emb}
	m.tokens, _ = emb.(TokenEmbedder)
	return m
}

func (m *tokenMemo) reset() { m.ids, m.n = map[string][]int32{}, map[string]int{} }

func (m *tokenMemo) count(s string) int {
	if m.tokens != nil {
		ids, ok := m.ids[s]
		if !ok {
			ids = m.tokens.Tokens(s)
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
	if m.tokens != nil && m.tokens.Window() > 0 {
		return m.tokens.Window()
	}
	return vault.MaxTokens
}

// prepareNote parses and chunks one file: the one step both builds take for
// every file they read, and where every refusal that is the note's own is
// made, before anything of it is embedded or written. An empty file is no
// note: ok is false and rep records it as skipped; so is a note that could
// not be read as one (a bug of the parser or the chunker, caught here so it
// costs that note alone). A note that would make more than maxChunks chunks
// keeps its first maxChunks, for keyword search only (none is embedded), with
// a warning saying what was left out. A note's warnings go to rep.Warnings.
func prepareNote(f vault.File, emb Embedder, memo *tokenMemo, maxChunks int, rep *Report) (p parsed, ok bool) {
	if len(strings.TrimSpace(string(f.Raw))) == 0 {
		rep.Skipped = append(rep.Skipped, vault.Skipped{Path: f.Path, Problem: vault.NewProblem("empty file")})
		return p, false
	}
	defer func() {
		if r := recover(); r != nil {
			p, ok = parsed{}, false
			rep.Skipped = append(rep.Skipped, vault.Skipped{Path: f.Path, Problem: noteFailed(fmt.Sprint(r))})
		}
	}()
	memo.reset()
	n := vault.ParseNote(f.Path, f.Raw, f.ModTime)
	var cut *vault.Cut
	n.Chunks, cut = vault.ChunkNoteMax(n.Title, n.Body, memo.count, vault.MaxTokens, chunkLimit(maxChunks))
	if cut != nil {
		n.Warnings = append(n.Warnings, cut.Reason())
	}
	p.note = n
	for _, c := range n.Chunks {
		if cut != nil { // too long: every chunk is keywordOnly
			p.texts, p.hashes, p.ntoks = append(p.texts, ""), append(p.hashes, keywordOnly), append(p.ntoks, 0)
			continue
		}
		t := vault.EmbedText(n.Title, c)
		p.texts = append(p.texts, t)
		p.hashes = append(p.hashes, embedHash(emb.Name(), t))
		p.ntoks = append(p.ntoks, min(memo.count(t), memo.window()))
		if memo.tokens != nil {
			p.ids = append(p.ids, memo.ids[t])
		}
	}
	// Only a note prepared whole reports its warnings.
	for _, w := range n.Warnings {
		rep.Warnings = append(rep.Warnings, vault.Skipped{Path: f.Path, Problem: w})
	}
	return p, true
}

// keywordOnly is the embed hash of a chunk indexed for keyword search only:
// it has no vector, and is not counted among the chunks to embed.
const keywordOnly = ""

// countKeywordOnly counts p's keywordOnly chunks.
func countKeywordOnly(p *parsed) int {
	n := 0
	for _, h := range p.hashes {
		if h == keywordOnly {
			n++
		}
	}
	return n
}

// chunkLimit is the chunks a note keeps: max, else vault.DefaultMaxChunks,
// and never more than a note's chunk ids hold.
func chunkLimit(max int) int {
	if max <= 0 {
		max = vault.DefaultMaxChunks
	}
	return min(max, chunkIDsPerNote-1)
}

// noteFailed is the problem of a note that could not be indexed for a
// reason of its own that is no known refusal: a failure of the code that
// read it, which the build survives and the user can report.
func noteFailed(cause string) vault.Problem {
	const kind = "could not be indexed (an error in vault-rag; please report it)"
	return vault.Problem{Reason: kind + ": " + cause, Kind: kind, Detail: cause}
}

// prepare runs prepareNote over files, keeping the notes in memory: what an
// incremental build needs of the few files that changed.
func prepare(ctx context.Context, files []vault.File, emb Embedder, maxChunks int, rep *Report) ([]parsed, error) {
	var out []parsed
	err := prepareEach(ctx, files, emb, maxChunks, rep, func(_ int, p parsed, ok bool) error {
		if ok {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// prepareEach runs prepareNote over files on every core (tokenizing is most
// of a note's cost) and hands each result to emit in file order, on the
// caller's goroutine, with its skips and warnings added to rep in that order
// too: the output is the same as one goroutine's. At most a few notes per
// core wait for emit, so memory does not grow with the vault.
func prepareEach(ctx context.Context, files []vault.File, emb Embedder, maxChunks int, rep *Report, emit func(i int, p parsed, ok bool) error) error {
	workers := min(runtime.GOMAXPROCS(0), len(files))
	if workers <= 1 {
		memo := newTokenMemo(emb)
		for i := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			p, ok := prepareNote(files[i], emb, memo, maxChunks, rep)
			if err := emit(i, p, ok); err != nil {
				return err
			}
		}
		return nil
	}
	type result struct {
		p   parsed
		ok  bool
		rep Report
	}
	// Note i goes to slot i%window, handed out only once note i-window has
	// been taken from it, so a worker never waits to deliver.
	window := 4 * workers
	slots := make([]chan result, window)
	free := make(chan struct{}, window)
	for k := range slots {
		slots[k] = make(chan result, 1)
		free <- struct{}{}
	}
	ctx, cancel := context.WithCancel(ctx)
	next := make(chan int)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	go func() {
		defer close(next)
		for i := range files {
			select {
			case <-free:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			memo := newTokenMemo(emb) // a memo per worker: it is not shared
			for i := range next {
				var r result
				r.p, r.ok = prepareNote(files[i], emb, memo, maxChunks, &r.rep)
				slots[i%window] <- r
			}
		}()
	}
	for i := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		var r result
		select {
		case r = <-slots[i%window]:
		case <-ctx.Done():
			return ctx.Err()
		}
		free <- struct{}{}
		rep.Skipped = append(rep.Skipped, r.rep.Skipped...)
		rep.Warnings = append(rep.Warnings, r.rep.Warnings...)
		if err := emit(i, r.p, r.ok); err != nil {
			return err
		}
	}
	return nil
}

// ChunkTexts returns the texts a full build of the vault would embed, in
// order: what a benchmark hands the model directly to compare its rate with
// the indexer's.
func ChunkTexts(ctx context.Context, vaultPath string, emb Embedder) ([]string, error) {
	files, _, err := vault.Scan(ctx, vaultPath, vault.ScanOptions{})
	if err != nil {
		return nil, err
	}
	ps, err := prepare(ctx, files, emb, 0, &Report{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.texts...)
	}
	return out, nil
}
