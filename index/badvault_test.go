package index

import (
	"context"
	"errors"
	vpkg "github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// badVaultDeep is the folder of the deep note: 64 levels.
var badVaultDeep = strings.Repeat("level/", 64)

// writeBadVault writes one vault holding every kind of file a real vault can
// throw at the indexer, and returns its root and the path of its FIFO.
func writeBadVault(t *testing.T) (vault, fifo string) {
	t.Helper()
	vault = filepath.Join(t.TempDir(), "vault")
	vaulttest.WriteTree(t, vault, map[string]string{
		"ok.md":                   "# OK\n\nAn ordinary note linking [[Über café 東京]].\n",
		"binary.md":               "# looks like a note\x00\x01\x02\xff then binary",
		"invalid-utf8.md":         "# Caf\xe9\n\nlatin-1 bytes \xe9\xe8 in a UTF-8 vault\n",
		"bom.md":                  "\ufeff---\ntype: bom\n---\n# BOM title\n\nbody after a byte-order mark\n",
		"crlf.md":                 "---\r\ntype: crlf\r\n---\r\n# CRLF title\r\n\r\n## Section\r\n\r\nwindows line ends\r\n",
		"empty.md":                "",
		"blank.md":                " \n\t\n\n",
		"frontmatter-only.md":     "---\ntype: stub\nproject: atlas\n---\n",
		"not-yaml.md":             "---\n: [unclosed\n\t- tab\n---\n# Not YAML\n\nbody kept\n",
		"duplicate-keys.md":       "---\ntype: first\ntype: second\n---\n# Dup\n",
		badVaultDeep + "deep.md":  "# Deep\n\nsixty-four folders down\n",
		"with space.md":           "# Spaced\n",
		"Über café 東京.md":         "# Unicode name\n",
		"folder with space/ñ.md":  "# Enye\n",
		".obsidian/workspace.md":  "# hidden folder, not a note\n",
		"attachments/picture.png": "\x89PNG\r\n\x1a\n\x00",
	}, testTime)

	// 50 MB, sparse: the scanner must refuse it by size, without reading it.
	huge, err := os.Create(filepath.Join(vault, "huge.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := huge.WriteString("# Huge export\n"); err != nil {
		t.Fatal(err)
	}
	if err := huge.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	huge.Close()

	outside := filepath.Join(filepath.Dir(vault), "outside")
	vaulttest.WriteTree(t, outside, map[string]string{"secret.md": "# not in the vault\n"}, testTime)
	for name, target := range map[string]string{
		"loop-a.md":   "loop-b.md",
		"loop-b.md":   "loop-a.md",
		"self.md":     "self.md",
		"dir-loop.md": ".",
		"outside.md":  filepath.Join(outside, "secret.md"),
	} {
		if err := os.Symlink(target, filepath.Join(vault, name)); err != nil {
			t.Fatal(err)
		}
	}
	// Tests run as root, so a chmod 000 file is still readable: a FIFO is the
	// file that cannot be read (opening it blocks until a writer comes).
	fifo = filepath.Join(vault, "x.md")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	return vault, fifo
}

// guardFIFO watches a FIFO until stop is closed. Whoever opens it for reading
// blocks until a writer comes; the guard is that writer, so a scanner that
// opens it is reported (opened yields true) instead of hanging the test.
func guardFIFO(fifo string, stop <-chan struct{}) (opened <-chan bool) {
	out := make(chan bool, 1)
	go func() {
		seen := false
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				out <- seen
				return
			case <-tick.C:
			}
			// O_NONBLOCK write-open fails with ENXIO unless a reader has it open.
			f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				seen = true
				f.Close() // the reader sees EOF and goes on
			}
		}
	}()
	return out
}

