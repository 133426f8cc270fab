package index

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/vault-rag/vault-rag/internal/embedtest"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

func TestSQLiteURI(t *testing.T) {
	tests := []struct {
		abs     string
		windows bool
		want    string
	}{
		{"/home/me/vault.db", false, "file:/home/me/vault.db"},
		{"/tmp/a b/x?y#z%.db", false, "file:/tmp/a%20b/x%3Fy%23z%25.db"},
		{"/tmp/café/v.db", false, "file:/tmp/caf%C3%A9/v.db"},
		{`C:\Users\me\AppData\Local\vault-rag\vault.db`, true, "file:///C:/Users/me/AppData/Local/vault-rag/vault.db"},
		{`C:\My Notes\v#1.db`, true, "file:///C:/My%20Notes/v%231.db"},
		{`\\server\share\idx\vault.db`, true, "file:////server/share/idx/vault.db"},
	}
	for _, tc := range tests {
		if got := sqliteURI(tc.abs, tc.windows); got != tc.want {
			t.Errorf("sqliteURI(%q, windows=%v) = %q, want %q", tc.abs, tc.windows, got, tc.want)
		}
	}
}

// referenceDump is the chunks and vectors of one plain build of vault.
func referenceDump(t *testing.T, vault string) map[string]string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "reference.db")
	build(t, newFake(), vault, p, false)
	return chunkDump(t, open(t, p))
}

// checkOneIndex checks that dbPath holds one complete index equal to want,
// with no build running and nothing half-built beside it.
func checkOneIndex(t *testing.T, dbPath string, want map[string]string) {
	t.Helper()
	d := open(t, dbPath)
	if err := d.Check(context.Background()); err != nil {
		t.Error(err)
	}
	if cov, err := d.Coverage(context.Background()); err != nil || !cov.Complete() || cov.Chunks == 0 {
		t.Errorf("coverage %+v, %v; want every chunk embedded", cov, err)
	}
	if got := chunkDump(t, d); !reflect.DeepEqual(got, want) {
		t.Errorf("the index holds other chunks or vectors than a single build:\n got %v\nwant %v", got, want)
	}
	if _, running, err := RunningBuild(dbPath); err != nil || running {
		t.Errorf("RunningBuild = %v, %v after the builds; want none", running, err)
	}
	for _, leftover := range []string{dbPath + ".building", dbPath + ".building-journal", dbPath + "-journal", dirtyMarker(dbPath)} {
		if _, err := os.Stat(leftover); err == nil {
			t.Errorf("left beside the index: %s", filepath.Base(leftover))
		}
	}
}

// TestBuildLockGoroutines: two builders of one fresh index in one process
// end with one complete index; without WaitForBuild one of them is told
// another build runs, with it both build, one after the other.
func TestBuildLockGoroutines(t *testing.T) {
	for _, wait := range []bool{false, true} {
		t.Run(fmt.Sprintf("wait=%v", wait), func(t *testing.T) {
			vault, dbPath := newFixture(t)
			want := referenceDump(t, vault)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := make(chan struct{})
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = Build(context.Background(), newFake(), BuildOptions{VaultPath: vault, DBPath: dbPath, Incremental: i == 1, WaitForBuild: wait})
				}()
			}
			close(start)
			wg.Wait()
			built := 0
			for _, err := range errs {
				var running *BuildRunningError
				switch {
				case err == nil:
					built++
				case wait:
					t.Errorf("a waiting builder failed: %v", err)
				case !errors.As(err, &running) || !errors.Is(err, ErrBuildRunning):
					t.Errorf("builder failed with %v, want a *BuildRunningError", err)
				case running.Holder.PID != os.Getpid() || running.DBPath != dbPath:
					t.Errorf("BuildRunningError %+v, want this process's build of %s", running, dbPath)
				}
			}
			if built == 0 || (wait && built != 2) {
				t.Errorf("%d builds succeeded (wait=%v)", built, wait)
			}
			checkOneIndex(t, dbPath, want)
		})
	}
}

// The child process of the tests below: a build of CHILD_VAULT into
// CHILD_DB, which prints "ok", "busy" (another build runs) or "error: ...".
// With CHILD_HANG set, the embedder's first call creates that file and the
// build hangs there, holding the lock, until the process is killed.
const childEnv = "VAULT_RAG_INDEX_TEST_CHILD"

func TestBuildChildProcess(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("the child process of TestBuildLockProcesses and TestBuildLockKilled, run by them")
	}
	emb := Embedder(newFake())
	if hang := os.Getenv("CHILD_HANG"); hang != "" {
		emb = &embedtest.Hanging{Embedder: newFake(), Marker: hang}
	}
	_, err := Build(context.Background(), emb, BuildOptions{
		VaultPath: os.Getenv("CHILD_VAULT"), DBPath: os.Getenv("CHILD_DB"),
		Incremental: os.Getenv("CHILD_INCREMENTAL") != "", WaitForBuild: os.Getenv("CHILD_WAIT") != "",
	})
	switch {
	case err == nil:
		fmt.Println("ok")
	case errors.Is(err, ErrBuildRunning):
		fmt.Println("busy")
	default:
		fmt.Println("error:", err)
	}
}

