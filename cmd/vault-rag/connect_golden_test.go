package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/clientconfig"
)

var updateConnect = flag.Bool("update", false, "rewrite testdata/connect.golden from what connect prints and writes now")

// connectGolden holds every byte connect printed and wrote in
// TestConnectGolden, with the machine's paths replaced by names.
const connectGolden = "testdata/connect.golden"

// TestConnectGolden holds connect's whole output to a file: what it prints
// for each client with and without --json, --list, -h, what --write leaves in
// the file and says, its refusals, and the entries and notes of the npx and
// uvx routes. The other connect tests check what the output means; this one
// that not a byte of it changes unnoticed. Paths and clients' notes differ
// by OS, so it runs where the file was made, on Linux.
func TestConnectGolden(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the golden output is Linux's: its paths and notes")
	}
	home, _, _ := connectEnv(t)
	tmp := filepath.Dir(filepath.Dir(home))
	realTmp, err := filepath.EvalSymlinks(tmp) // what --write names files by
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	// The one-click route depends on the bundles lying near the test binary;
	// TestBundleRoute checks it, and its texts are held below.
	bundle := bundleRoute(findBundle(exe), clientconfig.ThisHost())
	backupStamp := regexp.MustCompile(`\.bak-[0-9]{8}-[0-9]{6}`)
	clean := func(s string) string {
		s = strings.ReplaceAll(s, exe, "$EXE")
		s = strings.ReplaceAll(s, realTmp, "$TMP")
		s = strings.ReplaceAll(s, tmp, "$TMP")
		return backupStamp.ReplaceAllString(s, ".bak-STAMP")
	}
	var b strings.Builder
	// run records one connect: its arguments, stdout, the error main would
	// print, and stderr when withStderr (the warnings about this machine's
	// setup vary from one machine to another).
	run := func(withStderr bool, args ...string) {
		t.Helper()
		out, stderr, err := runConnect(t, args...)
		out = strings.Replace(out, bundle, "[the one-click route]\n", 1)
		fmt.Fprintf(&b, "=== connect %s\n--- stdout\n%s", clean(strings.Join(args, " ")), clean(out))
		if withStderr {
			fmt.Fprintf(&b, "--- stderr\n%s", clean(stderr))
		}
		if err != nil {
			fmt.Fprintf(&b, "--- exit %d\n%s\n", exitCode(err), clean(err.Error()))
		}
	}
	// file records a file's content after a connect, and the files beside it.
	file := func(p string) {
		t.Helper()
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(filepath.Dir(p))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		fmt.Fprintf(&b, "--- %s\n%s--- beside it: %s\n", clean(p), clean(string(data)), clean(strings.Join(names, " ")))
	}

	for _, c := range []string{"claude-desktop", "claude-code", "cursor", "vscode"} {
		run(false, "--json", c)
		run(false, c)
		run(false, c, "--name", "vault-rag-work")
	}
	run(false, "--list")
	run(false, "--list", "--json")
	run(false, "-h")

	dir := filepath.Join(t.TempDir(), "config dir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, client, existing string, args ...string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if existing != "" {
			if err := os.WriteFile(p, []byte(existing), 0o640); err != nil {
				t.Fatal(err)
			}
		}
		run(false, append([]string{client, "--write", "--config-file", p}, args...)...)
		file(p)
	}
	other := `{"command": "npx", "args": ["-y", "other-server"], "env": {"API_KEY": "k&<>"}}`
	write("created.json", "cursor", "")
	write("added.json", "claude-desktop", "{\n    \"theme\": \"dark\",\n    \"mcpServers\": {\"other\": "+other+"},\n    \"zz\": [1, 2]\n}\n")
	write("replaced.json", "vscode", "\ufeff{\n\t\"servers\": {\"vault-rag\": {\"command\": \"/old\"}, \"other\": "+other+", \"vault-rag\": {}}\n}\n")
	write("tabs.json", "vscode", "{\n\t\"servers\": {}\n}\n", "--name", "vault-rag-work")
	write("unparseable.json", "cursor", "{\"mcpServers\": {\"other\": "+other+",\n")
	write("comma.json", "cursor", "{\"mcpServers\": {\"other\": "+other+",}}\n")
	write("comments.json", "vscode", "// my servers\n{\"servers\": {}}\n")
	write("array.json", "cursor", "[]\n")
	write("string.json", "cursor", "\"x\"\n")
	write("not-servers.json", "cursor", "{\"mcpServers\": [1]}\n")
	// Through a symlink, the file it names is written and named.
	if err := os.WriteFile(filepath.Join(dir, "real.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	run(false, "cursor", "--write", "--config-file", filepath.Join(dir, "link.json"))
	file(filepath.Join(dir, "real.json"))

	for _, args := range [][]string{
		{"zed"}, {"claude"}, {"claude-dekstop"}, {"--name", "a/b", "cursor"},
		{"--write", "claude-code"}, {"--write", "--json", "cursor"}, {},
		{"cursor", "vscode"}, {"cursor", home}, {"--list", "cursor"},
	} {
		run(false, args...)
	}

	// The npx and uvx routes, with stand-ins for the runners and node.
	bin := standInRunners(t)
	t.Setenv("PATH", t.TempDir()) // no npx or uvx of this machine's
	t.Setenv(envPackage, "vault-rag@1.2.3")
	t.Setenv(envNode, filepath.Join(bin, "node"))
	t.Setenv(envInstall, "npx")
	t.Setenv(envRunner, filepath.Join(bin, "npx"))
	run(true, "claude-desktop")
	run(true, "--json", "vscode")
	run(true, "claude-code")
	write("npx.json", "cursor", "")
	t.Setenv(envRunner, filepath.Join(bin, "gone"))
	run(true, "cursor")
	t.Setenv(envNode, "/usr/bin/node")
	run(true, "claude-code")
	t.Setenv(envInstall, "uvx")
	t.Setenv(envRunner, filepath.Join(bin, "uvx"))
	run(true, "claude-code")
	run(true, "--json", "claude-desktop")
	t.Setenv(envRunner, "")
	run(true, "vscode")

	// The one-click route's texts, left out of the outputs above.
	for _, tc := range []struct{ bundle, goos string }{
		{"", "linux"}, {"", "darwin"}, {"/x/vault-rag-1.0.0.mcpb", "linux"}, {`C:\dl\vault-rag-1.0.0.mcpb`, "windows"},
	} {
		fmt.Fprintf(&b, "=== bundleRoute %q %s\n%s", tc.bundle, tc.goos, bundleRoute(tc.bundle, clientconfig.Host{GOOS: tc.goos, Env: func(string) string { return "" }}))
	}

	got := b.String()
	if *updateConnect {
		if err := os.MkdirAll(filepath.Dir(connectGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(connectGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(connectGolden)
	if err != nil {
		t.Fatalf("%v (go test -run TestConnectGolden -update writes it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("connect's output differs from %s at line %d:\n got %q\nwant %q\n(go test -run TestConnectGolden -update rewrites it after a change meant)", connectGolden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("connect's output has %d lines, %s %d", len(gl), connectGolden, len(wl))
	}
}
