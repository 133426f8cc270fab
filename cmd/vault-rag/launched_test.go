package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestRunnerServer checks the entry for each package runner on each OS: the
// runner by an absolute path (the launcher's, else PATH's), the exact
// package version, node's folder on PATH only where a desktop application
// would not have it, and node with npx-cli.js on Windows.
func TestRunnerServer(t *testing.T) {
	base := mcpServer{Type: "stdio", Command: "/cache/vault-rag/bin/vault-rag", Args: []string{"serve", "--transport", "stdio"},
		Env: map[string]string{"VAULT_PATH": "/notes", "VAULT_RAG_DATA": "/data"}}
	serve := []string{"serve", "--transport", "stdio"}
	env := func(extra ...string) map[string]string {
		m := map[string]string{"VAULT_PATH": "/notes", "VAULT_RAG_DATA": "/data"}
		for i := 0; i < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	nvm := "/home/u/.nvm/versions/node/v22.1.0/bin"
	winNode := `C:\Program Files\nodejs\node.exe`
	winCLI := `C:\Program Files\nodejs\node_modules\npm\bin\npx-cli.js`
	for _, tc := range []struct {
		name    string
		goos    string
		l       launch
		files   []string          // what exists
		path    map[string]string // what exec.LookPath finds
		want    mcpServer
		warning string
	}{{
		name:  "npx under nvm: node's folder goes on PATH",
		goos:  "linux",
		l:     launch{via: "npx", pkg: "vault-rag@1.2.3", runner: nvm + "/npx", node: nvm + "/node"},
		files: []string{nvm + "/npx"},
		want: mcpServer{Type: "stdio", Command: nvm + "/npx", Args: append([]string{"-y", "vault-rag@1.2.3"}, serve...),
			Env: env("PATH", nvm+":/usr/bin:/bin:/usr/sbin:/sbin")},
	}, {
		name:  "npx with the system node: PATH left alone",
		goos:  "darwin",
		l:     launch{via: "npx", pkg: "vault-rag@1.2.3", runner: "/usr/bin/npx", node: "/usr/bin/node"},
		files: []string{"/usr/bin/npx"},
		want:  mcpServer{Type: "stdio", Command: "/usr/bin/npx", Args: append([]string{"-y", "vault-rag@1.2.3"}, serve...), Env: env()},
	}, {
		name: "npx the launcher did not name: the one on PATH",
		goos: "darwin",
		l:    launch{via: "npx", pkg: "@me/vault-rag@2.0.0", node: "/opt/homebrew/bin/node"},
		path: map[string]string{"npx": "/opt/homebrew/bin/npx"},
		want: mcpServer{Type: "stdio", Command: "/opt/homebrew/bin/npx", Args: append([]string{"-y", "@me/vault-rag@2.0.0"}, serve...),
			Env: env("PATH", "/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin")},
	}, {
		name:    "npx nowhere to be found: the bare name, and a warning",
		goos:    "linux",
		l:       launch{via: "npx", pkg: "vault-rag@1.2.3", runner: "/gone/npx"},
		want:    mcpServer{Type: "stdio", Command: "npx", Args: append([]string{"-y", "vault-rag@1.2.3"}, serve...), Env: env()},
		warning: "no npx was found on PATH",
	}, {
		name:  "npx on Windows: node runs npx-cli.js, no .cmd",
		goos:  "windows",
		l:     launch{via: "npx", pkg: "vault-rag@1.2.3", runner: `C:\Program Files\nodejs\npx.cmd`, node: winNode},
		files: []string{winCLI, `C:\Program Files\nodejs\npx.cmd`},
		want:  mcpServer{Type: "stdio", Command: winNode, Args: append([]string{winCLI, "-y", "vault-rag@1.2.3"}, serve...), Env: env()},
	}, {
		name:    "npx on Windows without npm beside node: npx.cmd, and a warning",
		goos:    "windows",
		l:       launch{via: "npx", pkg: "vault-rag@1.2.3", node: winNode},
		path:    map[string]string{"npx.cmd": `C:\nvm4w\nodejs\npx.cmd`},
		want:    mcpServer{Type: "stdio", Command: `C:\nvm4w\nodejs\npx.cmd`, Args: append([]string{"-y", "vault-rag@1.2.3"}, serve...), Env: env()},
		warning: "no npx-cli.js beside",
	}, {
		name:  "uvx",
		goos:  "linux",
		l:     launch{via: "uvx", pkg: "vault-rag@1.2.3", runner: "/home/u/.local/bin/uvx"},
		files: []string{"/home/u/.local/bin/uvx"},
		want:  mcpServer{Type: "stdio", Command: "/home/u/.local/bin/uvx", Args: append([]string{"vault-rag@1.2.3"}, serve...), Env: env()},
	}, {
		name: "uvx on Windows, found on PATH",
		goos: "windows",
		l:    launch{via: "uvx", pkg: "vault-rag@1.2.3"},
		path: map[string]string{"uvx.exe": `C:\Users\u\.local\bin\uvx.exe`},
		want: mcpServer{Type: "stdio", Command: `C:\Users\u\.local\bin\uvx.exe`, Args: append([]string{"vault-rag@1.2.3"}, serve...), Env: env()},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			exists := func(p string) bool {
				for _, f := range tc.files {
					if f == p {
						return true
					}
				}
				return false
			}
			lookPath := func(name string) (string, error) {
				if p, ok := tc.path[name]; ok {
					return p, nil
				}
				return "", errors.New("not found")
			}
			h := host{goos: tc.goos, getenv: func(string) string { return "" }}
			got, warnings := runnerServer(tc.l, h, base, exists, lookPath)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("entry\n got %+v\nwant %+v", got, tc.want)
			}
			joined := strings.Join(warnings, "\n")
			if tc.warning == "" && joined != "" || !strings.Contains(joined, tc.warning) {
				t.Errorf("warnings %q, want one saying %q", joined, tc.warning)
			}
			if base.Env["PATH"] != "" || len(base.Env) != 2 {
				t.Errorf("the base entry's env was changed: %v", base.Env)
			}
		})
	}
}

