package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/models"
)

// mcpClient is an MCP client connect knows how to configure: the shape of
// its configuration and where it keeps it. The shapes come from each
// client's own documentation, cited on its entry in mcpClients.
type mcpClient struct {
	name  string // on the command line
	title string // as the client calls itself
	// key is the top-level object that maps server names to servers.
	key string
	// typed entries say "type": "stdio"; the others leave the transport
	// to be inferred from "command".
	typed bool
	// file is the user-level configuration file on a machine; nil for a
	// client whose configuration is not a file the user edits.
	file func(h host) (string, error)
	// where says more on the file on a machine: another valid location, or
	// how official this one is on that OS.
	where func(h host) string
}

// host is what decides where a client keeps its configuration: the
// operating system (runtime.GOOS) and the environment. Paths are built with
// that OS's separator, so every OS's can be checked from any.
type host struct {
	goos   string
	getenv func(string) string
}

// thisHost is the machine connect runs on.
func thisHost() host { return host{goos: runtime.GOOS, getenv: os.Getenv} }

// join joins path elements with the host's separator.
func (h host) join(elem ...string) string {
	if h.goos != "windows" {
		return path.Join(elem...)
	}
	out := strings.TrimRight(elem[0], `\/`)
	for _, e := range elem[1:] {
		out += `\` + e
	}
	return out
}

// home is the user's home folder: %USERPROFILE% on Windows, $HOME elsewhere.
func (h host) home() (string, error) {
	v := "HOME"
	if h.goos == "windows" {
		v = "USERPROFILE"
	}
	if d := h.getenv(v); d != "" {
		return d, nil
	}
	return "", fmt.Errorf("%s is not set", v)
}

// configDir is where applications keep per-user settings (os.UserConfigDir's
// rule): %APPDATA% on Windows, ~/Library/Application Support on macOS,
// $XDG_CONFIG_HOME (default ~/.config) elsewhere.
func (h host) configDir() (string, error) {
	switch h.goos {
	case "windows":
		if d := h.getenv("APPDATA"); d != "" {
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
	if d := h.getenv("XDG_CONFIG_HOME"); d != "" && path.IsAbs(d) {
		return d, nil
	}
	home, err := h.home()
	if err != nil {
		return "", err
	}
	return h.join(home, ".config"), nil
}

// inConfigDir is a file under the host's per-user settings folder.
func inConfigDir(elem ...string) func(h host) (string, error) {
	return func(h host) (string, error) {
		dir, err := h.configDir()
		if err != nil {
			return "", err
		}
		return h.join(append([]string{dir}, elem...)...), nil
	}
}

// always is a note that does not depend on the machine.
func always(note string) func(host) string { return func(host) string { return note } }

// mcpClients are the clients connect configures, in the order --list
// names them.
var mcpClients = []mcpClient{
	{
		// https://modelcontextprotocol.io/docs/develop/connect-local-servers
		// (formerly /quickstart/user): "mcpServers" with command, args and env
		// in claude_desktop_config.json, under ~/Library/Application
		// Support/Claude/ on macOS and %APPDATA%\Claude\ on Windows; Claude
		// Desktop "is currently available for macOS and Windows", so on Linux
		// this is only where community builds look (~/.config/Claude/).
		name: "claude-desktop", title: "Claude Desktop", key: "mcpServers",
		file: inConfigDir("Claude", "claude_desktop_config.json"),
		where: func(h host) string {
			if h.goos == "linux" {
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
		name: "claude-code", title: "Claude Code", typed: true,
		where: always("no file to edit: run the `claude mcp add-json` command it prints (user scope, kept in ~/.claude.json)"),
	},
	{
		// https://cursor.com/docs/mcp (formerly
		// docs.cursor.com/context/model-context-protocol): "mcpServers" with
		// command, args and env; ~/.cursor/mcp.json for every project (the
		// home folder on every OS, %USERPROFILE% on Windows),
		// .cursor/mcp.json in a project for that project.
		name: "cursor", title: "Cursor", key: "mcpServers",
		file: func(h host) (string, error) {
			home, err := h.home()
			if err != nil {
				return "", err
			}
			return h.join(home, ".cursor", "mcp.json"), nil
		},
		where: always("for every project; a project's .cursor/mcp.json takes the same shape"),
	},
	{
		// https://code.visualstudio.com/docs/copilot/reference/mcp-configuration:
		// "servers", each stdio server with "type": "stdio" (required),
		// command, args and env, in .vscode/mcp.json or the user profile's
		// mcp.json, the folder of the user settings.json
		// (https://code.visualstudio.com/docs/getstarted/settings#_settings-file-locations):
		// %APPDATA%\Code\User, ~/Library/Application Support/Code/User,
		// ~/.config/Code/User. VS Code allows comments in it (JSONC).
		name: "vscode", title: "VS Code", key: "servers", typed: true,
		file:  inConfigDir("Code", "User", "mcp.json"),
		where: always("the default profile's, opened by MCP: Open User Configuration; a workspace's .vscode/mcp.json takes the same shape"),
	},
}

// lookupClient finds a client by its command-line name. An unknown one is
// refused naming them all, and the nearest when it looks like a typo.
func lookupClient(name string) (mcpClient, error) {
	names := make([]string, len(mcpClients))
	for i, c := range mcpClients {
		if c.name == name {
			return c, nil
		}
		names[i] = c.name
	}
	msg := fmt.Sprintf("vault-rag connect: unknown client %q: want one of %s", name, strings.Join(names, ", "))
	if near := nearestNames(name, names); len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
	}
	return mcpClient{}, exitError{code: 2, msg: msg + "\n  run \"vault-rag connect --list\" for where each keeps its configuration"}
}

// nearestNames are the names a mistyped one most likely meant: those it is
// the start of ("claude" is both Claude clients), else the closest by edit
// distance when that is small enough to be a typo.
func nearestNames(typed string, names []string) []string {
	typed = strings.NewReplacer("_", "-", " ", "-").Replace(strings.ToLower(typed))
	if typed == "" {
		return nil
	}
	var out []string
	for _, n := range names {
		if n == typed || strings.HasPrefix(n, typed) {
			out = append(out, n)
		}
	}
	if len(out) > 0 {
		return out
	}
	best := 4 // more edits than this is another word, not a typo
	for _, n := range names {
		switch d := editDistance(typed, n); {
		case d < best:
			best, out = d, []string{n}
		case d == best:
			out = append(out, n)
		}
	}
	return out
}

// serverName is what --name accepts: a key every client takes as is and a
// shell word that needs no quoting.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// mcpServer is one stdio server entry. Type is set only for clients whose
// documentation shows it.
type mcpServer struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// cmdConnect prints, or with --write merges into the client's file, the
// configuration that has an MCP client start `vault-rag serve` over stdio
// on one vault.
func cmdConnect(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("connect", flag.ContinueOnError)
	vault := fs.String("vault", vaultPath(), "the vault folder the server reads [VAULT_PATH]")
	name := fs.String("name", "vault-rag", "the server's name in the client (letters, digits, - and _): a second vault needs another, e.g. vault-rag-work")
	write := fs.Bool("write", false, "merge the server into the client's configuration file (a backup of the old file is kept beside it) instead of printing it")
	configFile := fs.String("config-file", "", "the client's configuration `file` (default: the client's own, see --list)")
	asJSON := fs.Bool("json", false, "print only the JSON (for claude-code: the add-json argument)")
	list := fs.Bool("list", false, "name the clients and where each keeps its configuration on this machine")
	setUsage(fs, "[flags] CLIENT",
		"Prints the configuration that has CLIENT (claude-desktop, claude-code, cursor or\n"+
			"vscode) start this binary's MCP server over stdio on the vault, or with --write\n"+
			"merges it into the client's configuration file (--list: where each keeps it).")
	ops, err := parseConnectFlags(fs, args)
	if err != nil {
		return err
	}
	if *list {
		if len(ops) > 0 {
			return exitError{code: 2, msg: fmt.Sprintf("vault-rag connect: --list takes no client (got %q)", ops[0])}
		}
		return listClients(*asJSON)
	}
	if len(ops) != 1 {
		msg := "vault-rag connect: name one client"
		if len(ops) > 1 {
			msg = fmt.Sprintf("vault-rag connect: one client at a time (got %s)", strings.Join(ops, " "))
			if st, err := os.Stat(ops[1]); err == nil && st.IsDir() {
				msg += fmt.Sprintf("; to connect the folder %s as the vault, pass --vault %s", ops[1], ops[1])
			}
		}
		return exitError{code: 2, msg: msg + "\n  usage: vault-rag connect [flags] CLIENT; \"vault-rag connect --list\" names the clients"}
	}
	client, err := lookupClient(ops[0])
	if err != nil {
		return err
	}
	if !serverName.MatchString(*name) {
		return exitError{code: 2, msg: fmt.Sprintf("vault-rag connect: --name %q: use 1 to 64 letters, digits, - and _ (e.g. vault-rag-work)", *name)}
	}
	if client.file == nil && (*write || *configFile != "") {
		return exitError{code: 2, msg: fmt.Sprintf("vault-rag connect: %s keeps its servers in its own settings, which vault-rag does not edit: run the `claude mcp add-json` command \"vault-rag connect %s\" prints (without --write or --config-file)", client.name, client.name)}
	}
	if *write && *asJSON {
		return exitError{code: 2, msg: "vault-rag connect: --write and --json: --write writes the file, --json prints the JSON; pick one"}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	vaultVisited := false
	fs.Visit(func(f *flag.Flag) { vaultVisited = vaultVisited || f.Name == "vault" })
	entry, err := stdioServer(client, *vault)
	if err != nil {
		return err
	}
	if _, set := os.LookupEnv("VAULT_PATH"); !set && !vaultVisited {
		fmt.Fprintf(os.Stderr, "connect: no --vault and no VAULT_PATH: connecting %s\n", entry.Env["VAULT_PATH"])
	}
	// Started by npx or uvx, this binary sits in their cache, which they may
	// clean at any time: the client starts the server as it was started.
	route := launchFrom(os.Getenv)
	if route.ephemeral() {
		var warnings []string
		entry, warnings = thisRunnerServer(route, entry)
		for _, w := range warnings {
			fmt.Fprintf(os.Stderr, "connect: warning: %s\n", w)
		}
	} else {
		warnServerSetup(entry)
	}

	if !*asJSON && !*write {
		fmt.Print(routeNote(route, entry))
	}
	if client.file == nil {
		return printClaudeCode(client, *name, entry, *asJSON)
	}
	file := *configFile
	if file == "" {
		if file, err = client.file(thisHost()); err != nil {
			return fmt.Errorf("find %s's configuration file: %w (pass --config-file)", client.title, err)
		}
	}
	if file, err = filepath.Abs(file); err != nil {
		return fmt.Errorf("find %s's configuration file: %w", client.title, err)
	}
	if *write {
		return writeClientConfig(client, file, *name, entry)
	}
	snippet, err := clientSnippet(client, *name, entry)
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := os.Stdout.Write(snippet)
		return err
	}
	if client.name == "claude-desktop" {
		exe, _ := os.Executable()
		fmt.Print(bundleRoute(findBundle(exe), thisHost()))
	}
	fmt.Printf("Paste this into %s%s; if the file has other servers, add the %q entry to its %q object (or run with --write to merge it):\n\n",
		file, whereNote(client, *configFile), *name, client.key)
	os.Stdout.Write(snippet)
	fmt.Printf("\nThen restart %s.\n", client.title)
	return nil
}

// routeNote is what connect says, before the configuration, of an entry that
// starts the server through npx or uvx ("" for the binary itself).
func routeNote(l launch, s mcpServer) string {
	if !l.ephemeral() {
		return ""
	}
	how := "naming " + l.via + " by its absolute path"
	if s.Env["PATH"] != "" {
		how += ", with Node.js's folder on its PATH"
	}
	tool := map[string]string{"npx": "Node.js", "uvx": "uv"}[l.via]
	return fmt.Sprintf("This entry starts vault-rag through %s at the version that ran (%s), %s:\n"+
		"an application started from the desktop does not see your shell's PATH. After moving or upgrading\n"+
		"%s, or to change to a newer vault-rag, run connect again.\n\n", l.via, l.pkg, how, tool)
}

// findBundle is the newest Claude Desktop bundle (vault-rag-*.mcpb) found
// near the binary exe, or "": in a checkout's dist/ (bin/vault-rag, make
// mcpb), or beside the extracted release archive (the folder holding
// vault-rag/bin/vault-rag, where the archive and the bundle were downloaded
// together), or in the archive's own folder.
func findBundle(exe string) string {
	if exe == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	top := filepath.Dir(filepath.Dir(exe))
	best, bestTime := "", time.Time{}
	for _, dir := range []string{filepath.Join(top, "dist"), filepath.Dir(top), top} {
		matches, _ := filepath.Glob(filepath.Join(dir, "vault-rag-*.mcpb"))
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && (best == "" || st.ModTime().After(bestTime)) {
				best, bestTime = m, st.ModTime()
			}
		}
	}
	return best
}

// bundleRoute is what connect claude-desktop says of the one-click route
// before the configuration to paste: the bundle found, else where to get
// one.
func bundleRoute(bundle string, h host) string {
	var b strings.Builder
	if bundle != "" {
		fmt.Fprintf(&b, "The one-click route: open %s with Claude Desktop (double-click it, or drag it into Settings > Extensions)\n"+
			"and choose the vault folder when it asks. Claude Desktop then starts the server itself, and nothing below\n"+
			"is needed.\n", bundle)
	} else {
		b.WriteString("The one-click route: Claude Desktop installs vault-rag from its bundle, vault-rag-VERSION.mcpb, published\n" +
			"beside the release archives (in a checkout, `make mcpb` writes it to dist/): open it with Claude Desktop and\n" +
			"choose the vault folder when it asks.\n")
	}
	if h.goos == "linux" {
		b.WriteString("(Claude Desktop has no official Linux build: the bundle is for its macOS and Windows builds.)\n")
	}
	b.WriteString("\nOr by hand:\n")
	return b.String()
}

// parseConnectFlags parses flags before and after the client, so that
// "vault-rag connect cursor --write" means what it says rather than leaving
// --write as a second operand. "--" ends the flags.
func parseConnectFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var ops []string
	for {
		if err := parseFlags(fs, args, operands{any: true}); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return ops, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(ops, rest...), nil
		}
		ops = append(ops, rest[0])
		args = rest[1:]
	}
}

// whereNote is what the paste line says of the file beyond its path.
func whereNote(c mcpClient, override string) string {
	note := c.where(thisHost())
	if override != "" || note == "" {
		return ""
	}
	return " (" + note + ")"
}

// stdioServer is the entry that starts this binary's server over stdio on
// the vault, every path absolute: a client starts it from a folder of its
// own, where a relative path would name something else.
func stdioServer(c mcpClient, vault string) (mcpServer, error) {
	if err := checkVault(vault); err != nil {
		return mcpServer{}, err
	}
	abs, err := filepath.Abs(vault)
	if err != nil {
		return mcpServer{}, fmt.Errorf("find the vault %s: %w", vault, err)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return mcpServer{}, fmt.Errorf("find this binary's path for the client to start: %w", err)
	}
	data, err := filepath.Abs(modelSettings().DataDir)
	if err != nil {
		return mcpServer{}, fmt.Errorf("find the data folder: %w", err)
	}
	s := mcpServer{
		Command: exe,
		Args:    []string{"serve", "--transport", "stdio"},
		// No DB_PATH: each vault gets its own index under the data folder,
		// so two vaults connected as two servers do not share one.
		Env: map[string]string{"VAULT_PATH": abs, "VAULT_RAG_DATA": data},
	}
	if c.typed {
		s.Type = "stdio"
	}
	return s, nil
}

// warnServerSetup says on stderr what would keep the configured server from
// starting: the client starts the binary from its own folder with only the
// entry's environment.
func warnServerSetup(s mcpServer) {
	if strings.Contains(s.Command, "go-build") {
		fmt.Fprintf(os.Stderr, "connect: warning: %s is a temporary build (go run or go test) that will be gone when the client starts it; run connect from a built binary (make build: bin/vault-rag)\n", s.Command)
	}
	// The data folder may not exist yet: the server makes it and fetches
	// its embedder on first use. ONNX Runtime it cannot fetch.
	if lib := modelSettings().Runtime.Lib; lib != "" {
		if _, err := os.Stat(lib); err != nil {
			fmt.Fprintf(os.Stderr, "connect: warning: ONNX Runtime is not at %s: in a checkout, run `make setup`; from a release archive, keep its lib/ folder beside bin/\n", lib)
		}
	}
	if models.BesideExecutable("configs") == "" {
		fmt.Fprintf(os.Stderr, "connect: warning: the server finds configs/ beside its binary (bin/..), and there is none beside %s: add VAULT_RAG_ROOT (the checkout) to the entry's env\n", s.Command)
	}
}

// clientSnippet is the whole configuration a client needs for the server:
// {"<key>": {"<name>": entry}}, indented, ending in a newline.
func clientSnippet(c mcpClient, name string, s mcpServer) ([]byte, error) {
	entry, err := marshalJSON(s, "")
	if err != nil {
		return nil, err
	}
	servers, err := encodeObject([]member{{name, entry}}, "")
	if err != nil {
		return nil, err
	}
	return encodeObject([]member{{c.key, servers}}, "  ")
}

// printClaudeCode prints the command that adds the server to Claude Code for
// every project, or with asJSON only its JSON argument.
func printClaudeCode(c mcpClient, name string, s mcpServer, asJSON bool) error {
	arg, err := marshalJSON(s, "")
	if err != nil {
		return err
	}
	if asJSON {
		_, err := os.Stdout.Write(append(arg, '\n'))
		return err
	}
	fmt.Printf("Run this to add %s to %s for every project (user scope; %s keeps it in ~/.claude.json):\n\n", name, c.title, c.title)
	fmt.Println(claudeAddCommand(name, arg))
	if runtime.GOOS == "windows" {
		fmt.Println("\n(The quoting is a POSIX shell's: Git Bash or WSL; in PowerShell or cmd, pass the JSON as one argument by that shell's rules.)")
	}
	fmt.Printf("\nIf %s is already there, remove it first: claude mcp remove --scope user %s\nThen start a new %s session (/mcp lists its servers).\n", name, name, c.title)
	return nil
}

// claudeAddCommand is the `claude mcp add-json` command line that adds the
// server JSON arg as name, for a POSIX shell. Options go before the name,
// as Claude Code's documentation asks.
func claudeAddCommand(name string, arg []byte) string {
	return "claude mcp add-json --scope user " + shellQuote(name) + " " + shellQuote(string(arg))
}

// shellQuote is s as one POSIX shell word: bare when it has nothing a shell
// would interpret, else single-quoted, each ' in it closing the quotes,
// adding \' and opening them again.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// listClients prints each client and where it keeps its configuration here.
func listClients(asJSON bool) error {
	h := thisHost()
	type row struct {
		Client string `json:"client"`
		Title  string `json:"title"`
		File   string `json:"file,omitempty"`
		Note   string `json:"note,omitempty"`
	}
	var rows []row
	for _, c := range mcpClients {
		r := row{Client: c.name, Title: c.title, Note: c.where(h)}
		if c.file != nil {
			f, err := c.file(h)
			if err != nil {
				f = "unknown here (" + err.Error() + "); pass --config-file"
			}
			r.File = f
		}
		rows = append(rows, r)
	}
	if asJSON {
		return printJSON(rows)
	}
	for _, r := range rows {
		line := fmt.Sprintf("%-15s %-15s", r.Client, r.Title)
		switch {
		case r.File != "" && r.Note != "":
			line += fmt.Sprintf(" %s (%s)", r.File, r.Note)
		case r.File != "":
			line += " " + r.File
		default:
			line += " " + r.Note
		}
		fmt.Println(line)
	}
	return nil
}

// writeClientConfig merges the server into the client's configuration file:
// every other key and server is kept, an entry of the same name replaced.
// The old file is copied to a backup first and the new one renamed into
// place, so the client never reads half a file; a file that is not plain
// JSON is refused before anything is written.
func writeClientConfig(c mcpClient, file, name string, s mcpServer) error {
	// Write through a symlink (dotfiles kept in a repository) rather than
	// replacing it with a file.
	if real, err := filepath.EvalSymlinks(file); err == nil {
		file = real
	}
	old, err := os.ReadFile(file)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s's configuration %s: %w", c.title, file, err)
	}
	entry, err := marshalJSON(s, "")
	if err != nil {
		return err
	}
	merged, replaced, err := mergeServer(old, c.key, name, entry)
	if err != nil {
		return exitError{code: 1, msg: fmt.Sprintf("vault-rag connect: %s: %v; nothing was changed\n  add the entry by hand: \"vault-rag connect %s\" prints it", file, err, c.name)}
	}
	mode := fs.FileMode(0o600) // other servers' entries may hold API keys
	backup := ""
	if exists {
		st, err := os.Stat(file)
		if err != nil {
			return fmt.Errorf("read %s's configuration %s: %w", c.title, file, err)
		}
		mode = st.Mode().Perm()
		if backup, err = writeBackup(file, old, mode, time.Now()); err != nil {
			return fmt.Errorf("back up %s before changing it: %w; nothing was changed", file, err)
		}
		fmt.Printf("connect: backed up %s to %s\n", file, backup)
	} else if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("create the folder of %s: %w", file, err)
	}
	if err := writeFileAtomic(file, merged, mode); err != nil {
		if backup != "" {
			return fmt.Errorf("write %s: %w (unchanged; its backup is %s)", file, err, backup)
		}
		return fmt.Errorf("write %s: %w", file, err)
	}
	switch {
	case replaced:
		fmt.Printf("connect: replaced the server %q in %s\n", name, file)
	case exists:
		fmt.Printf("connect: added the server %q to %s\n", name, file)
	default:
		fmt.Printf("connect: created %s with the server %q\n", file, name)
	}
	fmt.Printf("Restart %s to start it.\n", c.title)
	return nil
}

// writeBackup writes data, a file's old content, beside it as
// FILE.bak-YYYYMMDD-HHMMSS (then -2, -3, ... within the same second) and
// returns its path. It never overwrites an earlier backup.
func writeBackup(file string, data []byte, mode fs.FileMode, now time.Time) (string, error) {
	base := file + ".bak-" + now.Format("20060102-150405")
	for i := 1; ; i++ {
		p := base
		if i > 1 {
			p = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(p)
			return "", err
		}
		if err := f.Close(); err != nil {
			os.Remove(p)
			return "", err
		}
		return p, nil
	}
}

// writeFileAtomic replaces file with data through a temporary file in the
// same folder renamed over it, with the given mode.
func writeFileAtomic(file string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	done = true
	return nil
}

// utf8BOM is the byte-order mark some Windows editors start a file with; it
// is not JSON, so it is set aside while parsing and put back.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// mergeServer returns doc, a client's configuration file, with the server
// entry (raw JSON) under key's object as name. Every other member keeps its
// value and its place; an entry already named name is replaced (replaced
// reports it). An empty doc is an empty object. A doc that is not a JSON
// object, or whose key is not an object, is an error saying where.
func mergeServer(doc []byte, key, name string, entry json.RawMessage) (out []byte, replaced bool, err error) {
	bom := bytes.HasPrefix(doc, utf8BOM)
	doc = bytes.TrimPrefix(doc, utf8BOM)
	indent := detectIndent(doc)
	top := []member{}
	if len(bytes.TrimSpace(doc)) > 0 {
		if top, err = decodeObject(doc); err != nil {
			return nil, false, err
		}
	}
	servers := []member{}
	at := -1
	for i, m := range top {
		if m.key == key {
			at = i
			if servers, err = decodeObject(m.value); err != nil {
				return nil, false, fmt.Errorf("%q is not an object of servers: %w", key, err)
			}
			break
		}
	}
	kept := servers[:0]
	for _, m := range servers {
		switch {
		case m.key != name:
			kept = append(kept, m)
		case !replaced:
			kept = append(kept, member{name, entry})
			replaced = true
		}
		// A later duplicate of name is dropped: clients take the last one,
		// which would hide the new entry.
	}
	if !replaced {
		kept = append(kept, member{name, entry})
	}
	raw, err := encodeObject(kept, "")
	if err != nil {
		return nil, false, err
	}
	if at >= 0 {
		top[at].value = raw
	} else {
		top = append(top, member{key, raw})
	}
	if out, err = encodeObject(top, indent); err != nil {
		return nil, false, err
	}
	if bom {
		out = append(append([]byte{}, utf8BOM...), out...)
	}
	return out, replaced, nil
}

// member is one key and its raw value in a JSON object, kept in file order.
type member struct {
	key   string
	value json.RawMessage
}

// decodeObject reads a JSON object's members in order. A parse error says
// the line and column; JSON with comments (JSONC, which VS Code allows) is
// named as such, since rewriting it would drop them.
func decodeObject(data []byte) ([]member, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		if hasComments(data) {
			return nil, errors.New("it has comments (// or /* */), which --write would lose")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset)
			return nil, fmt.Errorf("not valid JSON: %v (line %d, column %d)", err, line, col)
		}
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("want a JSON object ({...}), found %s", jsonKind(v))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		ms = append(ms, member{tok.(string), raw})
	}
	return ms, nil
}

// encodeObject writes members as an indented JSON object ending in a
// newline; an empty indent writes it compact, without the newline.
func encodeObject(ms []member, indent string) ([]byte, error) {
	if indent == "" {
		var b bytes.Buffer
		b.WriteByte('{')
		for i, m := range ms {
			if i > 0 {
				b.WriteByte(',')
			}
			k, err := marshalJSON(m.key, "")
			if err != nil {
				return nil, err
			}
			b.Write(k)
			b.WriteByte(':')
			if err := json.Compact(&b, m.value); err != nil {
				return nil, err
			}
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	compact, err := encodeObject(ms, "")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", indent); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// marshalJSON is v as JSON without the HTML escaping encoding/json does by
// default (a path with & stays readable), indented by indent unless empty,
// with no trailing newline.
func marshalJSON(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// detectIndent is the indent unit of a JSON file: the leading white space of
// its first indented line, else two spaces.
func detectIndent(doc []byte) string {
	for _, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if lead := line[:len(line)-len(trimmed)]; lead != "" && trimmed != "" {
			return lead
		}
	}
	return "  "
}

// hasComments reports whether data has // or /* outside its strings.
func hasComments(data []byte) bool {
	inString, escaped := false, false
	for i, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && c == '/' && i+1 < len(data) && (data[i+1] == '/' || data[i+1] == '*'):
			return true
		}
	}
	return false
}

// lineCol is the 1-based line and column of byte offset off in data.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// jsonKind names the kind of a decoded JSON value, for an error.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "an object"
}
