package main

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"runtime"
	"slices"
	"strings"
)

// The package launchers (packaging/npm, packaging/pypi) start the binary with
// these set, so that it knows how it was installed: connect then writes a
// configuration that starts it the same way, and --version names the package.
const (
	// envInstall is how: "npx" (npm's cache, gone when it is cleaned), "npm"
	// (an npm install that stays), "uvx" (uv's cache) or "pip" (a Python
	// environment that stays). Unset for a release archive, the bundle or a
	// checkout.
	envInstall = "VAULT_RAG_INSTALL"
	// envPackage is the package and its exact version, NAME@VERSION, which
	// both npx and uvx take.
	envPackage = "VAULT_RAG_PACKAGE"
	// envRunner is the absolute path of the npx or uvx that ran the
	// launcher, when the launcher could tell.
	envRunner = "VAULT_RAG_RUNNER"
	// envNode is the node program that ran the npm launcher.
	envNode = "VAULT_RAG_NODE"
)

// launch is how this process was started, as its launcher said (launchFrom).
type launch struct {
	via    string // envInstall; "" for the binary started directly
	pkg    string // envPackage
	runner string // envRunner
	node   string // envNode
}

// launchFrom reads the launcher's variables from an environment. A value the
// launchers never set is treated as the binary started directly.
func launchFrom(getenv func(string) string) launch {
	l := launch{via: getenv(envInstall), pkg: getenv(envPackage), runner: getenv(envRunner), node: getenv(envNode)}
	if !slices.Contains([]string{"npx", "npm", "uvx", "pip"}, l.via) {
		return launch{}
	}
	return l
}

// ephemeral reports whether the binary lives in a package runner's cache,
// where a client cannot be pointed at it: npx and uvx can clean their
// caches, or fetch another version into another folder, at any time.
func (l launch) ephemeral() bool { return l.via == "npx" || l.via == "uvx" }

// describe is the launch as --version tells it ("" for the binary itself).
func (l launch) describe() string {
	switch l.via {
	case "":
		return ""
	case "npx", "npm":
		return fmt.Sprintf("npm package %s, run by %s", l.pkg, l.via)
	}
	return fmt.Sprintf("PyPI package %s, run by %s", l.pkg, l.via)
}

// guiPath is the PATH a desktop application gets on macOS and most Linux
// desktops when started from the dock or a menu: no shell has run, so no
// folder a shell profile adds (Homebrew's /opt/homebrew/bin, nvm's, a
// version manager's) is on it.
var guiPath = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"}

// runnerServer is the entry that has a client start the server through the
// package runner that started this process (npx or uvx), by absolute paths,
// so that a client started without the shell's PATH finds it: the npx or uvx
// the launcher named, else the one on PATH. npx is a node script (#!/usr/bin/env
// node), so where node's folder is not on a desktop application's PATH it is
// put first on the entry's PATH; on Windows, where a client cannot start a
// .cmd file without a shell, the entry runs node with npm's npx-cli.js. The
// env of base (the vault, the data folder) is kept. warnings say what could
// not be made certain.
func runnerServer(l launch, h host, base mcpServer, exists func(string) bool, lookPath func(string) (string, error)) (s mcpServer, warnings []string) {
	s = base
	s.Env = map[string]string{}
	for k, v := range base.Env {
		s.Env[k] = v
	}
	serve := []string{"serve", "--transport", "stdio"}
	exe := ""
	if h.goos == "windows" {
		exe = ".exe"
	}
	dir := func(p string) string {
		if h.goos == "windows" {
			return p[:max(strings.LastIndexAny(p, `\/`), 0)]
		}
		return path.Dir(p)
	}
	find := func(name string) string {
		if l.runner != "" && exists(l.runner) {
			return l.runner
		}
		if p, err := lookPath(name); err == nil {
			return p
		}
		warnings = append(warnings, fmt.Sprintf("%s was started by %s, but no %s was found on PATH: the entry names it without a folder, which a client started from the desktop may not find", l.pkg, name, name))
		return name
	}
	switch l.via {
	case "uvx":
		s.Command = find("uvx" + exe)
		s.Args = append([]string{l.pkg}, serve...)
	case "npx":
		s.Args = append([]string{"-y", l.pkg}, serve...)
		if h.goos == "windows" && l.node != "" {
			cli := h.join(dir(l.node), "node_modules", "npm", "bin", "npx-cli.js")
			if exists(cli) {
				s.Command = l.node
				s.Args = append([]string{cli}, s.Args...)
				return s, warnings
			}
			warnings = append(warnings, fmt.Sprintf("no npx-cli.js beside %s: the entry names npx.cmd, which a client that starts programs without a shell cannot run", l.node))
		}
		name := "npx"
		if h.goos == "windows" {
			name = "npx.cmd"
		}
		s.Command = find(name)
		if h.goos != "windows" && l.node != "" && !slices.Contains(guiPath, dir(l.node)) {
			s.Env["PATH"] = strings.Join(append([]string{dir(l.node)}, guiPath...), ":")
		}
	}
	return s, warnings
}

// thisRunnerServer is runnerServer on this machine.
func thisRunnerServer(l launch, base mcpServer) (mcpServer, []string) {
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	return runnerServer(l, thisHost(), base, exists, exec.LookPath)
}

// versionLine is what --version prints: the release, and the package that
// started it when a launcher did.
func versionLine(release string, l launch) string {
	line := "vault-rag " + release
	if d := l.describe(); d != "" {
		line += " (" + d + ")"
	}
	return line + " " + runtime.GOOS + "/" + runtime.GOARCH
}
