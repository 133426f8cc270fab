package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/clientconfig"
)

// connectEnv gives a test a home, a vault and a data folder of its own, so
// that no client configuration of the real home is read or written. The
// vault's name has a quote and a space, which the claude-code command line
// must carry through a shell.
func connectEnv(t *testing.T) (home, vault, data string) {
	t.Helper()
	dir := t.TempDir()
	home = filepath.Join(dir, "home")
	vault = filepath.Join(dir, "Bob's notes")
	data = filepath.Join(dir, "data")
	for _, d := range []string{home, vault, data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("APPDATA", filepath.Join(home, "AppData", "Roaming"))
	t.Setenv("VAULT_PATH", vault)
	t.Setenv("VAULT_RAG_DATA", data)
	// As started from a release archive or a checkout, not by a package
	// launcher (launched.go).
	for _, k := range []string{envInstall, envPackage, envRunner, envNode} {
		t.Setenv(k, "")
	}
	return home, vault, data
}

// runConnect runs cmdConnect in this process and returns what it printed.
func runConnect(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	dir := t.TempDir()
	outFile, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errFile, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outFile, errFile
	err = cmdConnect(context.Background(), args)
	os.Stdout, os.Stderr = oldOut, oldErr
	outFile.Close()
	errFile.Close()
	o, _ := os.ReadFile(outFile.Name())
	e, _ := os.ReadFile(errFile.Name())
	return string(o), string(e), err
}

// exitCode is the code main would end the process with after err.
func exitCode(err error) int {
	var ex exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ex):
		return ex.code
	}
	return 1
}

// serverOf is the entry named name under key in a client configuration.
func serverOf(t *testing.T, doc []byte, key, name string) map[string]any {
	t.Helper()
	var top map[string]json.RawMessage
	var servers map[string]map[string]any
	if err := json.Unmarshal(doc, &top); err != nil {
		t.Fatalf("the configuration does not parse: %v\n%s", err, doc)
	}
	if err := json.Unmarshal(top[key], &servers); err != nil {
		t.Fatalf("%q is not an object of servers: %v\n%s", key, err, doc)
	}
	s, ok := servers[name]
	if !ok {
		t.Fatalf("no %q under %q in\n%s", name, key, doc)
	}
	return s
}

// checkServer checks an entry starts this binary's stdio server on the
// vault with the data folder, all by absolute paths, and nothing else.
func checkServer(t *testing.T, s map[string]any, wantType, vault, data string) {
	t.Helper()
	cmd, _ := s["command"].(string)
	if !filepath.IsAbs(cmd) {
		t.Errorf("command %q is not absolute", cmd)
	} else if _, err := os.Stat(cmd); err != nil {
		t.Errorf("command %q: %v", cmd, err)
	}
	if got, want := s["args"], []any{"serve", "--transport", "stdio"}; !reflect.DeepEqual(got, want) {
		t.Errorf("args %v, want %v", got, want)
	}
	env, _ := s["env"].(map[string]any)
	if want := map[string]any{"VAULT_PATH": vault, "VAULT_RAG_DATA": data}; !reflect.DeepEqual(env, want) {
		t.Errorf("env %v, want %v (absolute, and no DB_PATH)", env, want)
	}
	typ, hasType := s["type"]
	switch {
	case wantType == "" && hasType:
		t.Errorf("type %v: the client's documentation shows none", typ)
	case wantType != "" && typ != wantType:
		t.Errorf("type %v, want %q", typ, wantType)
	}
}

