package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
)

// killPoint is a moment to SIGKILL a running reindex: after a delay, or once
// a file appears or reaches a state (plus a delay), which is the build
// reaching a phase of its write.
type killPoint struct {
	name  string
	after time.Duration
	file  string            // "" for a timed kill
	ready func(string) bool // when set, the file must also pass this test
}

// killReindex starts the binary with args and kills it at p. It reports
// whether the process was killed (false: it had already finished, and its
// exit code is then checked to be 0).
func killReindex(t *testing.T, dir, vault, db string, p killPoint, args ...string) (killed bool) {
	t.Helper()
	cmd := command(t, dir, vault, db, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if p.file != "" {
		// Poll for the file; the write phase of a small vault is short.
	poll:
		for {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s: vault-rag %v failed before %s appeared: %v\n%s", p.name, args, filepath.Base(p.file), err, out.String())
				}
				t.Logf("%s: finished before %s appeared", p.name, filepath.Base(p.file))
				return false
			default:
			}
			if _, err := os.Stat(p.file); err == nil && (p.ready == nil || p.ready(p.file)) {
				break poll
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: vault-rag %v failed: %v\n%s", p.name, args, err, out.String())
		}
		t.Logf("%s: finished before the kill", p.name)
		return false
	case <-time.After(p.after):
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if cmd.ProcessState.Exited() {
		// It finished between the timer and the signal.
		if err != nil {
			t.Fatalf("%s: vault-rag %v failed: %v\n%s", p.name, args, err, out.String())
		}
		return false
	}
	return true
}

// checkAfterKill asserts that the index at db opens, answers a keyword
// search in-process and through the binary, and returns the file's sha256
// and content fingerprint; the caller decides which contents are allowed.
func checkAfterKill(t *testing.T, dir, vault, db string) (sha, fp string) {
	t.Helper()
	sha = fileSHA(t, db)
	fp = openFingerprint(t, db) // index.Open and a keyword search
	r := mustRun(t, dir, vault, db, "search", "--root", repoRoot, "--config", "keyword", "lease expiry")
	if !strings.Contains(r.stdout, ".md") {
		t.Fatalf("search after the kill found nothing:\n%s", r)
	}
	return sha, fp
}

// leftovers lists the build's temporary files beside the index.
func leftovers(t *testing.T, db string) []string {
	t.Helper()
	var out []string
	for _, suffix := range []string{".building", ".building-journal"} {
		if _, err := os.Stat(db + suffix); err == nil {
			out = append(out, filepath.Base(db+suffix))
		}
	}
	sort.Strings(out)
	return out
}

// TestReindexKilled kills `vault-rag reindex` (full, then --incremental) at
// several moments and checks after each that the index is the old one or a
// complete new one, opens, answers a search, and does not block the next
// build.
func TestReindexKilled(t *testing.T) {
	d := demoIndex(t)
	work := t.TempDir()
	db := filepath.Join(work, "index", "vault.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vaultfs.CopyFile(d.db, db, 0o644); err != nil {
		t.Fatal(err)
	}
	// The modified vault: a third of the demo notes (so each full build is
	// shorter), one of them edited, one new note. The copied index is the
	// demo's, moved with it.
	v1 := filepath.Join(work, "v1")
	mustCopyTree(t, d.vault, v1)
	if err := index.Rebind(context.Background(), db, v1); err != nil {
		t.Fatal(err)
	}
	fpA := d.fingerprint
	sha := fileSHA(t, db)

	var notes []string
	err := filepath.Walk(v1, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".md") {
			notes = append(notes, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(notes)
	for i, p := range notes {
		if i%3 != 0 {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendTo(t, notes[0], "\n\n## Edited\n\nAn edit made for the kill test.\n")
	writeFile(t, filepath.Join(v1, "kill-test-new.md"), "# Kill test\n\nA new note about lease expiry.\n")

	// Full rebuilds killed at several moments. The build embeds first, then
	// writes vault.db.building and renames it into place.
	var seen []string // fingerprints of rebuilds that finished before the kill
	full := []killPoint{
		{name: "50ms", after: 50 * time.Millisecond},
		{name: "300ms", after: 300 * time.Millisecond},
		{name: "1s", after: time.Second},
		{name: "3s", after: 3 * time.Second},
		{name: "on .building", file: db + ".building"},
		{name: "on .building+25ms", file: db + ".building", after: 25 * time.Millisecond},
	}
	for _, p := range full {
		killed := killReindex(t, work, v1, db, p, "reindex")
		newSHA, fp := checkAfterKill(t, work, v1, db)
		if newSHA != sha {
			// Not byte-identical: only a completed rebuild (the modified
			// vault's index, checked against fpB below) may replace it.
			if fp == fpA {
				t.Fatalf("%s: the index file changed but holds the old content", p.name)
			}
			seen = append(seen, fp)
		} else if !killed {
			t.Fatalf("%s: the rebuild finished but the index file is unchanged", p.name)
		}
		t.Logf("%s: killed %v, index changed %v, leftovers %v", p.name, killed, newSHA != sha, leftovers(t, db))
		sha = newSHA
	}

	// The next full build succeeds and cleans up after the killed ones.
	mustRun(t, work, v1, db, "reindex")
	if l := leftovers(t, db); len(l) > 0 {
		t.Errorf("temporary files left after a completed build: %v", l)
	}
	fpB := openFingerprint(t, db)
	if fpB == fpA {
		t.Fatal("the modified vault's index has the old fingerprint")
	}
	for _, fp := range seen {
		if fp != fpB {
			t.Errorf("a rebuild finished before its kill with fingerprint %s, want %s", fp, fpB)
		}
	}

	// Incremental builds killed inside their transaction, from the demo
	// index: every note moves into a folder and gains a section, so the one
	// transaction deletes and inserts every note (a write larger than
	// SQLite's page cache, which spills into the file before the commit),
	// while the embeddings of unchanged sections are reused (a short
	// embedding phase).
	if err := vaultfs.CopyFile(d.db, db, 0o644); err != nil {
		t.Fatal(err)
	}
	fpB = fpA
	v2 := filepath.Join(work, "v2")
	if err := os.MkdirAll(v2, 0o755); err != nil {
		t.Fatal(err)
	}
	mustCopyTree(t, d.vault, filepath.Join(v2, "moved"))
	err = filepath.Walk(v2, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".md") {
			appendTo(t, p, "\n\n## Incremental\n\nAppended for the incremental kill test.\n")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := index.Rebind(context.Background(), db, v2); err != nil {
		t.Fatal(err)
	}
	sha = fileSHA(t, db)
	journal := db + "-journal"
	incremental := []killPoint{
		{name: "incremental on journal", file: journal},
		{name: "incremental on journal+30ms", file: journal, after: 30 * time.Millisecond},
		{name: "incremental on journal+150ms", file: journal, after: 150 * time.Millisecond},
		// Committing: the journal is synced (its header written) and the
		// database file is being overwritten.
		{name: "incremental on hot journal", file: journal, ready: func(p string) bool { return hotJournal(t, p) }},
		{name: "incremental 2s", after: 2 * time.Second},
	}
	var fpC string
	for _, p := range incremental {
		killed := killReindex(t, work, v2, db, p, "reindex", "--incremental")
		hot := hotJournal(t, journal)
		newSHA, fp := checkAfterKill(t, work, v2, db)
		switch {
		case fp == fpB:
			// The transaction did not commit: the old content, whatever pages
			// SQLite rolled back.
			if !killed {
				t.Fatalf("%s: the incremental build finished but the content is the old one", p.name)
			}
		case fpC != "" && fp != fpC:
			t.Fatalf("%s: two completed incremental builds of one vault differ: %s, %s", p.name, fpC, fp)
		default:
			fpC = fp // committed; checked against the completed build below
		}
		t.Logf("%s: killed %v, hot journal %v, index changed %v", p.name, killed, hot, newSHA != sha)
		sha = newSHA
	}
	// The index is still one an incremental build can continue from.
	r := mustRun(t, work, v2, db, "reindex", "--incremental", "--json")
	var rep index.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("reindex --json: %v\n%s", err, r)
	}
	if rep.Mode != "incremental" || rep.Fallback != "" {
		t.Errorf("after the kills the incremental build ran as %q (fallback %q), want incremental", rep.Mode, rep.Fallback)
	}
	if fp := openFingerprint(t, db); fp == fpB || (fpC != "" && fp != fpC) {
		t.Errorf("after the incremental build the fingerprint is %s (before %s, a run that committed before its kill %s)", fp, fpB, fpC)
	}
	if exists(journal) {
		t.Error("a rollback journal is left after a completed incremental build")
	}
}

// hotJournal reports whether a rollback journal holds a transaction SQLite
// must roll back: a journal header starts with its magic number once the
// journal is synced, which happens before the first page of the database file
// is overwritten; until then the header is zeros.
func hotJournal(t *testing.T, p string) bool {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := f.Read(head)
	return n == 8 && string(head) == "\xd9\xd5\x05\xf9\x20\xa1\x63\xd7"
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func appendTo(t *testing.T, p, text string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprint(f, text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
