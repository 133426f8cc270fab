package main

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
)

// commandNames are the commands `vault-rag -h` lists, read from its
// "commands:" section, so a command added there is held to the same shape.
func commandNames(t *testing.T) []string {
	t.Helper()
	out := mustRun(t, t.TempDir(), "", "", "-h").stdout
	_, list, ok := strings.Cut(out, "\ncommands:\n")
	if !ok {
		t.Fatalf("vault-rag -h has no commands: section:\n%s", out)
	}
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if line == "" {
			break
		}
		// "  NAME   what it does"; a continuation line is indented further.
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			names = append(names, strings.Fields(line)[0])
		}
	}
	if len(names) < 7 {
		t.Fatalf("found only %d commands in vault-rag -h: %q", len(names), names)
	}
	return names
}

// Every command's -h has one shape: "usage: vault-rag NAME ...", a sentence
// or two, a blank line, then the flags as the flag package prints them
// (setUsage).
func TestEveryHelpHasOneShape(t *testing.T) {
	dir := t.TempDir()
	cmds := append(commandNames(t), "models fetch", "models import")
	for _, name := range cmds {
		args := append(strings.Fields(name), "-h")
		r := run(t, dir, "", "", args...)
		lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
		if r.code != 0 || r.stderr != "" || len(lines) < 3 {
			t.Errorf("vault-rag %s -h: want exit 0 and the usage on stdout, got %s", name, r)
			continue
		}
		if !strings.HasPrefix(lines[0], "usage: vault-rag "+name+" ") {
			t.Errorf("vault-rag %s -h: first line %q, want \"usage: vault-rag %s ...\"", name, lines[0], name)
		}
		if strings.TrimSpace(lines[1]) == "" || strings.HasPrefix(lines[1], "  -") {
			t.Errorf("vault-rag %s -h: second line %q, want a sentence on what it does", name, lines[1])
		}
		blank := -1
		for i, l := range lines {
			if l == "" {
				blank = i
				break
			}
		}
		switch {
		case blank < 0 && !strings.Contains(r.stdout, "\n  -"):
			// No flags: the sentences end the usage.
		case blank < 2:
			t.Errorf("vault-rag %s -h: no blank line after the sentences:\n%s", name, r.stdout)
		case name == "models":
			// No flags of its own: its subcommands follow.
			if lines[blank+1] != "subcommands:" || !strings.Contains(r.stdout, "\n  fetch ") || !strings.Contains(r.stdout, "\n  import ") {
				t.Errorf("vault-rag models -h does not list fetch and import:\n%s", r.stdout)
			}
		case !strings.HasPrefix(lines[blank+1], "  -"):
			t.Errorf("vault-rag %s -h: after the blank line %q, want the flags:\n%s", name, lines[blank+1], r.stdout)
		}
	}
}

// search with no query prints its usage and exits 2; the demo queries run
// with --demo.
func TestSearchWithoutQuery(t *testing.T) {
	d := demoIndex(t)
	for _, args := range [][]string{{"search"}, {"search", "--json"}, {"search", "--", "  "}} {
		r := run(t, d.root, d.vault, d.db, args...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "usage: vault-rag search ") || r.stdout != "" {
			t.Errorf("vault-rag %s: want exit 2 and the usage on stderr, got %s", strings.Join(args, " "), r)
		}
	}
	r := mustRun(t, d.root, d.vault, d.db, "search", "--demo")
	for _, want := range []string{`$ vault-rag search "FERR-4102"`, "keyword (FTS5/BM25)", "vector (sqlite-vec)", "shipping ("} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("search --demo does not print %q:\n%s", want, r.stdout)
		}
	}
}

// A vault folder that does not exist is refused in one line by every command
// that reads it and ends, naming the folder and the two ways to name another
// (serve waits for it instead: TestServeMissingVault).
func TestMissingVault(t *testing.T) {
	dir := t.TempDir()
	for _, vault := range []string{filepath.Join(dir, "no-such-vault"), "relative-vault"} {
		abs := vault
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, vault)
		}
		for _, args := range [][]string{{"reindex"}, {"search", "lease"}} {
			r := run(t, dir, vault, "", args...)
			want := "vault-rag " + args[0] + ": the vault folder " + abs + " does not exist; set VAULT_PATH or pass --vault\n"
			if r.code != 1 || r.stderr != want || r.stdout != "" {
				t.Errorf("VAULT_PATH=%s vault-rag %s: want exit 1 and %q, got %s", vault, strings.Join(args, " "), want, r)
			}
		}
	}
}

