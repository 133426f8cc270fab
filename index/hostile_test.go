package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// hostileHeadings is a note of 100,001 headings, "# Many headings" and
// "## H0" … "## H99999": 100,000 chunks, more than a note's chunk ids hold.
func hostileHeadings() string {
	var b strings.Builder
	b.WriteString("# Many headings\n\n")
	for i := range 100000 {
		fmt.Fprintf(&b, "## H%d\n", i)
	}
	return b.String()
}

// hostileNotes are the notes that each once stopped, or could stop, a build,
// by path, and what the build reports of each: "skipped: " or "warning: "
// and the reason ("…" at the end: its start).
func hostileNotes() (notes map[string]string, want map[string]string) {
	var links strings.Builder
	links.WriteString("# Links\n\nSee [[ordinary-03]].\n\n")
	for i := range 100000 {
		fmt.Fprintf(&links, "- [[Nowhere %d]]\n", i)
	}
	notes = map[string]string{
		"zz-bad/headings.md": hostileHeadings(),
		// 5 MB on one line: of short words (thousands of chunks), and of
		// no space at all (one "word", embedded as a prefix).
		"zz-bad/line-words.md": "# Words\n\n" + strings.Repeat("ab ", 5<<20/3),
		"zz-bad/line-blob.md":  "# Blob\n\n" + strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", 5<<20/35),
		"zz-bad/links.md":      links.String(),
		"zz-bad/empty.md":      "",
	}
	want = map[string]string{
		"zz-bad/headings.md":   "warning: note too long: only its first 2000 chunks are indexed, for keyword search only; the last 99% of its text, from “## H2000” on, is not searchable",
		"zz-bad/line-words.md": "warning: note too long: only its first 2000 chunks are indexed, for keyword search only; the last 4…",
		"zz-bad/links.md":      "warning: 100001 links; only the first 10000 are kept for related notes",
		"zz-bad/empty.md":      "skipped: empty file",
	}
	return notes, want
}

// ordinaryNotes are ten notes, each with a word of its own.
func ordinaryNotes() map[string]string {
	m := map[string]string{}
	for i := range 10 {
		m[fmt.Sprintf("ordinary-%02d.md", i)] = fmt.Sprintf("# Ordinary %d\n\nA plain note about quokka%02d.\n\n## More\n\nIt links [[ordinary-%02d]].\n", i, i, (i+1)%10)
	}
	return m
}