// TestBadVault indexes one vault with every kind of awkward file and checks
// each is indexed (with a warning where something was wrong) or skipped with
// its reason, that none stops the build, and that the vault is not written.
func TestBadVault(t *testing.T) {
	vault, fifo := writeBadVault(t)
	dbPath := filepath.Join(t.TempDir(), "vault.db")
	before := vaulttest.MustDigest(t, vault)

	// Scan alone: it must refuse the 50 MB file by its size, not read it. A
	// read would allocate at least the file's size.
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	stop := make(chan struct{})
	opened := guardFIFO(fifo, stop)
	files, _, err := vpkg.Scan(context.Background(), vault, vpkg.ScanOptions{})
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 16<<20 {
		t.Errorf("Scan allocated %d bytes for a vault of small notes and one 50 MB file: the big file was read", alloc)
	}
	if len(files) == 0 {
		t.Fatal("Scan found no files")
	}

	rep, err := Build(context.Background(), newFake(), BuildOptions{VaultPath: vault, DBPath: dbPath})
	close(stop)
	if <-opened {
		t.Error("the scanner opened the FIFO x.md (it would hang without a writer)")
	}
	if err != nil {
		t.Fatalf("Build stopped on a bad file: %v", err)
	}

	wantIndexed := []string{
		"bom.md",
		"crlf.md",
		"duplicate-keys.md",
		"folder with space/ñ.md",
		"frontmatter-only.md",
		"invalid-utf8.md",
		badVaultDeep + "deep.md",
		"not-yaml.md",
		"ok.md",
		"with space.md",
		"Über café 東京.md",
	}
	sort.Strings(wantIndexed)
	d := open(t, dbPath)
	rows, total, err := d.List(context.Background(), Filter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var gotIndexed []string
	byPath := map[string]NoteRow{}
	for _, r := range rows {
		gotIndexed = append(gotIndexed, r.Path)
		byPath[r.Path] = r
	}
	if !reflect.DeepEqual(gotIndexed, wantIndexed) || total != len(wantIndexed) || rep.Notes != len(wantIndexed) {
		t.Errorf("indexed (%d, report %d):\n  %q\nwant:\n  %q", total, rep.Notes, gotIndexed, wantIndexed)
	}

	// Skipped: path → reason, exactly; reasons that quote the OS error are
	// matched on their stable start.
	wantSkipped := map[string]string{
		"binary.md":   "binary content (NUL bytes)",
		"blank.md":    "empty file",
		"dir-loop.md": "symlink to something that is not a file",
		"empty.md":    "empty file",
		"huge.md":     "too large (52428800 bytes; the limit is 8388608)",
		"loop-a.md":   "broken or looping symlink: ",
		"loop-b.md":   "broken or looping symlink: ",
		"outside.md":  "symlink leads outside the vault",
		"self.md":     "broken or looping symlink: ",
		"x.md":        "not a regular file",
	}
	gotSkipped := map[string]string{}
	for _, s := range rep.Skipped {
		if _, dup := gotSkipped[s.Path]; dup {
			t.Errorf("%s skipped twice", s.Path)
		}
		gotSkipped[s.Path] = s.Reason
	}
	for p, want := range wantSkipped {
		got, ok := gotSkipped[p]
		switch {
		case !ok:
			t.Errorf("%s not skipped (want %q)", p, want)
		case strings.HasSuffix(want, ": ") && !(strings.HasPrefix(got, want) && len(got) > len(want)):
			t.Errorf("%s skipped for %q, want %q and the cause", p, got, want)
		case !strings.HasSuffix(want, ": ") && got != want:
			t.Errorf("%s skipped for %q, want %q", p, got, want)
		}
	}
	for p, got := range gotSkipped {
		if _, ok := wantSkipped[p]; !ok {
			t.Errorf("%s skipped unexpectedly: %s", p, got)
		}
	}
	if !sort.SliceIsSorted(rep.Skipped, func(i, j int) bool { return rep.Skipped[i].Path < rep.Skipped[j].Path }) {
		t.Errorf("skipped list is not in path order: %v", rep.Skipped)
	}

	wantWarnings := map[string][]string{
		"invalid-utf8.md":   {"invalid UTF-8 replaced with U+FFFD"},
		"not-yaml.md":       {"frontmatter is not valid YAML (ignored): "},
		"duplicate-keys.md": {`frontmatter: duplicate key "type" (the last one wins)`},
	}
	gotWarnings := map[string][]string{}
	for _, w := range rep.Warnings {
		gotWarnings[w.Path] = append(gotWarnings[w.Path], w.Reason)
	}
	if len(gotWarnings) != len(wantWarnings) {
		t.Errorf("warnings %q, want %q", gotWarnings, wantWarnings)
	}
	for p, want := range wantWarnings {
		got := gotWarnings[p]
		if len(got) != len(want) {
			t.Errorf("%s: warnings %q, want %q", p, got, want)
			continue
		}
		for i := range want {
			if strings.HasSuffix(want[i], ": ") && (!strings.HasPrefix(got[i], want[i]) || len(got[i]) == len(want[i])) ||
				!strings.HasSuffix(want[i], ": ") && got[i] != want[i] {
				t.Errorf("%s: warning %q, want %q", p, got[i], want[i])
			}
		}
		// The warning is stored with the note, for the tools that show it.
		if !reflect.DeepEqual(byPath[p].Warnings, got) {
			t.Errorf("%s: stored warnings %q, report %q", p, byPath[p].Warnings, got)
		}
	}

	// What the awkward notes were read as.
	for _, c := range []struct{ path, title, typ string }{
		{"bom.md", "BOM title", "bom"},
		{"crlf.md", "CRLF title", "crlf"},
		{"duplicate-keys.md", "Dup", "second"},
		{"frontmatter-only.md", "frontmatter-only", "stub"},
		{"invalid-utf8.md", "Caf\uFFFD", ""},
		{"not-yaml.md", "Not YAML", ""},
		{"Über café 東京.md", "Unicode name", ""},
		{badVaultDeep + "deep.md", "Deep", ""},
	} {
		r := byPath[c.path]
		if r.Title != c.title || r.Type != c.typ {
			t.Errorf("%s: title %q type %q, want %q %q", c.path, r.Title, r.Type, c.title, c.typ)
		}
	}
	chunks, err := d.NoteChunks(context.Background(), byPath["crlf.md"].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 1 || chunks[0].Heading != "Section" || chunks[0].Body != "windows line ends" {
		t.Errorf("crlf.md chunks %+v, want one \"Section\" chunk without carriage returns", chunks)
	}
	if rel, err := d.Related(context.Background(), byPath["ok.md"].ID); err != nil || len(rel) != 1 || rel[0].Path != "Über café 東京.md" {
		t.Errorf("ok.md related %+v (%v), want the link to the non-ASCII file name resolved", rel, err)
	}
	if got := keywordPaths(t, d, `"sixty"`, Filter{}); !reflect.DeepEqual(got, []string{badVaultDeep + "deep.md"}) {
		t.Errorf("keyword search for the deep note: %q", got)
	}

	if d := vaultfs.Diff(before, vaulttest.MustDigest(t, vault), ""); d != nil {
		t.Errorf("the vault changed during the build: %q", d)
	}

	// An incremental build over the same vault agrees and still writes nothing.
	rep2, err := Build(context.Background(), newFake(), BuildOptions{VaultPath: vault, DBPath: dbPath, Incremental: true})
	if err != nil {
		t.Fatalf("incremental Build: %v", err)
	}
	if rep2.Mode != "incremental" || rep2.Fallback != "" || rep2.Unchanged != len(wantIndexed) || rep2.Added+rep2.Changed+rep2.Removed != 0 {
		t.Errorf("incremental report %+v, want every note unchanged", rep2)
	}
	if len(rep2.Skipped) != len(wantSkipped) {
		t.Errorf("incremental build skipped %d files, the full one %d", len(rep2.Skipped), len(wantSkipped))
	}
	if d := vaultfs.Diff(before, vaulttest.MustDigest(t, vault), ""); d != nil {
		t.Errorf("the vault changed during the incremental build: %q", d)
	}
}

// TestOpenRollsBackHotJournal: an incremental build killed after SQLite began
// overwriting the index file leaves a hot rollback journal. The index is
// sound once the journal is rolled back, which needs a read-write
// connection; Open (read-only) must do that rather than call the index
// corrupt.
func TestOpenRollsBackHotJournal(t *testing.T) {
	if p := os.Getenv("VAULT_RAG_TEST_KILLED_WRITER"); p != "" {
		// The child: change the index with a one-page cache, so the change
		// spills into the file before any commit, and die mid-transaction.
		db, err := openSQLite(p, false)
		if err != nil {
			panic(err)
		}
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			panic(err)
		}
		for _, q := range []string{"PRAGMA cache_size = 1", "BEGIN", "DELETE FROM chunks_fts", "DELETE FROM chunks", "DELETE FROM notes", "UPDATE meta SET value = 'x'"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				panic(err)
			}
		}
		os.Exit(3)
	}

	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	wantStats, err := d.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.Close()

	cmd := exec.Command(os.Args[0], "-test.run", "^TestOpenRollsBackHotJournal$")
	cmd.Env = append(os.Environ(), "VAULT_RAG_TEST_KILLED_WRITER="+dbPath)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("the writer did not die mid-transaction: %v\n%s", err, out)
	}
	head := make([]byte, 8)
	if f, err := os.Open(dbPath + "-journal"); err != nil {
		t.Fatalf("no journal left: %v", err)
	} else {
		f.Read(head)
		f.Close()
	}
	if string(head) != "\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" {
		t.Fatalf("the journal left is not hot (header %x): the test does not test", head)
	}

	d = open(t, dbPath)
	got, err := d.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Notes != wantStats.Notes || got.Chunks != wantStats.Chunks || got.Fingerprint != wantStats.Fingerprint {
		t.Errorf("after the rollback: %+v, want %+v", got, wantStats)
	}
	if got := keywordPaths(t, d, `"zebras"`, Filter{}); !reflect.DeepEqual(got, []string{"alpha.md"}) {
		t.Errorf("keyword search after the rollback: %q", got)
	}
	if _, err := os.Stat(dbPath + "-journal"); err == nil {
		t.Error("the hot journal is still there")
	}
	// An incremental build goes on from the recovered index.
	if rep := build(t, newFake(), vault, dbPath, true); rep.Fallback != "" || rep.Unchanged != fixtureNotes {
		t.Errorf("incremental build after the rollback: %+v", rep)
	}
}

