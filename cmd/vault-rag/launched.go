package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"

	"github.com/vault-rag/vault-rag/internal/clientconfig"
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

// thisRunnerServer is the entry that has a client start the server through
// the npx or uvx that started this process (clientconfig.ThroughRunner), on
// this machine.
func thisRunnerServer(l launch, base clientconfig.Server) (clientconfig.Server, []string) {
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	r := clientconfig.Runner{Via: l.via, Package: l.pkg, Path: l.runner, Node: l.node}
	return clientconfig.ThroughRunner(r, clientconfig.ThisHost(), base, exists, exec.LookPath)
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