// child starts the test binary as a builder of vault into dbPath.
func child(t *testing.T, vault, dbPath string, env ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestBuildChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1", "CHILD_VAULT="+vault, "CHILD_DB="+dbPath)
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// childResult is the child's verdict line: "ok", "busy" or "error: ...".
func childResult(out *bytes.Buffer) string {
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		l := sc.Text()
		if l == "ok" || l == "busy" || strings.HasPrefix(l, "error:") {
			return l
		}
	}
	return "no verdict in: " + out.String()
}

// TestBuildLockProcesses: two processes building one fresh index at once
// end with one complete index equal to a single build's.
func TestBuildLockProcesses(t *testing.T) {
	tests := []struct {
		name string
		env  []string
	}{
		{"full and incremental", nil},
		{"waiting", []string{"CHILD_WAIT=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vault, dbPath := newFixture(t)
			want := referenceDump(t, vault)
			a, aout := child(t, vault, dbPath, tc.env...)
			b, bout := child(t, vault, dbPath, append(tc.env, "CHILD_INCREMENTAL=1")...)
			a.Wait()
			b.Wait()
			ok := 0
			for _, r := range []string{childResult(aout), childResult(bout)} {
				switch {
				case r == "ok":
					ok++
				case r == "busy" && tc.env == nil:
				default:
					t.Errorf("a builder answered %q", r)
				}
			}
			if ok == 0 || (tc.env != nil && ok != 2) {
				t.Errorf("%d builders succeeded", ok)
			}
			checkOneIndex(t, dbPath, want)
		})
	}
}

// TestBuildLockKilled: a builder killed while it holds the lock is taken
// over by the next build, which cleans what it left and ends with one
// complete index.
func TestBuildLockKilled(t *testing.T) {
	tests := []struct {
		name string
		// before prepares the vault and index the child builds over.
		before      func(t *testing.T, vault, dbPath string)
		incremental bool   // the child's build, and the one that takes over
		leftover    string // a file of the killed build the next must handle
	}{
		{"first build, killed embedding into the live index", func(t *testing.T, vault, dbPath string) {}, true, ""},
		{"rebuild, killed embedding before the swap", func(t *testing.T, vault, dbPath string) {
			build(t, newFake(), vault, dbPath, false)
			vaulttest.WriteTree(t, vault, map[string]string{"pelican.md": "# Pelican\na pelican note\n"}, testTime)
		}, false, ".building"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vault, dbPath := newFixture(t)
			tc.before(t, vault, dbPath)
			marker := filepath.Join(t.TempDir(), "embedding")
			env := []string{"CHILD_HANG=" + marker}
			if tc.incremental {
				env = append(env, "CHILD_INCREMENTAL=1")
			}
			cmd, out := child(t, vault, dbPath, env...)
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			embedtest.WaitForMarker(t, marker, cmd, out, exited)

			holder, running, err := RunningBuild(dbPath)
			if err != nil || !running || holder.PID != cmd.Process.Pid {
				t.Errorf("RunningBuild = %+v, %v, %v; want the child (pid %d)", holder, running, err, cmd.Process.Pid)
			}
			_, err = Build(context.Background(), newFake(), BuildOptions{VaultPath: vault, DBPath: dbPath})
			var busy *BuildRunningError
			if !errors.As(err, &busy) || busy.Holder.PID != cmd.Process.Pid {
				t.Errorf("a build while the child holds the lock: %v; want a *BuildRunningError naming pid %d", err, cmd.Process.Pid)
			}
			if tc.leftover != "" {
				if _, err := os.Stat(dbPath + tc.leftover); err != nil {
					t.Errorf("the child had no %s file when killed: %v", tc.leftover, err)
				}
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-exited

			want := referenceDump(t, vault)
			if _, err := Build(context.Background(), newFake(), BuildOptions{VaultPath: vault, DBPath: dbPath, Incremental: tc.incremental, WaitForBuild: true}); err != nil {
				t.Fatalf("the build after the kill: %v", err)
			}
			checkOneIndex(t, dbPath, want)
		})
	}
}

