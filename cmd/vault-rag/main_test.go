package main

// The tests of this package run the built binary, as a user would, against
// temporary copies of the demo vault, with the real embedder. They are slow
// (each full index of the demo vault takes tens of seconds) and skip under
// -short.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/modeltest"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models"
)

// repoRoot is the checkout (tests run in cmd/vault-rag).
var repoRoot = func() string {
	abs, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return abs
}()

// testDir holds what the package's tests share: the binary, the data folder,
// the demo index. It is removed when the tests end.
var testDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "vault-rag-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds the vault-rag binary once per test process and returns its
// path. The tests need the real embedder; without it they skip.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary with the real embedder; skipped with -short")
	}
	if st := models.Check(filepath.Join(repoRoot, "data"), mustSpec(t, models.DefaultEmbedder)); !st.Installed {
		modeltest.Missing(t, "the real embedder is not installed (%s; run `make setup`)", st.Problem)
	}
	binOnce.Do(func() {
		binPath = filepath.Join(testDir, "bin", "vault-rag")
		cmd := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", binPath, "./cmd/vault-rag")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if os.Getenv("CGO_LDFLAGS") == "" {
			cmd.Env = append(cmd.Env, "CGO_LDFLAGS=-L"+filepath.Join(repoRoot, "data", "lib"))
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func mustSpec(t *testing.T, name string) models.Spec {
	t.Helper()
	m, err := models.LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var dataOnce sync.Once

// dataDir is a VAULT_RAG_DATA of the tests' own: the checkout's models and
// libraries, linked, and an empty eval/ work folder, so nothing the binary
// writes lands in the checkout's data/.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testDir, "data")
	dataOnce.Do(func() {
		if err := os.MkdirAll(filepath.Join(dir, "eval"), 0o755); err != nil {
			panic(err)
		}
		for _, sub := range []string{"models", "lib"} {
			if err := os.Symlink(filepath.Join(repoRoot, "data", sub), filepath.Join(dir, sub)); err != nil {
				panic(err)
			}
		}
	})
	return dir
}

// result is how a run of the binary ended.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// command prepares a run of the binary in dir with the tests' data folder and
// the given vault and index (empty: unset).
func command(t *testing.T, dir, vault, db string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "VAULT_RAG_DATA="+dataDir(t))
	if vault != "" {
		cmd.Env = append(cmd.Env, "VAULT_PATH="+vault)
	}
	if db != "" {
		cmd.Env = append(cmd.Env, "DB_PATH="+db)
	}
	return cmd
}

// cleanEnv is the test process's environment without any vault-rag setting.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "VAULT_PATH" || k == "DB_PATH" || strings.HasPrefix(k, "VAULT_RAG_") || k == "ONNXRUNTIME_LIB" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// run runs the binary to its end.
func run(t *testing.T, dir, vault, db string, args ...string) result {
	t.Helper()
	return runCmd(t, command(t, dir, vault, db, args...))
}

// runCmd runs a prepared command to its end.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	args := cmd.Args[1:]
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ProcessState.Exited():
		r.code = ee.ExitCode()
	default:
		t.Fatalf("vault-rag %s: %v\n%s", strings.Join(args, " "), err, r)
	}
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("vault-rag %s panicked:\n%s", strings.Join(args, " "), r)
	}
	return r
}

// mustRun runs the binary and fails the test unless it exits 0.
func mustRun(t *testing.T, dir, vault, db string, args ...string) result {
	t.Helper()
	r := run(t, dir, vault, db, args...)
	if r.code != 0 {
		t.Fatalf("vault-rag %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// mustCopyTree copies a folder, failing the test if it cannot.
func mustCopyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := vaultfs.CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
}

func fileSHA(t *testing.T, p string) string {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// demoRoot is a copy of what eval --root wants: configs/, experiments/,
// eval/queries.json, vault/ and baselines/.
func demoRoot(t *testing.T, dst string) string {
	t.Helper()
	for _, sub := range []string{"configs", "experiments", "vault"} {
		mustCopyTree(t, filepath.Join(repoRoot, sub), filepath.Join(dst, sub))
	}
	if err := os.MkdirAll(filepath.Join(dst, "eval"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vaultfs.CopyFile(filepath.Join(repoRoot, "eval", "queries.json"), filepath.Join(dst, "eval", "queries.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "baselines")); err == nil {
		mustCopyTree(t, filepath.Join(repoRoot, "baselines"), filepath.Join(dst, "baselines"))
	} else if err := os.MkdirAll(filepath.Join(dst, "baselines"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// demo is the demo vault indexed once per test process by `vault-rag
// reindex`, with the digests of its root taken before and after.
type demo struct {
	root          string // configs/, experiments/, eval/, vault/, baselines/
	vault         string
	db            string // the index; tests copy it before changing it
	fingerprint   string
	before, after vaultfs.Tree // digests of root around the reindex
	reindex       result
}

var (
	demoOnce sync.Once
	demoV    *demo
	demoErr  error
)

// demoIndex returns the shared demo index, building it on first use.
func demoIndex(t *testing.T) *demo {
	t.Helper()
	binary(t)
	demoOnce.Do(func() {
		demoErr = errors.New("building the demo index failed (see the first test that asked for it)")
		d := &demo{root: demoRoot(t, filepath.Join(testDir, "demo-root"))}
		d.vault = filepath.Join(d.root, "vault")
		d.db = filepath.Join(testDir, "demo-index", "vault.db")
		d.before = vaulttest.MustDigest(t, d.root)
		d.reindex = mustRun(t, d.root, d.vault, d.db, "reindex")
		d.after = vaulttest.MustDigest(t, d.root)
		d.fingerprint = openFingerprint(t, d.db)
		demoV, demoErr = d, nil
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoV
}

// openFingerprint opens an index as a search would, checks that a keyword
// search finds something, and returns the index's content fingerprint.
func openFingerprint(t *testing.T, dbPath string) string {
	t.Helper()
	ctx := context.Background()
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		t.Fatalf("index.Open(%s): %v", dbPath, err)
	}
	defer db.Close()
	hits, err := db.Keyword(ctx, index.KeywordQuery{Terms: []string{"lease", "note", "the"}, Limit: 5})
	if err != nil || len(hits) == 0 {
		t.Fatalf("keyword search of %s: %d hits, %v", dbPath, len(hits), err)
	}
	fp := db.Meta("fingerprint")
	if fp == "" {
		t.Fatalf("%s has no fingerprint", dbPath)
	}
	return fp
}
