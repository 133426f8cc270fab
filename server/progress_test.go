package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/embedtest"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/models/bow"
)

// callReindexAsync calls vault_reindex with progressToken token and returns
// the channel its outcome comes on.
func callReindexAsync(t *testing.T, c *client.Client, token string) <-chan error {
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = ToolReindex
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
		res, err := c.CallTool(ctx, req)
		if err == nil && res.IsError {
			err = fmt.Errorf("reindex: %+v", res.Content)
		}
		done <- err
	}()
	return done
}

// checkProgressSequence checks the notifications of one call: its token,
// strictly increasing progress within total, the last one at progress ==
// total saying the build is done.
func checkProgressSequence(t *testing.T, got []mcp.JSONRPCNotification, token string) {
	t.Helper()
	prev := -1.0
	for i, m := range got {
		tok, p, total, msg := progressOf(t, m)
		t.Logf("progress %v of %v: %s", p, total, msg)
		if tok != token {
			t.Errorf("notification %d: token %v", i, tok)
		}
		if p <= prev || p > total {
			t.Errorf("notification %d: progress %v of %v after %v: not increasing within total", i, p, total, prev)
		}
		prev = p
		if last := i == len(got)-1; last != (p == total) || last && !strings.HasPrefix(msg, "reindex done: ") {
			t.Errorf("notification %d of %d: %v of %v, %q", i+1, len(got), p, total, msg)
		}
	}
}

// waitLastProgress waits until the last progress notification has come
// (progress == total) and returns them all.
func waitLastProgress(t *testing.T, n *notes) []mcp.JSONRPCNotification {
	t.Helper()
	const method = string(mcp.MethodNotificationProgress)
	got := n.waitCount(t, method, 1)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); got = n.of(method) {
		if _, p, total, _ := progressOf(t, got[len(got)-1]); p == total {
			break
		}
		select {
		case <-n.got:
		case <-time.After(100 * time.Millisecond):
		}
	}
	return got
}

// TestReindexProgressDuringFirstBuild: a vault_reindex call with a
// progressToken made while the server's own first build runs is sent that
// build's progress while it runs (before it ends), then its own run's, up
// to progress == total.
func TestReindexProgressDuringFirstBuild(t *testing.T) {
	vaultPath := t.TempDir()
	files := map[string]string{}
	for i := range 12 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for j := range 4 {
			fmt.Fprintf(&b, "## Part %d\n\nSection %d of note %d, with words enough to be a chunk of its own.\n\n", j, j, i)
		}
		files[fmt.Sprintf("n%02d.md", i)] = b.String()
	}
	vaulttest.WriteTree(t, vaultPath, files, fixedNow)
	marker := filepath.Join(t.TempDir(), "embedding")
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	s := newModelFreeServer(t, func(o *Options) {
		o.VaultPath, o.DBPath, o.ConfigName = vaultPath, filepath.Join(t.TempDir(), "vault.db"), "keyword"
		o.wrapEmbedder = func(index.Embedder) index.Embedder {
			return &embedtest.Hanging{Embedder: bow.Embedder{ModelName: models.DefaultEmbedder}, Marker: marker, Release: release}
		}
	})
	t.Cleanup(free) // before the server closes
	c := connectStdio(t, s)
	n := collect(c)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first build never began embedding")
		}
	}
	done := callReindexAsync(t, c, "first-1")
	got := n.waitCount(t, string(mcp.MethodNotificationProgress), 1)
	_, p, total, msg := progressOf(t, got[0])
	if !strings.Contains(msg, "reindex run 1, already running, embedded 0 of ") || p >= total {
		t.Errorf("progress while the first build is held: %v of %v, %q", p, total, msg)
	}
	free()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkProgressSequence(t, waitLastProgress(t, n), "first-1")
}