// The printed configuration of every client has the shape its documentation
// gives, with --json (just the JSON) and without (a line naming the file,
// the JSON, a word on restarting), flags before or after the client.
func TestConnectShapes(t *testing.T) {
	home, vault, data := connectEnv(t)
	for _, tc := range []struct {
		client, key, wantType, title string
	}{
		{"claude-desktop", "mcpServers", "", "Claude Desktop"},
		{"cursor", "mcpServers", "", "Cursor"},
		{"vscode", "servers", "stdio", "VS Code"},
	} {
		t.Run(tc.client, func(t *testing.T) {
			out, _, err := runConnect(t, "--json", tc.client)
			if err != nil {
				t.Fatal(err)
			}
			checkServer(t, serverOf(t, []byte(out), tc.key, "vault-rag"), tc.wantType, vault, data)

			out, _, err = runConnect(t, tc.client, "--name", "vault-rag-work")
			if err != nil {
				t.Fatal(err)
			}
			// Claude Desktop's starts with the one-click route (TestBundleRoute).
			paste := out
			if i := strings.Index(out, "Or by hand:\n"); tc.client == "claude-desktop" && i >= 0 {
				paste = out[i+len("Or by hand:\n"):]
			}
			lines := strings.Split(paste, "\n")
			if !strings.HasPrefix(lines[0], "Paste this into "+home) {
				t.Errorf("the first line should name the client's file under the home %s: %q", home, lines[0])
			}
			start := strings.Index(out, "\n{\n")
			end := strings.Index(out, "\n}\n")
			if start < 0 || end < start {
				t.Fatalf("no JSON object in\n%s", out)
			}
			checkServer(t, serverOf(t, []byte(out[start:end+3]), tc.key, "vault-rag-work"), tc.wantType, vault, data)
			if !strings.Contains(out[end:], "restart "+tc.title) {
				t.Errorf("the output should end saying to restart %s:\n%s", tc.title, out)
			}
		})
	}
	t.Run("claude-code", func(t *testing.T) {
		out, _, err := runConnect(t, "claude-code", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var s map[string]any
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("--json for claude-code should print the add-json argument: %v\n%s", err, out)
		}
		checkServer(t, s, "stdio", vault, data)
	})
}

// The claude-code command line survives a shell: its words are the
// add-json command, the user scope, the name and the JSON --json prints,
// though the vault's path has a quote and a space.
func TestConnectClaudeCodeQuoting(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the printed command is for a POSIX shell")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	_, vault, data := connectEnv(t)
	for _, name := range []string{"vault-rag", "vault-rag-work"} {
		want, _, err := runConnect(t, "--json", "--name", name, "claude-code")
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := runConnect(t, "--name", name, "claude-code")
		if err != nil {
			t.Fatal(err)
		}
		var line string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "claude mcp add-json ") {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("no claude mcp add-json line in\n%s", out)
		}
		// A shell function named claude prints the words it is given.
		script := `claude() { for a; do printf '%s\0' "$a"; done; }; ` + line
		words, err := exec.Command(sh, "-c", script).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", script, err)
		}
		got := strings.Split(strings.TrimSuffix(string(words), "\x00"), "\x00")
		if len(got) != 6 || !reflect.DeepEqual(got[:5], []string{"mcp", "add-json", "--scope", "user", name}) {
			t.Fatalf("the shell read %q from %s", got, line)
		}
		var fromShell, fromJSON map[string]any
		if err := json.Unmarshal([]byte(got[5]), &fromShell); err != nil {
			t.Fatalf("the JSON argument does not parse after the shell: %v\n%s", err, got[5])
		}
		if err := json.Unmarshal([]byte(want), &fromJSON); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromShell, fromJSON) {
			t.Errorf("after the shell the argument is %v, --json printed %v", fromShell, fromJSON)
		}
		checkServer(t, fromShell, "stdio", vault, data)
	}
}

