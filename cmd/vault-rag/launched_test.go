package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

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
		t.Skip("the stand-in npx and uvx are POSIX files; clientconfig.TestThroughRunner covers Windows")
	}
	_, vault, data := connectEnv(t)
	bin := standInRunners(t)
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

// standInRunners is a folder of stand-ins for npx, node and uvx: POSIX
// scripts that do nothing, for an entry to name by their absolute paths.
func standInRunners(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "node", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"npx", "node", "uvx"} {
		if err := os.WriteFile(filepath.Join(bin, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
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