// TestHostileNotes: a vault of ordinary notes and notes built to stop an
// indexer (100,001 headings, 5 MB on one line, 100,000 links, an empty
// file) builds, full and incremental, with every ordinary note searchable
// and each hostile one indexed in part or skipped with its reason; the part
// of the headings note past its cut is never embedded.
func TestHostileNotes(t *testing.T) {
	bad, want := hostileNotes()
	for _, tc := range []struct {
		name string
		// first, when set, is built before the hostile notes are added,
		// and the build under test is an incremental one: the server's
		// watcher's case.
		first       bool
		incremental bool
	}{
		{name: "full"},
		{name: "incremental", first: true, incremental: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vaultDir := filepath.Join(t.TempDir(), "vault")
			dbPath := filepath.Join(t.TempDir(), "vault.db")
			vaulttest.WriteTree(t, vaultDir, ordinaryNotes(), testTime)
			emb := newFake()
			if tc.first {
				build(t, emb, vaultDir, dbPath, false)
				emb.reset()
			}
			vaulttest.WriteTree(t, vaultDir, bad, testTime)

			rep, err := Build(context.Background(), emb, BuildOptions{VaultPath: vaultDir, DBPath: dbPath, Incremental: tc.incremental})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if rep.Mode != map[bool]string{false: "full", true: "incremental"}[tc.incremental] || rep.Fallback != "" {
				t.Errorf("mode %q (fallback %q)", rep.Mode, rep.Fallback)
			}
			got := map[string]string{}
			for _, s := range rep.Skipped {
				got[s.Path] = "skipped: " + s.Reason
			}
			for _, w := range rep.Warnings {
				got[w.Path] = "warning: " + w.Reason
			}
			for p, w := range want {
				g, ok := got[p]
				if head, prefix := strings.CutSuffix(w, "…"); prefix && !strings.HasPrefix(g, head) || !prefix && g != w || !ok {
					t.Errorf("%s: %q, want %q", p, g, w)
				}
			}
			for p, g := range got {
				if _, ok := want[p]; !ok {
					t.Errorf("%s: unexpected %q", p, g)
				}
			}

			d := open(t, dbPath)
			for i := range 10 {
				p := fmt.Sprintf("ordinary-%02d.md", i)
				if got := keywordPaths(t, d, fmt.Sprintf(`"quokka%02d"`, i), Filter{}); !reflect.DeepEqual(got, []string{p}) {
					t.Errorf("keyword search for %s's word: %q", p, got)
				}
			}
			ids := noteIDs(t, d)
			for p := range bad {
				if _, in := ids[p]; in == (p == "zz-bad/empty.md") {
					t.Errorf("%s indexed: %v", p, in)
				}
			}
			chunks, err := d.NoteChunks(context.Background(), ids["zz-bad/headings.md"])
			if err != nil {
				t.Fatal(err)
			}
			if len(chunks) != vault.DefaultMaxChunks || chunks[0].Heading != "H0" || chunks[len(chunks)-1].Heading != "H1999" {
				t.Errorf("headings.md: %d chunks, want its first %d", len(chunks), vault.DefaultMaxChunks)
			}
			if got := keywordPaths(t, d, `"h1999"`, Filter{}); !reflect.DeepEqual(got, []string{"zz-bad/headings.md"}) {
				t.Errorf("keyword search for the last heading kept: %q", got)
			}
			if got := keywordPaths(t, d, `"h2000"`, Filter{}); len(got) != 0 {
				t.Errorf("keyword search for the first heading cut: %q", got)
			}

			// The model saw nothing of the notes too long to embed, and
			// every other chunk has its vector.
			for _, text := range emb.texts() {
				if strings.HasPrefix(text, "Many headings\n") || strings.HasPrefix(text, "Words\n") {
					t.Fatalf("embedded %.40q, of a note too long to embed", text)
				}
			}
			cov, err := d.Coverage(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want := rep.Chunks - 2*vault.DefaultMaxChunks; cov.Chunks != want || !cov.Complete() {
				t.Errorf("coverage %+v, want all %d chunks but the two long notes' embedded", cov, want)
			}
			if rep.KeywordOnly != 2*vault.DefaultMaxChunks {
				t.Errorf("report: %d chunks for keyword search only, want the two long notes' %d", rep.KeywordOnly, 2*vault.DefaultMaxChunks)
			}

			// A later incremental build of the same vault changes nothing
			// and reports the same.
			emb.reset()
			rep2, err := Build(context.Background(), emb, BuildOptions{VaultPath: vaultDir, DBPath: dbPath, Incremental: true})
			if err != nil {
				t.Fatalf("incremental Build after: %v", err)
			}
			if rep2.Unchanged != rep.Notes || rep2.Added+rep2.Changed+rep2.Removed != 0 || len(emb.texts()) != 0 {
				t.Errorf("incremental build after: %+v, embedded %d", rep2.Counts, len(emb.texts()))
			}
		})
	}
}

// panicky panics counting the tokens of a text that holds "KABOOM": a bug
// of the chunker that one note's text sets off.
type panicky struct{ *fakeEmbedder }

func (p panicky) CountTokens(s string) int {
	if strings.Contains(s, "KABOOM") {
		panic("index out of range [3] with length 3")
	}
	return p.fakeEmbedder.CountTokens(s)
}