// TestDamagedIndex: an index file damaged in its second half (the first
// pages, meta among them, still read) is found by the page check, which Open
// runs when a writer's marker is there, in one line that says to reindex, and
// an incremental build rebuilds it in full, saying why,
// rather than failing half-way with "database disk image is malformed".
func TestDamagedIndex(t *testing.T) {
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	raw, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	half := len(raw) / 2
	damaged := append(append([]byte{}, raw[:half]...), make([]byte, len(raw)-half)...)
	if err := os.WriteFile(dbPath, damaged, 0o644); err != nil {
		t.Fatal(err)
	}

	// Nothing says a writer died and the size agrees with the header: Open
	// has no reason for the page check and opens it; the check, asked for,
	// finds the damage.
	d, err := Open(context.Background(), dbPath)
	if err != nil {
		t.Fatalf("Open of an index damaged with no sign of it: %v, want it opened unchecked", err)
	}
	if d.CheckReason() != "" {
		t.Errorf("Open checked the file without a reason (%q)", d.CheckReason())
	}
	err = d.Check(context.Background())
	d.Close()
	if !errors.Is(err, ErrCorrupt) || !IsCorrupt(err) {
		t.Fatalf("Check of a damaged index: %v, want ErrCorrupt", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "vault-rag reindex") || len(msg) > 400 {
		t.Errorf("Check's error should be one short line that says to reindex: %q", msg)
	}
	// With the marker an incremental build leaves while it writes (a
	// writer died), Open checks and refuses it in one line.
	if err := setDirty(dbPath); err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), dbPath)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open of a damaged index after a writer died: %v, want ErrCorrupt", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "vault-rag reindex") || len(msg) > 400 {
		t.Errorf("Open's error should be one short line that says to reindex: %q", msg)
	}

	rep := build(t, newFake(), vault, dbPath, true)
	if rep.Mode != "full" || !strings.HasPrefix(rep.Fallback, "unreadable index: ") || strings.Contains(rep.Fallback, "\n") {
		t.Errorf("incremental build over a damaged index: mode %q, fallback %q; want a full build saying the index is unreadable", rep.Mode, rep.Fallback)
	}
	d = open(t, dbPath)
	if st, err := d.Stats(context.Background()); err != nil || st.Notes != fixtureNotes || st.Chunks != fixtureChunks {
		t.Errorf("rebuilt index: %+v, %v", st, err)
	}
}
