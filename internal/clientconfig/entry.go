package clientconfig

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Server is one stdio server entry. Type is set only for clients whose
// documentation shows it.
type Server struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// serve is what every entry runs vault-rag with.
var serve = []string{"serve", "--transport", "stdio"}

// Binary is the entry that has client c start the vault-rag binary exe's
// server over stdio on the vault, with the data folder. Every path should be
// absolute: a client starts the server from a folder of its own, where a
// relative path would name something else.
func Binary(c Client, exe, vault, data string) Server {
	s := Server{
		Command: exe,
		Args:    slices.Clone(serve),
		// No DB_PATH: each vault gets its own index under the data folder,
		// so two vaults connected as two servers do not share one.
		Env: map[string]string{"VAULT_PATH": vault, "VAULT_RAG_DATA": data},
	}
	if c.Typed {
		s.Type = "stdio"
	}
	return s
}

// JSON is the entry as compact JSON, paths unescaped (a path with & stays
// readable): what a client's file holds under the server's name, and the
// argument of `claude mcp add-json`.
func (s Server) JSON() ([]byte, error) { return marshalJSON(s, "") }

// Snippet is the whole configuration client c needs for the server:
// {"<key>": {"<name>": entry}}, indented, ending in a newline.
func Snippet(c Client, name string, s Server) ([]byte, error) {
	entry, err := s.JSON()
	if err != nil {
		return nil, err
	}
	servers, err := encodeObject([]member{{name, entry}}, "")
	if err != nil {
		return nil, err
	}
	return encodeObject([]member{{c.Key, servers}}, "  ")
}

// Runner is the package runner, npx or uvx, that started vault-rag from its
// cache, where a client cannot be pointed at the binary: the runner can
// clean its cache, or fetch another version into another folder, at any
// time.
type Runner struct {
	Via     string // "npx" or "uvx"
	Package string // the package and its exact version, NAME@VERSION
	Path    string // the runner's absolute path, when the launcher could tell
	Node    string // the node program that ran npx, when known
}

// guiPath is the PATH a desktop application gets on macOS and most Linux
// desktops when started from the dock or a menu: no shell has run, so no
// folder a shell profile adds (Homebrew's /opt/homebrew/bin, nvm's, a
// version manager's) is on it.
var guiPath = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"}

// ThroughRunner is the entry that has a client start the server through the
// package runner r, by absolute paths, so that a client started without the
// shell's PATH finds it: the npx or uvx r names when it exists, else the one
// lookPath finds. npx is a node script (#!/usr/bin/env node), so where node's
// folder is not on a desktop application's PATH it is put first on the
// entry's PATH; on Windows, where a client cannot start a .cmd file without a
// shell, the entry runs node with npm's npx-cli.js. The env of base (the
// vault, the data folder) is kept. warnings say what could not be made
// certain.
func ThroughRunner(r Runner, h Host, base Server, exists func(string) bool, lookPath func(string) (string, error)) (s Server, warnings []string) {
	s = base
	s.Env = map[string]string{}
	for k, v := range base.Env {
		s.Env[k] = v
	}
	exe := ""
	if h.GOOS == "windows" {
		exe = ".exe"
	}
	dir := func(p string) string {
		if h.GOOS == "windows" {
			return p[:max(strings.LastIndexAny(p, `\/`), 0)]
		}
		return path.Dir(p)
	}
	find := func(name string) string {
		if r.Path != "" && exists(r.Path) {
			return r.Path
		}
		if p, err := lookPath(name); err == nil {
			return p
		}
		warnings = append(warnings, fmt.Sprintf("%s was started by %s, but no %s was found on PATH: the entry names it without a folder, which a client started from the desktop may not find", r.Package, name, name))
		return name
	}
	switch r.Via {
	case "uvx":
		s.Command = find("uvx" + exe)
		s.Args = append([]string{r.Package}, serve...)
	case "npx":
		s.Args = append([]string{"-y", r.Package}, serve...)
		if h.GOOS == "windows" && r.Node != "" {
			cli := h.join(dir(r.Node), "node_modules", "npm", "bin", "npx-cli.js")
			if exists(cli) {
				s.Command = r.Node
				s.Args = append([]string{cli}, s.Args...)
				return s, warnings
			}
			warnings = append(warnings, fmt.Sprintf("no npx-cli.js beside %s: the entry names npx.cmd, which a client that starts programs without a shell cannot run", r.Node))
		}
		name := "npx"
		if h.GOOS == "windows" {
			name = "npx.cmd"
		}
		s.Command = find(name)
		if h.GOOS != "windows" && r.Node != "" && !slices.Contains(guiPath, dir(r.Node)) {
			s.Env["PATH"] = strings.Join(append([]string{dir(r.Node)}, guiPath...), ":")
		}
	}
	return s, warnings
}