// TestRebuildWhileReading: a full rebuild succeeds while a reader holds the
// index open and queries it from other goroutines (one keeps a statement
// open across the start of the build); the reader sees every answer whole,
// then sees Stale, and after reopening the new content.
func TestRebuildWhileReading(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	if d.Stale() {
		t.Fatal("a fresh index is stale")
	}
	vaulttest.WriteTree(t, vault, map[string]string{"pelican.md": "# Pelican\na pelican note\n"}, testTime)
	want := referenceDump(t, vault)

	// A statement in progress: its rows are read one by one, the last after
	// the build has read the vault.
	rows, err := d.sql.QueryContext(ctx, `SELECT id FROM chunks ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal("no chunks")
	}
	read := make(chan struct{})
	var once sync.Once
	stop := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-read
		for rows.Next() {
		}
		readErr = errors.Join(readErr, rows.Err(), rows.Close())
	}()
	var loopErr error
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			st, err := d.Stats(ctx)
			if err != nil {
				loopErr = fmt.Errorf("Stats during the rebuild: %w", err)
				return
			}
			// Old or new, never a mix: 9 notes and 12 chunks, or 10 and 13.
			if !(st.Notes == fixtureNotes && st.Chunks == fixtureChunks) && !(st.Notes == fixtureNotes+1 && st.Chunks == fixtureChunks+1) {
				loopErr = fmt.Errorf("the reader saw %d notes and %d chunks mid-rebuild", st.Notes, st.Chunks)
				return
			}
		}
	}()
	_, err = Build(ctx, newFake(), BuildOptions{VaultPath: vault, DBPath: dbPath, Progress: func(p Progress) {
		if p.Phase == "embedding" {
			once.Do(func() { close(read) })
		}
	}})
	once.Do(func() { close(read) })
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("rebuild while a reader holds the index: %v", err)
	}
	if readErr != nil || loopErr != nil {
		t.Errorf("the reader failed: %v %v", readErr, loopErr)
	}
	if !d.Stale() {
		t.Error("the reader does not see that the file holds another build")
	}
	fresh := open(t, dbPath)
	if fresh.Stale() {
		t.Error("the reopened index is stale")
	}
	if got := keywordPaths(t, fresh, `"pelican"`, Filter{}); !reflect.DeepEqual(got, []string{"pelican.md"}) {
		t.Errorf("reopened index search = %v, want pelican.md", got)
	}
	checkOneIndex(t, dbPath, want)
}

// TestRenameOverOpenIndex shows why a rebuild is copied into the live file:
// on Windows (and under wine) renaming a file over an index that a sql.DB
// holds open fails, where the copy succeeds (TestRebuildWhileReading).
func TestRenameOverOpenIndex(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("Windows semantics: elsewhere a rename over an open file succeeds")
	}
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	other := filepath.Join(t.TempDir(), "other.db")
	build(t, newFake(), vault, other, false)
	db, err := openSQLite(dbPath, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM chunks`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, dbPath); err == nil {
		t.Error("os.Rename over an index a sql.DB holds open succeeded; Windows refuses it")
	}
}

// BenchmarkStale is the check every search makes for a replaced index.
func BenchmarkStale(b *testing.B) {
	vault := filepath.Join(b.TempDir(), "vault")
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("n%03d.md", i)] = fmt.Sprintf("# Note %d\nword%d text\n", i, i)
	}
	vaulttest.WriteTree(b, vault, files, testTime)
	dbPath := filepath.Join(b.TempDir(), "vault.db")
	if _, err := Build(context.Background(), newFake(), BuildOptions{VaultPath: vault, DBPath: dbPath}); err != nil {
		b.Fatal(err)
	}
	d, err := Open(context.Background(), dbPath)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if d.Stale() {
				b.Fatal("stale")
			}
		}
	})
}

// TestSnapshotHoldsOffRebuild: a snapshot reads one state of the file across
// statements; a full rebuild's copy waits for it, and the view's answers stay
// those of the old build until it is released.
func TestSnapshotHoldsOffRebuild(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	view, release, err := d.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	vaulttest.WriteTree(t, vault, map[string]string{"pelican.md": "# Pelican\na pelican note\n"}, testTime)
	done := make(chan error, 1)
	go func() {
		_, err := Build(ctx, newFake(), BuildOptions{VaultPath: vault, DBPath: dbPath})
		done <- err
	}()

	// The copy is waiting for the snapshot once it holds SQLite's pending
	// lock, which turns a new reader away at once.
	probe, err := openSQLiteBusy(dbPath, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	waitFor(t, func() bool {
		var n int
		err := probe.QueryRow(`SELECT count(*) FROM meta`).Scan(&n)
		return err != nil && strings.Contains(err.Error(), "locked")
	})
	select {
	case err := <-done:
		t.Fatalf("the rebuild ended while a snapshot was held: %v", err)
	default:
	}
	if got := keywordPaths(t, view, `"pelican"`, Filter{}); got != nil {
		t.Errorf("the snapshot finds the new note: %v", got)
	}
	if st, err := view.Stats(ctx); err != nil || st.Notes != fixtureNotes {
		t.Errorf("the snapshot's stats %+v, %v; want the old %d notes", st, err, fixtureNotes)
	}
	if view.Stale() {
		t.Error("the snapshot of the opened build is stale")
	}
	release()
	released = true
	if err := <-done; err != nil {
		t.Fatalf("the rebuild after the snapshot's release: %v", err)
	}
	if !d.Stale() {
		t.Error("the handle does not see the rebuild")
	}
	later, release2, err := d.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release2()
	if !later.Stale() {
		t.Error("a snapshot of the rebuilt file, through the old handle, is not stale")
	}
	if got := keywordPaths(t, later, `"pelican"`, Filter{}); !reflect.DeepEqual(got, []string{"pelican.md"}) {
		t.Errorf("a snapshot after the rebuild finds %v, want pelican.md", got)
	}
}
