package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/index"
)

// TestReindexResumesAfterKill kills a full `reindex` with SIGKILL once half
// of its chunks are embedded, and checks that the next full build embeds
// exactly the chunks the embedding cache did not hold at the kill (so the
// kill cost at most the batch in flight), that the build completes, and that
// a third full build of the unchanged vault embeds nothing.
func TestReindexResumesAfterKill(t *testing.T) {
	binary(t)
	work := t.TempDir()
	vault := filepath.Join(work, "vault")
	if err := vaultfs.CopyTree(filepath.Join(repoRoot, "vault"), vault); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(work, "index", "vault.db")

	// A progress line after every batch; kill at the first that reaches half.
	cmd := command(t, work, vault, db, "reindex", "--progress-every", "0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^embedding (\d+)/(\d+) chunks`)
	var announced, total int
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		fmt.Fprintln(&log, sc.Text())
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		announced, _ = strconv.Atoi(m[1])
		total, _ = strconv.Atoi(m[2])
		if total > 0 && announced*2 >= total && announced < total {
			break
		}
	}
	if total == 0 || announced*2 < total || announced >= total {
		cmd.Wait()
		t.Fatalf("the build never reported half of its chunks embedded (last %d/%d):\n%s", announced, total, log.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	stored := cacheRows(t, index.CachePath(db))
	t.Logf("killed at %d/%d chunks announced; %d vectors in the cache", announced, total, stored)
	if stored < announced {
		t.Fatalf("the cache holds %d vectors after the kill, but %d were announced as done", stored, announced)
	}

	rep := reindexJSON(t, work, vault, db)
	if rep.Mode != "full" || rep.Embedded+rep.Reused != rep.Chunks {
		t.Fatalf("the resumed build: %+v", rep)
	}
	if rep.Embedded != total-stored {
		t.Errorf("the resumed build embedded %d chunks; the cache lacked %d of %d", rep.Embedded, total-stored, total)
	}
	openFingerprint(t, db) // opens and answers a search

	// A full build of the unchanged vault re-embeds nothing.
	rep = reindexJSON(t, work, vault, db)
	if rep.Embedded != 0 || rep.Reused != rep.Chunks {
		t.Errorf("a full build of an unchanged vault embedded %d of %d chunks", rep.Embedded, rep.Chunks)
	}
}

func reindexJSON(t *testing.T, dir, vault, db string) index.Report {
	t.Helper()
	r := mustRun(t, dir, vault, db, "reindex", "--json")
	var rep index.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("reindex --json: %v\n%s", err, r)
	}
	return rep
}

// cacheRows counts the vectors in an embedding cache file.
func cacheRows(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM embeddings`).Scan(&n); err != nil {
		t.Fatalf("count the cache's vectors: %v", err)
	}
	return n
}