// TestNoteFailureIsTheNotes: a note whose preparing fails (here a panic) is
// skipped with the cause, in both builds, and every other note is indexed;
// an error that is not the note's (the model failing) still fails the build.
func TestNoteFailureIsTheNotes(t *testing.T) {
	for _, incremental := range []bool{false, true} {
		t.Run(fmt.Sprint("incremental=", incremental), func(t *testing.T) {
			vaultDir := filepath.Join(t.TempDir(), "vault")
			dbPath := filepath.Join(t.TempDir(), "vault.db")
			vaulttest.WriteTree(t, vaultDir, ordinaryNotes(), testTime)
			if incremental {
				build(t, newFake(), vaultDir, dbPath, false)
			}
			if err := os.WriteFile(filepath.Join(vaultDir, "boom.md"), []byte("# Boom\n\nKABOOM\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := Build(context.Background(), panicky{newFake()}, BuildOptions{VaultPath: vaultDir, DBPath: dbPath, Incremental: incremental})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			want := []vault.Skipped{{Path: "boom.md", Problem: noteFailed("index out of range [3] with length 3")}}
			if !reflect.DeepEqual(rep.Skipped, want) {
				t.Errorf("skipped %+v, want %+v", rep.Skipped, want)
			}
			if !strings.HasPrefix(want[0].Reason, "could not be indexed (an error in vault-rag; please report it): ") {
				t.Errorf("reason %q", want[0].Reason)
			}
			if rep.Notes != 10 {
				t.Errorf("%d notes indexed, want the 10 others", rep.Notes)
			}
			d := open(t, dbPath)
			if got := keywordPaths(t, d, `"quokka04"`, Filter{}); !reflect.DeepEqual(got, []string{"ordinary-04.md"}) {
				t.Errorf("keyword search: %q", got)
			}
			d.Close()

			// The model failing is not the note's fault: the build fails.
			if err := os.WriteFile(filepath.Join(vaultDir, "new.md"), []byte("# New\n\nfresh words\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			failing := newFake()
			failing.failAfter = 0
			if _, err := Build(context.Background(), failing, BuildOptions{VaultPath: vaultDir, DBPath: dbPath, Incremental: incremental}); err == nil {
				t.Error("Build with a failing model succeeded")
			}
		})
	}
}

// BenchmarkChunkHostile measures preparing the hostile notes with the
// indexer's token counting (go test -bench ChunkHostile).
func BenchmarkChunkHostile(b *testing.B) {
	notes, _ := hostileNotes()
	for _, p := range []string{"zz-bad/headings.md", "zz-bad/line-words.md", "zz-bad/line-blob.md", "zz-bad/links.md"} {
		f := vault.File{Path: p, Raw: []byte(notes[p])}
		b.Run(strings.TrimSuffix(filepath.Base(p), ".md"), func(b *testing.B) {
			emb := wordIDs{newFake()}
			memo := newTokenMemo(emb)
			for b.Loop() {
				if _, ok := prepareNote(f, emb, memo, 0, &Report{}); !ok {
					b.Fatal("not prepared")
				}
			}
		})
	}
}

// BenchmarkBuildHostile measures a full build of ten ordinary notes, alone
// and beside the note of 100,001 headings (go test -bench BuildHostile
// ./index): the difference is what that note costs a build. The model is
// never given any of its text (TestHostileNotes), so the tests' fake
// embedder stands in for it; what that leaves out is the real tokenizer's
// time over the note's sections.
func BenchmarkBuildHostile(b *testing.B) {
	for _, tc := range []struct {
		name  string
		extra map[string]string
	}{
		{"ordinary", nil},
		{"with-headings", map[string]string{"zz-bad/headings.md": hostileHeadings()}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			vaultDir := filepath.Join(b.TempDir(), "vault")
			vaulttest.WriteTree(b, vaultDir, ordinaryNotes(), testTime)
			vaulttest.WriteTree(b, vaultDir, tc.extra, testTime)
			dbPath := filepath.Join(b.TempDir(), "vault.db")
			for b.Loop() {
				if _, err := Build(context.Background(), newFake(), BuildOptions{VaultPath: vaultDir, DBPath: dbPath, NoCache: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
