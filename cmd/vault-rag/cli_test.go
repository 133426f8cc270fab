package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
)

// Every command refuses what it does not take, before doing anything: a stray
// argument (`vault-rag reindex ~/notes` must not index ./vault) and an
// unknown flag, which for search is most often a query starting with a dash.
func TestStrayArguments(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	if err := os.Mkdir(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "index", "vault.db")
	for _, args := range [][]string{
		{"reindex", notes},
		{"reindex", "--incremental", "extra"},
		{"eval", "demo"},
		{"sweep", "experiments/sweeps/rrf-depth.yaml", "demo"},
		{"serve", "--transport", "stdio", "x"},
		{"models", "list"},
		{"bench", "now"},
		{"gen", "--notes", "3", "--out", filepath.Join(dir, "gen"), "more"},
	} {
		r := run(t, dir, filepath.Join(dir, "no-vault"), db, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "unexpected argument") || r.stdout != "" {
			t.Errorf("vault-rag %s: want exit 2 and \"unexpected argument\", got %s", strings.Join(args, " "), r)
		}
	}
	if r := run(t, dir, "", db, "reindex", notes); !strings.Contains(r.stderr, "--vault "+notes) {
		t.Errorf("a folder given to reindex should be pointed at --vault: %s", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "index")); err == nil {
		t.Error("a refused command wrote an index")
	}
	if _, err := os.Stat(filepath.Join(dir, "gen")); err == nil {
		t.Error("a refused gen wrote a vault")
	}

	if r := run(t, dir, "", db, "bench", "--only", "recall"); r.code == 0 || !strings.Contains(r.stderr, "--recall-notes") {
		t.Errorf("bench --only recall without a size: want a failure naming --recall-notes, got %s", r)
	}

	r := run(t, dir, "", db, "search", "--background-primary")
	if r.code != 2 || !strings.Contains(r.stderr, `"--" ends the flags`) || !strings.Contains(r.stderr, "vault-rag search -- --background-primary") {
		t.Errorf("a query starting with a dash: want exit 2 and a word on --, got %s", r)
	}
}

// `vault-rag --help` names every environment variable the program reads:
// they are found in the source, so a new one cannot be left out.
func TestHelpListsEverySetting(t *testing.T) {
	read := map[string]string{} // name → where
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "data" || strings.HasPrefix(d.Name(), ".")) && p != repoRoot {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			name := ""
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			case *ast.Ident:
				name = fn.Name
			}
			if name != "Getenv" && name != "LookupEnv" && name != "envOr" {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					read[v] = p
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(read) < 5 {
		t.Fatalf("found only %d settings in the source: %v", len(read), read)
	}
	r := mustRun(t, t.TempDir(), "", "", "--help")
	for name, where := range read {
		if name == "VAULT_RAG_BIN" || name == "LOOPBENCH_STATE" { // the load test's and the loop benchmark's own, not the program's
			continue
		}
		if !strings.Contains(r.stdout, name) {
			t.Errorf("--help does not list %s (read in %s)", name, where)
		}
	}
}