// An unknown flag names the flag it most likely meant, when one is close.
func TestUnknownFlagSuggests(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string // "" for no suggestion
	}{
		{[]string{"search", "--limit", "5", "lease"}, "unknown flag --limit; did you mean -k?"},
		{[]string{"search", "--top-k", "5", "lease"}, "unknown flag --top-k; did you mean -k?"},
		{[]string{"search", "--jsn", "lease"}, "unknown flag --jsn; did you mean --json?"},
		{[]string{"search", "--exp", "lease"}, "unknown flag --exp; did you mean --explain?"},
		{[]string{"reindex", "--incremntal"}, "unknown flag --incremntal; did you mean --incremental?"},
		{[]string{"serve", "--transprt", "stdio"}, "unknown flag --transprt; did you mean --transport?"},
		{[]string{"models", "fetch", "--requre", "x"}, "unknown flag --requre; did you mean --require?"},
		{[]string{"search", "--background-primary"}, ""},
		{[]string{"reindex", "-x"}, ""},
	} {
		r := run(t, dir, "", "", tc.args...)
		cmd := "vault-rag " + strings.Join(tc.args, " ")
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "-h\" for its flags") {
			t.Errorf("%s: want exit 2 and the word on -h, got %s", cmd, r)
			continue
		}
		if tc.want != "" && !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: stderr does not say %q:\n%s", cmd, tc.want, r.stderr)
		}
		if tc.want == "" && strings.Contains(r.stderr, "did you mean") {
			t.Errorf("%s: suggested a flag for a name close to none:\n%s", cmd, r.stderr)
		}
	}
}

func TestNearestFlag(t *testing.T) {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	for _, n := range []string{"k", "json", "explain", "config", "date-from", "date-to", "db", "vault", "keywords"} {
		fs.String(n, "", "")
	}
	noK := flag.NewFlagSet("reindex", flag.ContinueOnError)
	noK.Bool("incremental", false, "")
	noK.Bool("json", false, "")
	for _, tc := range []struct {
		fs         *flag.FlagSet
		name, want string
	}{
		{fs, "limit", "k"},
		{fs, "--LIMIT", "k"},
		{fs, "n", "k"},
		{fs, "cfg", "config"},
		{fs, "jsno", "json"},
		{fs, "confg", "config"},
		{fs, "date_from", "date-from"},
		{fs, "date", ""}, // a prefix of two flags: no guess
		{fs, "keyword", "keywords"},
		{fs, "x", ""},
		{fs, "q", ""},
		{fs, "query", ""},
		{fs, "background-primary", ""},
		{noK, "limit", ""}, // a synonym only when the command has its flag
		{noK, "incr", "incremental"},
	} {
		if got := nearestFlag(tc.fs, tc.name); got != tc.want {
			t.Errorf("nearestFlag(%s, %q) = %q, want %q", tc.fs.Name(), tc.name, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"json", "json", 0}, {"jsno", "json", 1}, {"confg", "config", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// models fetch takes the models to fetch as operands: only those, each
// required; an unknown name is refused before anything is fetched.
func TestModelsFetchNames(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, "", "", "models", "fetch", "bge-small-en-v1.5-q")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 ||
		!strings.HasPrefix(lines[0], "models: bge-small-en-v1.5-q installed (") || !strings.HasSuffix(lines[0], ", cached)") {
		t.Errorf("models fetch bge-small-en-v1.5-q: want the one model's line, cached, got %s", r)
	}
	r = run(t, dir, "", "", "models", "fetch", "no-such-model")
	if r.code != 1 || !strings.Contains(r.stderr, `unknown model "no-such-model"`) || r.stdout != "" {
		t.Errorf("models fetch no-such-model: want exit 1 naming it, got %s", r)
	}
}