func TestLaunchFrom(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	got := launchFrom(env(map[string]string{envInstall: "uvx", envPackage: "vault-rag@1.0.0", envRunner: "/bin/uvx"}))
	if got != (launch{via: "uvx", pkg: "vault-rag@1.0.0", runner: "/bin/uvx"}) || !got.ephemeral() {
		t.Errorf("uvx: %+v", got)
	}
	if got := launchFrom(env(map[string]string{envInstall: "npm", envPackage: "vault-rag@1.0.0"})); got.ephemeral() || got.via != "npm" {
		t.Errorf("npm: %+v: an npm install stays, so the binary itself is configured", got)
	}
	if got := launchFrom(env(map[string]string{envInstall: "brew", envPackage: "x"})); got != (launch{}) {
		t.Errorf("an unknown launcher %+v, want the binary started directly", got)
	}
}

// connect run by the npm launcher under npx writes an entry that starts the
// server through npx again, by absolute paths; run by a launcher that
// stays installed (npm, pip) it names the binary itself, as for an archive.
func TestConnectThroughRunner(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in npx and uvx are POSIX files; TestRunnerServer covers Windows")
	}
	_, vault, data := connectEnv(t)
	bin := filepath.Join(t.TempDir(), "node", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"npx", "node", "uvx"} {
		if err := os.WriteFile(filepath.Join(bin, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(envPackage, "vault-rag@1.2.3")
	t.Setenv(envNode, filepath.Join(bin, "node"))

	t.Setenv(envInstall, "npx")
	t.Setenv(envRunner, filepath.Join(bin, "npx"))
	out, _, err := runConnect(t, "--json", "cursor")
	if err != nil {
		t.Fatal(err)
	}
	s := serverOf(t, []byte(out), "mcpServers", "vault-rag")
	want := map[string]any{
		"command": filepath.Join(bin, "npx"),
		"args":    []any{"-y", "vault-rag@1.2.3", "serve", "--transport", "stdio"},
		"env":     map[string]any{"VAULT_PATH": vault, "VAULT_RAG_DATA": data, "PATH": bin + ":/usr/bin:/bin:/usr/sbin:/sbin"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("npx entry\n got %v\nwant %v", s, want)
	}

	out, _, err = runConnect(t, "claude-desktop")
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"through npx at the version that ran (vault-rag@1.2.3), naming npx by its absolute path", "with Node.js's folder on its PATH", "one-click route", "-y"} {
		if !strings.Contains(out, part) {
			t.Errorf("connect claude-desktop under npx does not say %q:\n%s", part, out)
		}
	}

	t.Setenv(envInstall, "uvx")
	t.Setenv(envRunner, filepath.Join(bin, "uvx"))
	out, _, err = runConnect(t, "--json", "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	var code map[string]any
	if err := json.Unmarshal([]byte(out), &code); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want = map[string]any{
		"type":    "stdio",
		"command": filepath.Join(bin, "uvx"),
		"args":    []any{"vault-rag@1.2.3", "serve", "--transport", "stdio"},
		"env":     map[string]any{"VAULT_PATH": vault, "VAULT_RAG_DATA": data},
	}
	if !reflect.DeepEqual(code, want) {
		t.Errorf("uvx entry\n got %v\nwant %v", code, want)
	}

	for _, via := range []string{"npm", "pip"} {
		t.Setenv(envInstall, via)
		out, _, err = runConnect(t, "--json", "vscode")
		if err != nil {
			t.Fatal(err)
		}
		checkServer(t, serverOf(t, []byte(out), "servers", "vault-rag"), "stdio", vault, data)
	}
}

func TestVersionLine(t *testing.T) {
	if got := versionLine("v1.2.3", launch{}); !strings.HasPrefix(got, "vault-rag v1.2.3 ") || strings.Contains(got, "(") {
		t.Errorf("the binary itself: %q", got)
	}
	got := versionLine("v1.2.3", launch{via: "uvx", pkg: "vault-rag@1.2.3"})
	if !strings.Contains(got, "(PyPI package vault-rag@1.2.3, run by uvx)") {
		t.Errorf("under uvx: %q", got)
	}
	r := mustRun(t, t.TempDir(), "", "", "--version")
	if !strings.HasPrefix(r.stdout, "vault-rag ") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("vault-rag --version printed %q", r.stdout)
	}
}
