package main

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// setUsage gives a command's -h the shape every command's has: the synopsis
// ("usage: vault-rag NAME [flags] [operands]"), what the command does in a
// sentence or two, a blank line, then its flags.
func setUsage(fs *flag.FlagSet, synopsis, about string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: vault-rag %s %s\n%s\n", fs.Name(), synopsis, strings.TrimRight(about, "\n"))
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w)
			fs.PrintDefaults()
		}
	}
}

// checkVault refuses a vault folder that is not there, before reindex, serve
// or search does anything with it: the default ./vault of a working folder
// that has none is the usual case, and the message says how to name the
// right one.
func checkVault(dir string) error {
	if err := vault.FolderProblem(dir); err != nil {
		return fmt.Errorf("%w; set VAULT_PATH or pass --vault", err)
	}
	return nil
}

// flagSynonyms are names users bring from other search tools, mapped to the
// flag that means the same here (when the command has it).
var flagSynonyms = map[string]string{
	"limit": "k", "top-k": "k", "topk": "k", "top": "k", "n": "k", "count": "k",
	"cfg": "config", "conf": "config",
	"database": "db", "index": "db",
	"verbose": "v",
}

// nearestFlag is the flag of fs an unknown name most likely meant, or ""
// when none is close enough to suggest: a known synonym, else the one flag
// whose name starts with it (three letters at least), else the nearest by
// edit distance, within a third of the name's length (at least one edit).
func nearestFlag(fs *flag.FlagSet, name string) string {
	name = strings.ToLower(strings.TrimLeft(name, "-"))
	if name == "" {
		return ""
	}
	if to, ok := flagSynonyms[name]; ok && fs.Lookup(to) != nil {
		return to
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	if len(name) >= 3 {
		var prefixed []string
		for _, n := range names {
			if strings.HasPrefix(n, name) {
				prefixed = append(prefixed, n)
			}
		}
		if len(prefixed) == 1 {
			return prefixed[0]
		}
	}
	// A name of one letter has no neighbour worth naming: -x is as far
	// from -k as from -v.
	best, bestD := "", min(max(1, len(name)/3)+1, len(name))
	for _, n := range names {
		if d := editDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// dashed writes a flag name as users type it: -k, --json.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// editDistance is the edit distance between a and b counting a swap of two
// neighbouring letters as one edit, as typing errs (optimal string
// alignment), in bytes: flag names are ASCII.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
