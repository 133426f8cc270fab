//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// defaultState is where serve-start keeps each server's pid, log and
// command line (serve-PORT.json, serve-PORT.log).
func defaultState() string {
	if d := os.Getenv("LOOPBENCH_STATE"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "loopbench")
}

// serverRecord is what serve-start records of a server it started.
type serverRecord struct {
	PID     int      `json:"pid"`
	Port    int      `json:"port"`
	Bin     string   `json:"bin"`
	Vault   string   `json:"vault"`
	Data    string   `json:"data"`
	Root    string   `json:"root,omitempty"`
	Args    []string `json:"args"`
	Log     string   `json:"log"`
	Started string   `json:"started"`
}

func statePaths(state string, port int) (record, log string) {
	return filepath.Join(state, fmt.Sprintf("serve-%d.json", port)), filepath.Join(state, fmt.Sprintf("serve-%d.log", port))
}

// cmdServeStart starts `vault-rag serve --transport http` on a loopback port
// in the background, with VAULT_RAG_DATA set to --data (where the index is
// built and the models and ONNX Runtime are found), and waits until /health
// says the index is complete: every chunk embedded, no build running.
func cmdServeStart(args []string) error {
	fs := newFlagSet("serve-start", "usage: loopbench serve-start --bin VAULT_RAG --vault DIR --port N --data DIR [flags] [-- EXTRA-SERVE-FLAGS...]")
	bin := fs.String("bin", "", "the vault-rag binary")
	vault := fs.String("vault", "", "the vault folder")
	port := fs.Int("port", 0, "the loopback port to serve on")
	data := fs.String("data", "", "the data folder (VAULT_RAG_DATA): models/, lib/, and indexes/ where the index is built")
	root := fs.String("root", "", "the folder holding configs/ (VAULT_RAG_ROOT; default: the checkout the binary was built into, else the current folder)")
	state := fs.String("state", defaultState(), "where the pid, command and log are kept [LOOPBENCH_STATE]")
	threads := fs.Int("threads", 1, "VAULT_RAG_THREADS, the embedder's threads (0: the binary's default)")
	wait := fs.Duration("wait", 90*time.Minute, "how long to wait for a complete index (0: do not wait)")
	modelsFrom := fs.String("models-from", "", "a data folder whose lib/ and models/* to symlink into --data where missing (so the index is built apart, the models shared)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := need("bin", *bin, "vault", *vault, "data", *data); err != nil {
		return err
	}
	if *port <= 0 || *port > 65535 {
		return usageErr("--port: want a port number")
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	binPath, vaultDir, dataDir := abs(*bin), abs(*vault), abs(*data)
	if st, err := os.Stat(vaultDir); err != nil || !st.IsDir() {
		return usageErr("--vault %s: not a folder", *vault)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	if *modelsFrom != "" {
		if err := linkModels(abs(*modelsFrom), dataDir); err != nil {
			return err
		}
	}
	for _, sub := range []string{"models", "lib"} {
		if _, err := os.Stat(filepath.Join(dataDir, sub)); err != nil {
			fmt.Fprintf(os.Stderr, "loopbench serve-start: warning: %s has no %s/ (the binary looks for its models and ONNX Runtime there)\n", dataDir, sub)
		}
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", *port)
	if h, err := getHealth(base); err == nil {
		return fmt.Errorf("something already answers %s/health (status %s, vault %s): stop it first (loopbench serve-stop --port %d)", base, h.Status, h.Vault, *port)
	}

	flags, err := serveFlags(binPath)
	if err != nil {
		return err
	}
	for _, f := range []string{"transport", "addr", "vault"} {
		if !flags[f] {
			return fmt.Errorf("%s serve has no --%s flag; loopbench needs --transport, --addr and --vault", binPath, f)
		}
	}
	serveArgs := []string{"serve", "--transport", "http", "--addr", fmt.Sprintf("127.0.0.1:%d", *port), "--vault", vaultDir}
	if flags["watch"] {
		serveArgs = append(serveArgs, "--watch=false")
	} else {
		fmt.Fprintln(os.Stderr, "loopbench serve-start: warning: this binary has no --watch flag; serving without turning watching off")
	}
	serveArgs = append(serveArgs, fs.Args()...)

	rootDir := *root
	if rootDir == "" {
		rootDir = checkoutOf(binPath)
	}
	if rootDir != "" {
		rootDir = abs(rootDir)
		if st, err := os.Stat(filepath.Join(rootDir, "configs")); err != nil || !st.IsDir() {
			return usageErr("--root %s has no configs/", rootDir)
		}
	} else {
		fmt.Fprintln(os.Stderr, "loopbench serve-start: warning: no configs/ found beside the binary; pass --root CHECKOUT if the server cannot find its configuration")
	}

	if err := os.MkdirAll(*state, 0o755); err != nil {
		return err
	}
	recPath, logPath := statePaths(*state, *port)
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "\n---- loopbench serve-start %s: %s %s\n", time.Now().UTC().Format(time.RFC3339), binPath, strings.Join(serveArgs, " "))

	cmd := exec.Command(binPath, serveArgs...)
	cmd.Env = serveEnv(dataDir, rootDir, *threads)
	cmd.Dir = *state // a folder with no .env of its own
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this command
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", binPath, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	rec := serverRecord{PID: cmd.Process.Pid, Port: *port, Bin: binPath, Vault: vaultDir, Data: dataDir, Root: rootDir,
		Args: serveArgs, Log: logPath, Started: time.Now().UTC().Format(time.RFC3339)}
	b, _ := json.MarshalIndent(rec, "", "  ")
	if err := os.WriteFile(recPath, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("started pid %d: %s %s\n  VAULT_RAG_DATA=%s", rec.PID, binPath, strings.Join(serveArgs, " "), dataDir)
	if rootDir != "" {
		fmt.Printf(" VAULT_RAG_ROOT=%s", rootDir)
	}
	fmt.Printf("\n  log %s, record %s\n", logPath, recPath)
	if *wait <= 0 {
		fmt.Printf("not waiting; check with: curl -s %s/health\n", base)
		return nil
	}
	return waitComplete(base, *wait, exited, logPath)
}

// checkoutOf is the source checkout a binary was built into (CHECKOUT/bin/
// vault-rag, CHECKOUT/configs/), or "".
func checkoutOf(bin string) string {
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	dir := filepath.Dir(filepath.Dir(bin))
	if st, err := os.Stat(filepath.Join(dir, "configs")); err == nil && st.IsDir() {
		return dir
	}
	return ""
}

// serveFlags reads the flags `BIN serve -h` lists, so that an older binary
// is given only flags it has.
func serveFlags(bin string) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "serve", "-h")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = os.TempDir()
	_ = cmd.Run() // -h exits 0 or 2 by flag package convention
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+--?([a-zA-Z][\w-]*)`).FindAllStringSubmatch(out.String(), -1) {
		flags[m[1]] = true
	}
	if len(flags) == 0 {
		return nil, fmt.Errorf("%s serve -h listed no flags:\n%s", bin, out.String())
	}
	return flags, nil
}

// serveEnv is this environment without the variables that would point the
// server elsewhere (a vault, an index file, an address, a configuration or
// embedder of the caller's), with VAULT_RAG_DATA, VAULT_RAG_ROOT and
// VAULT_RAG_THREADS set.
func serveEnv(data, root string, threads int) []string {
	drop := map[string]bool{"VAULT_PATH": true, "DB_PATH": true, "VAULT_RAG_ADDR": true, "VAULT_RAG_CONFIG": true,
		"VAULT_RAG_EMBEDDER": true, "VAULT_RAG_TOKEN": true, "VAULT_RAG_TRANSPORT": true, "VAULT_RAG_ROOT": true,
		"VAULT_RAG_DATA": true, "VAULT_RAG_THREADS": true, "ONNXRUNTIME_LIB": true}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "VAULT_RAG_DATA="+data)
	if root != "" {
		env = append(env, "VAULT_RAG_ROOT="+root)
	}
	if threads > 0 {
		env = append(env, "VAULT_RAG_THREADS="+strconv.Itoa(threads))
	}
	return env
}

// health is the part of /health serve-start reads; older binaries may lack
// some of it (vectors above all), which then counts as unknown.
type health struct {
	Status  string `json:"status"`
	Vault   string `json:"vault"`
	Notes   int    `json:"notes"`
	Chunks  int    `json:"chunks"`
	Index   string `json:"index"`
	Vectors *struct {
		Embedded int `json:"embedded"`
		Chunks   int `json:"chunks"`
	} `json:"vectors"`
	Reindex struct {
		Running      bool            `json:"running"`
		Queued       bool            `json:"queued"`
		Builds       int             `json:"builds"`
		LastError    string          `json:"last_error"`
		Problem      string          `json:"problem"`
		OtherProcess json.RawMessage `json:"other_process_building"`
	} `json:"reindex"`
	DegradedStages []string `json:"degraded_stages"`
}

func getHealth(base string) (health, error) {
	var h health
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	res, err := c.Get(base + "/health")
	if err != nil {
		return h, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("%s/health answers %s, not vault-rag's health: %w", base, res.Status, err)
	}
	return h, nil
}

// complete says whether h describes a whole index: readable, with every
// chunk embedded and no build running or queued. Without a vectors field
// (an older binary), a finished build is taken as complete.
func (h health) complete() bool {
	if h.Index != "ok" || h.Reindex.Running || h.Reindex.Queued || len(h.Reindex.OtherProcess) > 0 && string(h.Reindex.OtherProcess) != "null" {
		return false
	}
	if h.Vectors != nil {
		return h.Chunks > 0 && h.Vectors.Embedded >= h.Vectors.Chunks
	}
	return h.Builds() > 0 || h.Chunks > 0
}

func (h health) Builds() int { return h.Reindex.Builds }

// progress is a one-line account of h.
func (h health) progress() string {
	s := fmt.Sprintf("%s: %d notes, %d chunks", h.Status, h.Notes, h.Chunks)
	if h.Vectors != nil {
		s += fmt.Sprintf(", %d of %d embedded", h.Vectors.Embedded, h.Vectors.Chunks)
	}
	if h.Reindex.Running {
		s += ", building"
	}
	if h.Index != "ok" && h.Index != "" {
		s += "; index: " + firstLine(h.Index)
	}
	if h.Reindex.Problem != "" {
		s += "; " + firstLine(h.Reindex.Problem)
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// waitComplete polls /health every two seconds, printing progress when it
// changes, until the index is complete, the server exits or wait passes.
func waitComplete(base string, wait time.Duration, exited <-chan error, logPath string) error {
	deadline := time.Now().Add(wait)
	last := ""
	start := time.Now()
	var printed time.Time
	digits := regexp.MustCompile(`[0-9]+`)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("the server exited (%v) before its index was complete; the end of %s:\n%s", err, logPath, tail(logPath, 3000))
		case <-time.After(2 * time.Second):
		}
		h, err := getHealth(base)
		line := ""
		if err != nil {
			line = "not answering yet: " + firstLine(err.Error())
		} else {
			line = h.progress()
		}
		// a changed state at most every 15 s, unless more than the counts changed
		if line != last && (time.Since(printed) >= 15*time.Second || digits.ReplaceAllString(line, "") != digits.ReplaceAllString(last, "")) {
			fmt.Printf("[%5.0fs] %s\n", time.Since(start).Seconds(), line)
			last, printed = line, time.Now()
		}
		if err == nil {
			if h.Reindex.LastError != "" {
				return fmt.Errorf("the server's build failed: %s (the server is still running; loopbench serve-stop to stop it)", h.Reindex.LastError)
			}
			if h.complete() {
				fmt.Printf("ready: %s/mcp (%s)\n", base, h.progress())
				for _, d := range h.DegradedStages {
					fmt.Printf("  degraded: %s\n", d)
				}
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the index is not complete after %s (the server is still running and building; check %s/health, or loopbench serve-stop)", wait, base)
		}
	}
}

func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// cmdServeStop stops the server serve-start started on a port: SIGTERM, then
// SIGKILL after 20 seconds. It checks the pid is still that server first.
func cmdServeStop(args []string) error {
	fs := flag.NewFlagSet("serve-stop", flag.ContinueOnError)
	port := fs.Int("port", 0, "the server's port")
	state := fs.String("state", defaultState(), "where serve-start kept its record [LOOPBENCH_STATE]")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *port <= 0 {
		return usageErr("--port: want a port number")
	}
	recPath, _ := statePaths(*state, *port)
	b, err := os.ReadFile(recPath)
	if err != nil {
		return fmt.Errorf("no server recorded on port %d (%v)", *port, err)
	}
	var rec serverRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return fmt.Errorf("%s: %w", recPath, err)
	}
	if !isServer(rec) {
		os.Remove(recPath)
		fmt.Printf("pid %d is no longer the server of port %d; nothing to stop\n", rec.PID, rec.Port)
		return nil
	}
	if err := syscall.Kill(rec.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop pid %d: %w", rec.PID, err)
	}
	for i := 0; i < 200 && isServer(rec); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if isServer(rec) {
		syscall.Kill(rec.PID, syscall.SIGKILL)
		fmt.Printf("pid %d did not stop on SIGTERM within 20 s; killed\n", rec.PID)
	} else {
		fmt.Printf("stopped pid %d (port %d)\n", rec.PID, rec.Port)
	}
	os.Remove(recPath)
	return nil
}

// isServer reports whether rec's pid is still running that server: its
// command line names serve and the port.
func isServer(rec serverRecord) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", rec.PID))
	if err != nil {
		return false
	}
	cmdline := strings.ReplaceAll(string(b), "\x00", " ")
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", rec.PID)); err == nil {
		// a zombie (state Z) has exited
		if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return false
		}
	}
	return strings.Contains(cmdline, " serve ") && strings.Contains(cmdline, fmt.Sprintf(":%d", rec.Port))
}

// cmdServeStatus prints, for each server serve-start recorded (or the one on
// --port), its pid, whether it still runs, and its /health in one line.
func cmdServeStatus(args []string) error {
	fs := flag.NewFlagSet("serve-status", flag.ContinueOnError)
	port := fs.Int("port", 0, "only this port's server")
	state := fs.String("state", defaultState(), "where serve-start kept its records [LOOPBENCH_STATE]")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pattern := filepath.Join(*state, "serve-*.json")
	if *port > 0 {
		pattern, _ = statePaths(*state, *port)
	}
	paths, _ := filepath.Glob(pattern)
	if len(paths) == 0 {
		return fmt.Errorf("no server recorded in %s", *state)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var rec serverRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		state := "running"
		if !isServer(rec) {
			state = "NOT running"
		}
		line := ""
		if h, err := getHealth(fmt.Sprintf("http://127.0.0.1:%d", rec.Port)); err != nil {
			line = "no answer: " + firstLine(err.Error())
		} else {
			line = h.progress()
			if h.complete() {
				line += " (complete)"
			}
		}
		fmt.Printf("http://127.0.0.1:%d/mcp  pid %d %s  %s\n  vault %s, data %s, log %s\n  %s\n", rec.Port, rec.PID, state, rec.Bin, rec.Vault, rec.Data, rec.Log, line)
	}
	return nil
}

// linkModels makes dst/lib a symlink to src/lib and each src/models/NAME a
// symlink dst/models/NAME, where dst has none: the binary finds the shared
// models and ONNX Runtime, and a model it fetches lands in dst, not src.
func linkModels(src, dst string) error {
	if _, err := os.Lstat(filepath.Join(dst, "lib")); os.IsNotExist(err) {
		if err := os.Symlink(filepath.Join(src, "lib"), filepath.Join(dst, "lib")); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(dst, "models"), 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(filepath.Join(src, "models"))
	if err != nil {
		return fmt.Errorf("--models-from: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		link := filepath.Join(dst, "models", e.Name())
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join(src, "models", e.Name()), link); err != nil {
				return err
			}
		}
	}
	return nil
}