// --write merges the server into the client's file: it creates a missing
// file and its folder; it keeps every other key and server, in order, and
// the file's mode, replacing only an entry of the same name, after a backup
// of the old content; a file it cannot read as a JSON object is refused
// byte for byte unchanged, with nothing left beside it.
func TestConnectWrite(t *testing.T) {
	_, vault, data := connectEnv(t)
	for _, c := range []struct{ client, key, wantType string }{
		{"claude-desktop", "mcpServers", ""},
		{"cursor", "mcpServers", ""},
		{"vscode", "servers", "stdio"},
	} {
		t.Run(c.client, func(t *testing.T) {
			other := `{"command": "npx", "args": ["-y", "other-server"], "env": {"API_KEY": "k&<>"}}`
			old := `{"command": "/old/vault-rag", "args": ["serve"]}`
			for _, tc := range []struct {
				name     string
				existing string // "": no file
				refused  string // the refusal's words; "": written
				replaced bool
			}{
				{name: "missing"},
				{name: "empty", existing: "\n"},
				{name: "other server", existing: "{\n    \"theme\": \"dark\",\n    \"" + c.key + "\": {\"other\": " + other + "},\n    \"zz\": [1, 2]\n}\n"},
				{name: "same name", existing: "{\n  \"" + c.key + "\": {\"other\": " + other + ", \"vault-rag\": " + old + "}\n}\n", replaced: true},
				{name: "unparseable", existing: "{\"" + c.key + "\": {\"other\": " + other + ",\n", refused: "not valid JSON"},
				{name: "trailing comma", existing: "{\"" + c.key + "\": {\"other\": " + other + ",}}\n", refused: "line 1"},
				{name: "comments", existing: "// my servers\n{\"" + c.key + "\": {}}\n", refused: "comments"},
				{name: "array", existing: "[]\n", refused: "want a JSON object"},
				{name: "servers not an object", existing: "{\"" + c.key + "\": []}\n", refused: "not an object of servers"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					dir := filepath.Join(t.TempDir(), "config dir")
					file := filepath.Join(dir, "sub", "mcp.json")
					if tc.existing != "" {
						if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(file, []byte(tc.existing), 0o640); err != nil {
							t.Fatal(err)
						}
					}
					out, _, err := runConnect(t, c.client, "--write", "--config-file", file)
					entries, _ := os.ReadDir(filepath.Dir(file))
					if tc.refused != "" {
						if err == nil || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "nothing was changed") {
							t.Fatalf("want a refusal naming %s and %q, got %v\n%s", file, tc.refused, err, out)
						}
						if got, _ := os.ReadFile(file); string(got) != tc.existing {
							t.Errorf("a refused file changed:\n%s", got)
						}
						if len(entries) != 1 {
							t.Errorf("a refusal left files beside %s: %v", file, entries)
						}
						return
					}
					if err != nil {
						t.Fatalf("%v\n%s", err, out)
					}
					doc, err := os.ReadFile(file)
					if err != nil {
						t.Fatal(err)
					}
					checkServer(t, serverOf(t, doc, c.key, "vault-rag"), c.wantType, vault, data)
					st, _ := os.Stat(file)
					wantMode, wantFiles := os.FileMode(0o640), 2
					if tc.existing == "" {
						wantMode, wantFiles = 0o600, 1
					}
					if runtime.GOOS != "windows" && st.Mode().Perm() != wantMode {
						t.Errorf("mode %v, want %v", st.Mode().Perm(), wantMode)
					}
					if len(entries) != wantFiles {
						t.Errorf("want %d files beside the configuration, got %v", wantFiles, entries)
					}
					if tc.existing != "" {
						backups, _ := filepath.Glob(file + ".bak-*")
						if len(backups) != 1 {
							t.Fatalf("want one backup, got %v", backups)
						}
						if b, _ := os.ReadFile(backups[0]); string(b) != tc.existing {
							t.Errorf("the backup holds\n%s\nwant the old content\n%s", b, tc.existing)
						}
						if !strings.Contains(out, backups[0]) {
							t.Errorf("the output does not name the backup %s:\n%s", backups[0], out)
						}
					}
					if said := strings.Contains(out, "replaced"); said != tc.replaced {
						t.Errorf("replaced: said %v, want %v:\n%s", said, tc.replaced, out)
					}
					if strings.Contains(tc.existing, "other") {
						var want any
						if err := json.Unmarshal([]byte(other), &want); err != nil {
							t.Fatal(err)
						}
						if g := any(serverOf(t, doc, c.key, "other")); !reflect.DeepEqual(g, want) {
							t.Errorf("the other server became %v, want %v", g, want)
						}
						if strings.Contains(tc.existing, "theme") {
							if !inOrder(string(doc), `"theme"`, `"`+c.key+`"`, `"other"`, `"vault-rag"`, `"zz"`) {
								t.Errorf("keys moved:\n%s", doc)
							}
							if !strings.Contains(string(doc), "\n    \"theme\"") {
								t.Errorf("the file's four-space indent was not kept:\n%s", doc)
							}
						}
					}
				})
			}
		})
	}
}

// inOrder reports whether the strings occur in s in that order.
func inOrder(s string, in ...string) bool {
	at := 0
	for _, w := range in {
		i := strings.Index(s[at:], w)
		if i < 0 {
			return false
		}
		at += i + len(w)
	}
	return true
}