// A client that starts vault-rag from its own folder, with only VAULT_PATH
// set, gets the checkout's data folder (models, ONNX Runtime, the index) and
// configs/ from beside the binary, and search honours VAULT_RAG_CONFIG.
func TestRunsFromAnotherFolder(t *testing.T) {
	d := demoIndex(t)
	co := filepath.Join(t.TempDir(), "checkout")
	for _, sub := range []string{"bin", "data", "models"} {
		if err := os.MkdirAll(filepath.Join(co, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// What makes it a checkout, whose binary keeps its data in data/.
	for _, f := range []string{"go.mod", "models/manifest.json"} {
		if err := os.WriteFile(filepath.Join(co, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := vaultfs.CopyFile(binary(t), filepath.Join(co, "bin", "vault-rag"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vaultfs.CopyTree(filepath.Join(repoRoot, "configs"), filepath.Join(co, "configs")); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"models", "lib"} {
		if err := os.Symlink(filepath.Join(repoRoot, "data", sub), filepath.Join(co, "data", sub)); err != nil {
			t.Fatal(err)
		}
	}
	// The vault's own index under the data folder: VAULT_PATH alone finds it.
	own, err := index.DefaultPath(filepath.Join(co, "data"), d.vault)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(own), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vaultfs.CopyFile(d.db, own, 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	runThere := func(extra []string, args ...string) (string, string, error) {
		cmd := exec.Command(filepath.Join(co, "bin", "vault-rag"), args...)
		cmd.Dir = elsewhere
		cmd.Env = append(append(cleanEnv(), "VAULT_PATH="+d.vault), extra...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	out, stderr, err := runThere(nil, "models")
	if err != nil || !strings.Contains(out, filepath.Join(co, "data", "models")) || !strings.Contains(out, "onnxruntime: "+filepath.Join(co, "data", "lib")) {
		t.Errorf("models from another folder: %v\n%s%s", err, out, stderr)
	}
	for _, cfg := range []string{"", "keyword"} {
		var extra []string
		want := "shipping"
		if cfg != "" {
			extra, want = []string{"VAULT_RAG_CONFIG=" + cfg}, cfg
		}
		out, stderr, err := runThere(extra, "search", "--json", "--", "lease_ttl_ms")
		if err != nil {
			t.Fatalf("search from another folder (config %q): %v\n%s", cfg, err, stderr)
		}
		var res struct {
			Config string
			Notes  []struct{ Path string }
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("search --json: %v\n%s", err, out)
		}
		if res.Config != want || len(res.Notes) == 0 {
			t.Errorf("search with VAULT_RAG_CONFIG=%q ran %q with %d notes, want %q with some", cfg, res.Config, len(res.Notes), want)
		}
	}
}

// Help is asked for, not an error: every command's -h and --help print its
// usage on stdout and exit 0, as "vault-rag -h" does.
func TestHelpExitsZero(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-h"}, {"--help"}, {"help"},
		{"reindex", "-h"}, {"search", "--help"}, {"eval", "-h"}, {"sweep", "-h"}, {"serve", "-h"}, {"gen", "-h"}, {"bench", "-h"},
		{"models", "-h"}, {"models", "fetch", "-h"}, {"models", "import", "-h"},
	} {
		r := run(t, dir, "", "", args...)
		if r.code != 0 || !strings.Contains(strings.ToLower(r.stdout), "usage") || r.stderr != "" {
			t.Errorf("vault-rag %s: want exit 0 and the usage on stdout alone, got %s", strings.Join(args, " "), r)
		}
	}
}

// models import parses its flags as every command does: an unknown flag is
// refused with the word on -h, too few operands with the usage.
func TestModelsImportFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"models", "import", "--force", "x", "y"}, `vault-rag models import: unknown flag --force`},
		{[]string{"models", "import", "--force", "x", "y"}, `run "vault-rag models import -h" for its flags`},
		{[]string{"models", "import", "bge-small-en-v1.5"}, "usage: vault-rag models import NAME PATH"},
	} {
		r := run(t, dir, "", "", tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("vault-rag %s: want exit 2 and %q on stderr, got %s", strings.Join(tc.args, " "), tc.want, r)
		}
	}
}

// Every command that reads configurations defaults --root the same way
// (VAULT_RAG_ROOT, else ./configs, else the binary's checkout), and every
// command that takes --embedder defaults it to VAULT_RAG_EMBEDDER.
func TestFlagDefaultsFollowTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "somewhere")
	for _, tc := range []struct {
		env  string
		cmd  string
		flag string
		want string
	}{
		{"VAULT_RAG_ROOT=" + root, "search", "-root", root},
		{"VAULT_RAG_ROOT=" + root, "serve", "-root", root},
		{"VAULT_RAG_ROOT=" + root, "eval", "-root", root},
		{"VAULT_RAG_ROOT=" + root, "bench", "-root", root},
		{"VAULT_RAG_EMBEDDER=bge-small-en-v1.5", "reindex", "-embedder", "bge-small-en-v1.5"},
		{"VAULT_RAG_EMBEDDER=bge-small-en-v1.5", "bench", "-embedder", "bge-small-en-v1.5"},
	} {
		cmd := command(t, dir, "", "", tc.cmd, "-h")
		cmd.Env = append(cmd.Env, tc.env)
		r := runCmd(t, cmd)
		if got := flagDefault(r.stdout, tc.flag); got != strconv.Quote(tc.want) {
			t.Errorf("%s vault-rag %s -h: %s defaults to %s, want %q\n%s", tc.env, tc.cmd, tc.flag, got, tc.want, r)
		}
	}
}

// flagDefault is the "(default ...)" a flag's entry of PrintDefaults shows.
func flagDefault(usage, flag string) string {
	_, entry, ok := strings.Cut(usage, "\n  "+flag+" ")
	if !ok {
		return ""
	}
	if i := strings.Index(entry, "\n  -"); i >= 0 {
		entry = entry[:i]
	}
	_, def, ok := strings.Cut(entry, "(default ")
	if !ok {
		return ""
	}
	return strings.TrimSuffix(strings.TrimSpace(def), ")")
}

// search's date filters are named as vault_search's parameters
// (--date-from, --date-to); --from and --to still work, as aliases.
func TestSearchDateFlags(t *testing.T) {
	d := demoIndex(t)
	search := func(flags ...string) []string {
		t.Helper()
		args := append([]string{"search", "--json", "--config", "keyword", "--now", "2026-03-01"}, flags...)
		r := mustRun(t, d.root, d.vault, d.db, append(args, "--", "lease")...)
		var res struct{ Notes []struct{ Path, Date string } }
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("search --json: %v\n%s", err, r.stdout)
		}
		var out []string
		for _, n := range res.Notes {
			out = append(out, n.Date+" "+n.Path)
		}
		return out
	}
	all := search()
	outside := 0
	for _, n := range all {
		if n[:10] < "2025-01-01" || n[:10] > "2025-12-31" {
			outside++
		}
	}
	if outside == 0 {
		t.Fatalf("every note found without a filter is of 2025; the test needs some that are not: %q", all)
	}
	named := search("--date-from", "2025-01-01", "--date-to", "2025-12-31")
	if len(named) == 0 {
		t.Fatal("--date-from 2025-01-01 --date-to 2025-12-31 found nothing")
	}
	for _, n := range named {
		if n[:10] < "2025-01-01" || n[:10] > "2025-12-31" {
			t.Errorf("--date-from 2025-01-01 --date-to 2025-12-31 found %s", n)
		}
	}
	if alias := search("--from", "2025-01-01", "--to", "2025-12-31"); strings.Join(alias, "\n") != strings.Join(named, "\n") {
		t.Errorf("--from/--to found\n%q\n--date-from/--date-to\n%q", alias, named)
	}
	help := mustRun(t, d.root, "", "", "search", "-h").stdout
	for _, want := range []string{"alias of --date-from", "alias of --date-to"} {
		if !strings.Contains(help, want) {
			t.Errorf("search -h does not say %q:\n%s", want, help)
		}
	}
}
