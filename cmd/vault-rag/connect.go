package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/internal/clientconfig"
	"github.com/vault-rag/vault-rag/models"
)

// lookupClient finds a client by its command-line name. An unknown one is
// refused naming them all, and the nearest when it looks like a typo.
func lookupClient(name string) (clientconfig.Client, error) {
	if c, ok := clientconfig.Lookup(name); ok {
		return c, nil
	}
	var names []string
	for _, c := range clientconfig.All() {
		names = append(names, c.Name)
	}
	msg := fmt.Sprintf("vault-rag connect: unknown client %q: want one of %s", name, strings.Join(names, ", "))
	if near := nearestNames(name, names); len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
	}
	return clientconfig.Client{}, exitError{code: 2, msg: msg + "\n  run \"vault-rag connect --list\" for where each keeps its configuration"}
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
	if client.File == nil && (*write || *configFile != "") {
		return exitError{code: 2, msg: fmt.Sprintf("vault-rag connect: %s keeps its servers in its own settings, which vault-rag does not edit: run the `claude mcp add-json` command \"vault-rag connect %s\" prints (without --write or --config-file)", client.Name, client.Name)}
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
	if client.File == nil {
		return printClaudeCode(client, *name, entry, *asJSON)
	}
	file := *configFile
	if file == "" {
		if file, err = client.File(clientconfig.ThisHost()); err != nil {
			return fmt.Errorf("find %s's configuration file: %w (pass --config-file)", client.Title, err)
		}
	}
	if file, err = filepath.Abs(file); err != nil {
		return fmt.Errorf("find %s's configuration file: %w", client.Title, err)
	}
	if *write {
		return writeClientConfig(client, file, *name, entry)
	}
	snippet, err := clientconfig.Snippet(client, *name, entry)
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := os.Stdout.Write(snippet)
		return err
	}
	if client.Name == "claude-desktop" {
		exe, _ := os.Executable()
		fmt.Print(bundleRoute(findBundle(exe), clientconfig.ThisHost()))
	}
	fmt.Printf("Paste this into %s%s; if the file has other servers, add the %q entry to its %q object (or run with --write to merge it):\n\n",
		file, whereNote(client, *configFile), *name, client.Key)
	os.Stdout.Write(snippet)
	fmt.Printf("\nThen restart %s.\n", client.Title)
	return nil
}

// routeNote is what connect says, before the configuration, of an entry that
// starts the server through npx or uvx ("" for the binary itself).
func routeNote(l launch, s clientconfig.Server) string {
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
func bundleRoute(bundle string, h clientconfig.Host) string {
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
	if h.GOOS == "linux" {
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
func whereNote(c clientconfig.Client, override string) string {
	note := c.Where(clientconfig.ThisHost())
	if override != "" || note == "" {
		return ""
	}
	return " (" + note + ")"
}

// stdioServer is the entry that starts this binary's server over stdio on
// the vault, every path absolute: a client starts it from a folder of its
// own, where a relative path would name something else.
func stdioServer(c clientconfig.Client, vault string) (clientconfig.Server, error) {
	if err := checkVault(vault); err != nil {
		return clientconfig.Server{}, err
	}
	abs, err := filepath.Abs(vault)
	if err != nil {
		return clientconfig.Server{}, fmt.Errorf("find the vault %s: %w", vault, err)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return clientconfig.Server{}, fmt.Errorf("find this binary's path for the client to start: %w", err)
	}
	data, err := filepath.Abs(modelSettings().DataDir)
	if err != nil {
		return clientconfig.Server{}, fmt.Errorf("find the data folder: %w", err)
	}
	return clientconfig.Binary(c, exe, abs, data), nil
}

// warnServerSetup says on stderr what would keep the configured server from
// starting: the client starts the binary from its own folder with only the
// entry's environment.
func warnServerSetup(s clientconfig.Server) {
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

// printClaudeCode prints the command that adds the server to Claude Code for
// every project, or with asJSON only its JSON argument.
func printClaudeCode(c clientconfig.Client, name string, s clientconfig.Server, asJSON bool) error {
	arg, err := s.JSON()
	if err != nil {
		return err
	}
	if asJSON {
		_, err := os.Stdout.Write(append(arg, '\n'))
		return err
	}
	fmt.Printf("Run this to add %s to %s for every project (user scope; %s keeps it in ~/.claude.json):\n\n", name, c.Title, c.Title)
	fmt.Println(claudeAddCommand(name, arg))
	if runtime.GOOS == "windows" {
		fmt.Println("\n(The quoting is a POSIX shell's: Git Bash or WSL; in PowerShell or cmd, pass the JSON as one argument by that shell's rules.)")
	}
	fmt.Printf("\nIf %s is already there, remove it first: claude mcp remove --scope user %s\nThen start a new %s session (/mcp lists its servers).\n", name, name, c.Title)
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
	h := clientconfig.ThisHost()
	type row struct {
		Client string `json:"client"`
		Title  string `json:"title"`
		File   string `json:"file,omitempty"`
		Note   string `json:"note,omitempty"`
	}
	var rows []row
	for _, c := range clientconfig.All() {
		r := row{Client: c.Name, Title: c.Title, Note: c.Where(h)}
		if c.File != nil {
			f, err := c.File(h)
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

// writeClientConfig merges the server into the client's configuration file
// (clientconfig.Write) and says what it did: the backup of the old file, and
// whether the server was added, replaced or the file created.
func writeClientConfig(c clientconfig.Client, file, name string, s clientconfig.Server) error {
	w, err := clientconfig.Write(c, file, name, s)
	if w.Backup != "" {
		fmt.Printf("connect: backed up %s to %s\n", w.File, w.Backup)
	}
	var refused *clientconfig.MergeError
	if errors.As(err, &refused) {
		return exitError{code: 1, msg: fmt.Sprintf("vault-rag connect: %s: %v; nothing was changed\n  add the entry by hand: \"vault-rag connect %s\" prints it", refused.File, refused.Err, c.Name)}
	}
	if err != nil {
		return err
	}
	switch {
	case w.Replaced:
		fmt.Printf("connect: replaced the server %q in %s\n", name, w.File)
	case !w.Created:
		fmt.Printf("connect: added the server %q to %s\n", name, w.File)
	default:
		fmt.Printf("connect: created %s with the server %q\n", w.File, name)
	}
	fmt.Printf("Restart %s to start it.\n", c.Title)
	return nil
}
