package server

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/embedtest"
	"github.com/vault-rag/vault-rag/models"
)

// otherBuilderEnv marks the child process of TestOtherProcessBuilding: a
// first build of OTHER_VAULT into OTHER_DB whose embedder hangs at its
// first call (after the keyword index is in place), holding the build lock
// until the process is killed.
const otherBuilderEnv = "VAULT_RAG_SERVER_TEST_BUILDER"

func TestOtherBuilderProcess(t *testing.T) {
	if os.Getenv(otherBuilderEnv) == "" {
		t.Skip("the child process of TestOtherProcessBuilding, run by it")
	}
	emb, err := fx.reg.Embedder(context.Background(), models.DefaultEmbedder)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	opts := index.BuildOptions{VaultPath: os.Getenv("OTHER_VAULT"), DBPath: os.Getenv("OTHER_DB")}
	if os.Getenv("OTHER_REBUILD") != "" {
		// A complete index first, then a full rebuild of it that must
		// embed every chunk again, into a new file beside the old one.
		if _, err := index.Build(context.Background(), emb, opts); err != nil {
			fmt.Println("error:", err)
			return
		}
		opts.NoCache = true
	}
	_, err = index.Build(context.Background(), &embedtest.Hanging{Embedder: emb, Marker: os.Getenv("OTHER_MARKER")}, opts)
	fmt.Println("error: the build ended:", err)
}

// TestOtherProcessBuilding: a server started while another process builds
// its vault's first index serves the keyword index that build put in place,
// says that process is building (in search answers and /health, which does
// not call that a failure), does not start a build of its own beside it,
// and, when that process is killed mid-way, takes the build over and ends
// with every chunk embedded.
func TestOtherProcessBuilding(t *testing.T) {
	vault, db, cmd, exited := startOtherBuilder(t)

	s := newServer(t, func(o *Options) { o.VaultPath, o.DBPath = vault, db })
	c := connectStdio(t, s)
	var res struct {
		Notes    []struct{ Path string } `json:"notes"`
		Building *BuildHolder            `json:"other_process_building"`
	}
	callOK(t, c, ToolSearch, map[string]any{"query": "idempotency", "config": "keyword"}, &res)
	if len(res.Notes) == 0 || res.Building == nil || res.Building.PID != cmd.Process.Pid {
		t.Errorf("search while process %d builds: want its keyword hits and that process named, got %+v", cmd.Process.Pid, res)
	}
	h := s.Health(context.Background())
	if h.Reindex.OtherProcess == nil || h.Reindex.OtherProcess.PID != cmd.Process.Pid || h.Reindex.Problem != "" || h.Status == StatusError {
		t.Errorf("health while another process builds: status %s, reindex %+v", h.Status, h.Reindex)
	} else if p := h.Reindex.OtherProcess.Progress; p == nil || p.Phase != "embedding" || p.Done != 0 || p.Total == 0 {
		t.Errorf("health while another process builds: its progress %+v, want embedding 0 of its chunks", p)
	}

	// The other builder dies mid-way: this server's build, waiting for the
	// lock, takes over and embeds every chunk.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		h = s.Health(context.Background())
		if h.Vectors != nil && h.Vectors.Complete() && !h.Reindex.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed builder's index was not completed: %+v", h)
		}
	}
	if h.Status != StatusOK || h.Reindex.OtherProcess != nil || h.Reindex.Problem != "" || h.Reindex.LastError != "" {
		t.Errorf("health after the take-over: status %s, reindex %+v", h.Status, h.Reindex)
	}
	res.Notes, res.Building = nil, nil
	callOK(t, c, ToolSearch, map[string]any{"query": "rye loaves"}, &res)
	if len(res.Notes) == 0 || res.Building != nil {
		t.Errorf("search after the take-over: %+v", res)
	}
}

// startOtherBuilder starts this test binary as another process building a
// tiny vault's index (TestOtherBuilderProcess) and waits until its build is
// embedding, held there by the hanging embedder; the process is killed when
// the test ends. env is added to the child's environment (OTHER_REBUILD=1:
// a full rebuild of a complete index).
func startOtherBuilder(t *testing.T, env ...string) (vault, db string, cmd *exec.Cmd, exited chan struct{}) {
	t.Helper()
	vault = tinyVault(t)
	dir := t.TempDir()
	db, marker := filepath.Join(dir, "vault.db"), filepath.Join(dir, "embedding")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd = exec.Command(exe, "-test.run=^TestOtherBuilderProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), otherBuilderEnv+"=1", "OTHER_VAULT="+vault, "OTHER_DB="+db, "OTHER_MARKER="+marker)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	embedtest.WaitForMarker(t, marker, cmd, &out, exited)
	return vault, db, cmd, exited
}
