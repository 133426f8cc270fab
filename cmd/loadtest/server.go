package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/server"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNoEmbedder says the server reports its embedder as not installed: the
// load test cannot run (the test skips on it).
var ErrNoEmbedder = errors.New("the embedder is not installed")

// BuildSummary is what the server reports about one index build: a
// vault_reindex answer's figures, or those of /health's last build (no run).
type BuildSummary struct {
	Run int `json:"run,omitempty"`
	server.BuildCounts
	TookMS int64 `json:"took_ms"`
}

// lastBuild is /health's last build, nil when there is none.
func lastBuild(h server.Health) *BuildSummary {
	b := h.Reindex.LastReport
	if b == nil {
		return nil
	}
	return &BuildSummary{BuildCounts: b.BuildCounts, TookMS: b.TookMS}
}

// embedder reports whether the server's embedder is installed, whether it is
// loaded in memory, and what is wrong with it.
func embedder(h server.Health) (installed, loaded bool, problem string) {
	for _, m := range h.Models {
		if m.Role == models.RoleEmbedder {
			return m.Installed, m.Loaded, m.Problem
		}
	}
	return false, false, "no embedder in /health"
}

// proc is one `vault-rag serve` process on a loopback port.
type proc struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:PORT
	logPath string
	logFile *os.File
	exited  chan struct{} // closed when the process has been waited for
	waitErr error
	client  *http.Client
}

// freePort asks the kernel for a free loopback port. Another process could
// take it before the server binds it; the server then fails to start and says
// so.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startServer runs `bin serve --addr 127.0.0.1:PORT args...` in dir with env,
// its stdout and stderr going to logPath.
func startServer(bin string, args, env []string, dir, logPath string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--tools", "all"}, args...)...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &proc{cmd: cmd, base: "http://" + addr, logPath: logPath, logFile: logFile, exited: make(chan struct{}),
		client: &http.Client{Timeout: 10 * time.Second}}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// pid is the server's process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// running reports whether the process has not exited yet.
func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// health fetches and decodes GET /health.
func (p *proc) health(ctx context.Context) (server.Health, error) {
	var h server.Health
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/health", nil)
	if err != nil {
		return h, fmt.Errorf("health request: %w", err)
	}
	res, err := p.client.Do(req)
	if err != nil {
		return h, fmt.Errorf("GET /health: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return h, fmt.Errorf("GET /health: %s: %s", res.Status, strings.TrimSpace(string(body)))
	}
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
		return h, fmt.Errorf("decode /health: %w", err)
	}
	return h, nil
}

// waitReady polls /health until the index is served and, with catchUp, the
// startup build (the watcher's catch-up, or the first full build) has
// finished. It returns ErrNoEmbedder at once when the embedder is missing.
func (p *proc) waitReady(ctx context.Context, catchUp bool) (server.Health, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-ctx.Done():
			return server.Health{}, fmt.Errorf("wait for the server to be ready (last: %v): %w", last, ctx.Err())
		case <-p.exited:
			return server.Health{}, fmt.Errorf("the server exited before it was ready (%v); its log ends:\n%s", p.waitErr, p.tail(2000))
		case <-tick.C:
		}
		h, err := p.health(ctx)
		if err != nil {
			last = err // not listening yet
			continue
		}
		if installed, _, problem := embedder(h); !installed {
			return h, fmt.Errorf("%w (%s): run `make setup`", ErrNoEmbedder, problem)
		}
		if h.Reindex.LastError != "" {
			return h, fmt.Errorf("the server's startup build failed: %s", h.Reindex.LastError)
		}
		if h.Index != "ok" {
			last = errors.New("index: " + h.Index)
			continue
		}
		if catchUp && (h.Reindex.Builds < 1 || h.Reindex.Running || h.Reindex.Queued) {
			last = errors.New("startup build still running")
			continue
		}
		return h, nil
	}
}

// memory reads the process's resident set size and its high-water mark
// (VmRSS and VmHWM of /proc/PID/status), in KiB.
func (p *proc) memory() (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return 0, 0, fmt.Errorf("read the server's memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse %s %q: %w", k, v, err)
		}
		if k == "VmRSS" {
			rss = n
		} else {
			hwm = n
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("read the server's memory: %w", err)
	}
	if rss == 0 {
		return 0, 0, errors.New("read the server's memory: no VmRSS in /proc status")
	}
	return rss, hwm, nil
}

// Exit is how the server ended after SIGTERM.
type Exit struct {
	Code    int     `json:"code"` // -1: killed or did not exit in time
	Seconds float64 `json:"seconds"`
	Clean   bool    `json:"clean"` // exited with code 0 within the limit
	Problem string  `json:"problem,omitempty"`
}

// stop sends SIGTERM and waits up to limit for the process to exit; past
// that it is killed, and the exit is not clean.
func (p *proc) stop(limit time.Duration) Exit {
	if !p.running() {
		return Exit{Code: p.cmd.ProcessState.ExitCode(), Problem: fmt.Sprintf("exited before SIGTERM (%v)", p.waitErr)}
	}
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.kill()
		return Exit{Code: -1, Problem: fmt.Sprintf("send SIGTERM: %v", err)}
	}
	select {
	case <-p.exited:
	case <-time.After(limit):
		p.kill()
		return Exit{Code: -1, Seconds: time.Since(start).Seconds(), Problem: fmt.Sprintf("still running %s after SIGTERM; killed", limit)}
	}
	e := Exit{Code: p.cmd.ProcessState.ExitCode(), Seconds: time.Since(start).Seconds()}
	e.Clean = e.Code == 0
	if !e.Clean {
		e.Problem = fmt.Sprintf("exit status %d (%v); the log ends:\n%s", e.Code, p.waitErr, p.tail(1500))
	}
	return e
}

// kill ends the process (this one, by its id) if it is still running and
// waits for it.
func (p *proc) kill() {
	if p.running() {
		_ = p.cmd.Process.Kill()
	}
	<-p.exited
}

// tail is the last n bytes of the server's log.
func (p *proc) tail(n int64) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		_, _ = f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
