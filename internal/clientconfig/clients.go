// Package clientconfig knows the MCP clients vault-rag configures: the shape
// of each one's configuration and where each keeps it on every OS, the
// server entry that starts vault-rag over stdio (the binary itself, or npx or
// uvx again), and the merge of that entry into a client's JSON file, which
// keeps every other member in its place and writes atomically after a backup.
// It prints nothing: `vault-rag connect` words what it does.
package clientconfig

import (
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
)

// Client is an MCP client whose configuration this package writes: the
// shape of its configuration and where it keeps it. The shapes come from
// each client's own documentation, cited on its entry in clients.
type Client struct {
	Name  string // on the command line
	Title string // as the client calls itself
	// Key is the top-level object that maps server names to servers.
	Key string
	// Typed entries say "type": "stdio"; the others leave the transport
	// to be inferred from "command".
	Typed bool
	// File is the user-level configuration file on a machine; nil for a
	// client whose configuration is not a file the user edits.
	File func(h Host) (string, error)
	// Where says more on the file on a machine: another valid location, or
	// how official this one is on that OS.
	Where func(h Host) string
}

// Host is what decides where a client keeps its configuration: the
// operating system (runtime.GOOS) and the environment. Paths are built with
// that OS's separator, so every OS's can be checked from any.
type Host struct {
	GOOS string
	// Env is the value of an environment variable, "" when unset: the
	// OS's own (HOME, APPDATA, ...), which say where its folders are.
	Env func(string) string
}

// ThisHost is the machine this process runs on.
func ThisHost() Host { return Host{GOOS: runtime.GOOS, Env: os.Getenv} }

// join joins path elements with the host's separator.
func (h Host) join(elem ...string) string {
	if h.GOOS != "windows" {
		return path.Join(elem...)
	}
	out := strings.TrimRight(elem[0], `\/`)
	for _, e := range elem[1:] {
		out += `\` + e
	}
	return out
}

// home is the user's home folder: %USERPROFILE% on Windows, $HOME elsewhere.
func (h Host) home() (string, error) {
	v := "HOME"
	if h.GOOS == "windows" {
		v = "USERPROFILE"
	}
	if d := h.Env(v); d != "" {
		return d, nil
	}
	return "", fmt.Errorf("%s is not set", v)
}

// configDir is where applications keep per-user settings (os.UserConfigDir's
// rule): %APPDATA% on Windows, ~/Library/Application Support on macOS,
// $XDG_CONFIG_HOME (default ~/.config) elsewhere.
func (h Host) configDir() (string, error) {
	switch h.GOOS {
	case "windows":
		if d := h.Env("APPDATA"); d != "" {
			return d, nil
		}
		return "", errors.New("APPDATA is not set")
	case "darwin":
		home, err := h.home()
		if err != nil {
			return "", err
		}
		return h.join(home, "Library", "Application Support"), nil
	}
	if d := h.Env("XDG_CONFIG_HOME"); d != "" && path.IsAbs(d) {
		return d, nil
	}
	home, err := h.home()
	if err != nil {
		return "", err
	}
	return h.join(home, ".config"), nil
}

// inConfigDir is a file under the host's per-user settings folder.
func inConfigDir(elem ...string) func(h Host) (string, error) {
	return func(h Host) (string, error) {
		dir, err := h.configDir()
		if err != nil {
			return "", err
		}
		return h.join(append([]string{dir}, elem...)...), nil
	}
}

// always is a note that does not depend on the machine.
func always(note string) func(Host) string { return func(Host) string { return note } }

// clients are the clients this package configures, in the order All gives
// them.
var clients = []Client{
	{
		// https://modelcontextprotocol.io/docs/develop/connect-local-servers
		// (formerly /quickstart/user): "mcpServers" with command, args and env
		// in claude_desktop_config.json, under ~/Library/Application
		// Support/Claude/ on macOS and %APPDATA%\Claude\ on Windows; Claude
		// Desktop "is currently available for macOS and Windows", so on Linux
		// this is only where community builds look (~/.config/Claude/).
		Name: "claude-desktop", Title: "Claude Desktop", Key: "mcpServers",
		File: inConfigDir("Claude", "claude_desktop_config.json"),
		Where: func(h Host) string {
			if h.GOOS == "linux" {
				return "Claude Desktop has no official Linux build; community builds read this file"
			}
			return ""
		},
	},
	{
		// https://code.claude.com/docs/en/mcp (formerly
		// docs.anthropic.com/en/docs/claude-code/mcp): `claude mcp add-json
		// <name> '<json>'`, options before the name, --scope user for every
		// project (kept in ~/.claude.json, which Claude Code owns).
		Name: "claude-code", Title: "Claude Code", Typed: true,
		Where: always("no file to edit: run the `claude mcp add-json` command it prints (user scope, kept in ~/.claude.json)"),
	},
	{
		// https://cursor.com/docs/mcp (formerly
		// docs.cursor.com/context/model-context-protocol): "mcpServers" with
		// command, args and env; ~/.cursor/mcp.json for every project (the
		// home folder on every OS, %USERPROFILE% on Windows),
		// .cursor/mcp.json in a project for that project.
		Name: "cursor", Title: "Cursor", Key: "mcpServers",
		File: func(h Host) (string, error) {
			home, err := h.home()
			if err != nil {
				return "", err
			}
			return h.join(home, ".cursor", "mcp.json"), nil
		},
		Where: always("for every project; a project's .cursor/mcp.json takes the same shape"),
	},
	{
		// https://code.visualstudio.com/docs/copilot/reference/mcp-configuration:
		// "servers", each stdio server with "type": "stdio" (required),
		// command, args and env, in .vscode/mcp.json or the user profile's
		// mcp.json, the folder of the user settings.json
		// (https://code.visualstudio.com/docs/getstarted/settings#_settings-file-locations):
		// %APPDATA%\Code\User, ~/Library/Application Support/Code/User,
		// ~/.config/Code/User. VS Code allows comments in it (JSONC).
		Name: "vscode", Title: "VS Code", Key: "servers", Typed: true,
		File:  inConfigDir("Code", "User", "mcp.json"),
		Where: always("the default profile's, opened by MCP: Open User Configuration; a workspace's .vscode/mcp.json takes the same shape"),
	},
}

// All is every client, in the order `connect --list` names them.
func All() []Client { return slices.Clone(clients) }

// Lookup finds a client by its command-line name.
func Lookup(name string) (Client, bool) {
	for _, c := range clients {
		if c.Name == name {
			return c, true
		}
	}
	return Client{}, false
}