// Without --config-file, --write goes to the client's own file under the
// home, creating its folder.
func TestConnectWriteDefaultFile(t *testing.T) {
	home, vault, data := connectEnv(t)
	if _, _, err := runConnect(t, "cursor", "--write"); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(home, ".cursor", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkServer(t, serverOf(t, doc, "mcpServers", "vault-rag"), "", vault, data)
}

// What connect refuses, it refuses before writing anything, with exit 2 and
// a message that says what to do.
func TestConnectRefusals(t *testing.T) {
	home, _, _ := connectEnv(t)
	notDir := filepath.Join(t.TempDir(), "note.md")
	if err := os.WriteFile(notDir, []byte("# a note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"zed"}, []string{`unknown client "zed"`, "claude-desktop, claude-code, cursor, vscode"}},
		{[]string{"claude-dekstop"}, []string{"did you mean claude-desktop?"}},
		{[]string{"vs-code"}, []string{"did you mean vscode?"}},
		{[]string{"claude"}, []string{"did you mean claude-desktop or claude-code?"}},
		{[]string{"--name", "vault rag", "cursor"}, []string{`--name "vault rag"`, "letters, digits, - and _"}},
		{[]string{"cursor", "--name", "a/b"}, []string{`--name "a/b"`}},
		{[]string{"--name", "", "cursor"}, []string{`--name ""`}},
		{[]string{"--write", "claude-code"}, []string{"claude mcp add-json", "does not edit"}},
		{[]string{"claude-code", "--config-file", filepath.Join(home, "x.json")}, []string{"claude mcp add-json"}},
		{[]string{"--write", "--json", "cursor"}, []string{"pick one"}},
		{[]string{}, []string{"name one client"}},
		{[]string{"cursor", "vscode"}, []string{"one client at a time"}},
		{[]string{"cursor", home}, []string{"pass --vault " + home}},
		{[]string{"--list", "cursor"}, []string{"--list takes no client"}},
		{[]string{"cursor", "--force"}, []string{"unknown flag --force"}},
	} {
		out, _, err := runConnect(t, tc.args...)
		if exitCode(err) != 2 || out != "" {
			t.Errorf("connect %q: want exit 2 and nothing on stdout, got exit %d, %v\n%s", tc.args, exitCode(err), err, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("connect %q: %q does not say %q", tc.args, err, w)
			}
		}
	}
	// A vault that is not a folder is refused as reindex, serve and search
	// refuse it, naming the two ways to name another.
	for _, tc := range []struct{ vault, want string }{
		{filepath.Join(home, "missing"), "the vault folder " + filepath.Join(home, "missing") + " does not exist; set VAULT_PATH or pass --vault"},
		{notDir, "the vault " + notDir + " is a file, not a folder; set VAULT_PATH or pass --vault"},
	} {
		out, _, err := runConnect(t, "--vault", tc.vault, "cursor")
		if exitCode(err) != 1 || err.Error() != tc.want || out != "" {
			t.Errorf("connect --vault %s: want exit 1 and %q, got exit %d, %v\n%s", tc.vault, tc.want, exitCode(err), err, out)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("a refused connect wrote into the home: %v", entries)
	}
}

// --list names every client with where its configuration is here.
func TestConnectList(t *testing.T) {
	home, _, _ := connectEnv(t)
	out, _, err := runConnect(t, "--list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(clientconfig.All()) {
		t.Fatalf("want one line per client, got\n%s", out)
	}
	for i, c := range clientconfig.All() {
		if !strings.HasPrefix(lines[i], c.Name+" ") {
			t.Errorf("line %d should name %s: %q", i+1, c.Name, lines[i])
		}
		if c.File != nil && !strings.Contains(lines[i], home) {
			t.Errorf("line %d should give %s's file under the home %s: %q", i+1, c.Name, home, lines[i])
		}
	}
	if runtime.GOOS == "linux" && !strings.Contains(lines[0], "no official Linux build") {
		t.Errorf("claude-desktop on Linux should be said unofficial: %q", lines[0])
	}
	out, _, err = runConnect(t, "--list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != len(clientconfig.All()) {
		t.Errorf("--list --json: %v\n%s", err, out)
	}
}

// -h prints the usage in the shape of every command's, on stdout, exit 0.
func TestConnectHelp(t *testing.T) {
	connectEnv(t)
	out, _, err := runConnect(t, "-h")
	if exitCode(err) != 0 {
		t.Fatalf("exit %d: %v", exitCode(err), err)
	}
	if !strings.HasPrefix(out, "usage: vault-rag connect [flags] CLIENT\nPrints ") {
		t.Errorf("the usage should start with its usage line and a sentence:\n%s", out)
	}
	for _, f := range []string{"-vault", "-name", "-write", "-config-file", "-json", "-list"} {
		if !strings.Contains(out, "\n  "+f+" ") && !strings.Contains(out, "\n  "+f+"\n") {
			t.Errorf("the usage does not list %s:\n%s", f, out)
		}
	}
}