// TestReindexProgressOtherProcess: a vault_reindex call with a
// progressToken made while another process builds the index is sent that
// build's progress, naming the process, until it ends; then its own run's
// progress, up to progress == total. The other process records its progress
// in the build lock, so a full rebuild of a complete index (into a new file
// the server does not read) is reported too: none of its chunks embedded
// yet, not the old index's full coverage.
func TestReindexProgressOtherProcess(t *testing.T) {
	for _, tc := range []struct {
		name, token string
		env         []string
	}{
		{"first build", "other-1", nil},
		{"full rebuild", "rebuild-1", []string{"OTHER_REBUILD=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vault, db, cmd, exited := startOtherBuilder(t, tc.env...)

			s := newServer(t, func(o *Options) { o.VaultPath, o.DBPath = vault, db })
			c := connectStdio(t, s)
			n := collect(c)
			done := callReindexAsync(t, c, tc.token)
			got := n.waitCount(t, string(mcp.MethodNotificationProgress), 1)
			_, p, total, msg := progressOf(t, got[0])
			if want := fmt.Sprintf("another process (pid %d) is building the index: 0 of ", cmd.Process.Pid); !strings.Contains(msg, want) || p >= total {
				t.Errorf("progress while process %d builds: %v of %v, %q, want it to hold %q", cmd.Process.Pid, p, total, msg, want)
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-exited
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			checkProgressSequence(t, waitLastProgress(t, n), tc.token)
		})
	}
}

// TestProgressPhases: a caller waiting for run 8 while run 7 runs is sent
// run 7's wait for another process's build (its reading, then its
// embedding, each counted on from the last), run 7's embedding, its end,
// then run 8's embedding and end: strictly increasing, within total, the
// last at progress == total.
func TestProgressPhases(t *testing.T) {
	var clock atomic.Int64
	type sent struct {
		p, total float64
		msg      string
	}
	var got []sent
	sub := &progressSub{
		now:  func() time.Time { return time.Unix(0, clock.Add(int64(time.Second))) },
		send: func(p, total float64, msg string) { got = append(got, sent{p, total, msg}) },
	}
	var ev buildEvents
	ev.subscribe(sub)
	ev.begin(7, false)
	sub.setTarget(8, &ev)
	o := otherBuildOf(index.BuildHolder{PID: 4242, Progress: &index.Progress{Phase: "reading", Done: 400, Total: 486}}, index.Coverage{})
	ev.otherProgress(&o)
	o = otherBuildOf(index.BuildHolder{PID: 4242}, index.Coverage{Embedded: 10, Chunks: 100})
	ev.otherProgress(&o)
	o = otherBuildOf(index.BuildHolder{PID: 4242, Progress: &index.Progress{Phase: "embedding", Done: 60, Total: 100}}, index.Coverage{})
	ev.otherProgress(&o)
	ev.progress(index.Progress{Phase: "embedding", Done: 0, Total: 30})
	ev.progress(index.Progress{Phase: "embedding", Done: 30, Total: 30})
	ev.end(&run{seq: 7})
	ev.begin(8, false)
	ev.progress(index.Progress{Phase: "embedding", Done: 0, Total: 5})
	ev.progress(index.Progress{Phase: "embedding", Done: 5, Total: 5})
	ev.end(&run{seq: 8})
	prev := -1.0
	for i, s := range got {
		t.Logf("%v of %v: %s", s.p, s.total, s.msg)
		if s.p <= prev || s.p > s.total || (i == len(got)-1) != (s.p == s.total) {
			t.Errorf("notification %d: %v of %v after %v", i, s.p, s.total, prev)
		}
		prev = s.p
	}
	if len(got) != 7 || !strings.Contains(got[0].msg, "pid 4242") || !strings.Contains(got[0].msg, "400 of 486 notes read") ||
		!strings.Contains(got[1].msg, "10 of 100 chunks embedded") || !strings.HasPrefix(got[len(got)-1].msg, "reindex done") {
		t.Errorf("%d notifications: %+v", len(got), got)
	}
}
