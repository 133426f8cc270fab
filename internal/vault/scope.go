package vault

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// What a vault leaves out by its own settings, besides the fixed rules of
// rules.go: the files Obsidian is told to exclude, its templates folders, and
// the globs the user gives vault-rag (ScanOptions.Exclude). Scan reads the
// settings on every walk, so a change to them takes effect at the next build.

// ExcludeEnv is the environment variable the binary reads ScanOptions.Exclude
// from: comma-separated globs (ParseExclude).
const ExcludeEnv = "VAULT_RAG_EXCLUDE"

// Why Scan passes over a file or folder by the vault's settings.
const (
	reasonObsidianExcluded = "excluded in Obsidian's settings"
	reasonExcluded         = "excluded by " + ExcludeEnv
)

// The Obsidian settings files read, vault-relative.
const (
	obsidianApp       = ".obsidian/app.json"
	obsidianTemplates = ".obsidian/templates.json"
	templaterData     = ".obsidian/plugins/templater-obsidian/data.json"
)

// ObsidianSettings is the part of a vault's Obsidian configuration that says
// which files are notes to search.
type ObsidianSettings struct {
	// IgnoreFilters is "Excluded files" (app.json userIgnoreFilters), as
	// written: a path prefix ("Archive/", "Daily/2020") or, between
	// slashes, a regular expression ("/\.excalidraw\.md$/").
	IgnoreFilters []string
	// TemplateFolders are the folders the core Templates plugin
	// (templates.json folder) and Templater (templates_folder) take
	// templates from, vault-relative.
	TemplateFolders []string
}

// ReadObsidianSettings reads the settings of the vault at root. A file that
// is absent is no setting; one that cannot be read or holds a value of the
// wrong type is a warning naming the file and the value, and the rest is
// used. It never writes.
func ReadObsidianSettings(root string) (ObsidianSettings, []Skipped) {
	var s ObsidianSettings
	var warns []Skipped
	warn := func(file string, p Problem) { warns = append(warns, Skipped{Path: file, Problem: p}) }

	if keys := readSettingsFile(root, obsidianApp, warn); keys != nil {
		if raw, ok := keys["userIgnoreFilters"]; ok {
			s.IgnoreFilters = stringsSetting(raw, "userIgnoreFilters", func(p Problem) { warn(obsidianApp, p) })
		}
	}
	for _, src := range []struct{ file, key string }{
		{obsidianTemplates, "folder"},
		// Templater keeps its own folder: a vault with both plugins has two.
		{templaterData, "templates_folder"},
	} {
		keys := readSettingsFile(root, src.file, warn)
		raw, ok := keys[src.key]
		if !ok {
			continue
		}
		if f, ok := folderSetting(raw, src.key, func(p Problem) { warn(src.file, p) }); ok {
			s.TemplateFolders = append(s.TemplateFolders, f)
		}
	}
	return s, warns
}

// readSettingsFile reads one JSON settings file into its top-level keys; nil
// when it is absent or unusable (then with a warning).
func readSettingsFile(root, rel string, warn func(string, Problem)) map[string]json.RawMessage {
	raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		warn(rel, detailed("Obsidian settings file is unreadable (ignored)", errText(err)))
		return nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		warn(rel, detailed("Obsidian settings file is not a JSON object (ignored)", oneLine(err.Error())))
		return nil
	}
	return keys
}

// stringsSetting reads a list of strings, keeping the strings of a list
// that also holds other values.
func stringsSetting(raw json.RawMessage, key string, warn func(Problem)) []string {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		if string(raw) != "null" {
			warn(Problem{Reason: fmt.Sprintf("%s is not a list of strings (ignored): %s", key, clip(raw)), Kind: key + " is not a list of strings (ignored)", Detail: clip(raw)})
		}
		return nil
	}
	var out []string
	for _, it := range items {
		var s string
		if err := json.Unmarshal(it, &s); err != nil {
			warn(Problem{Reason: fmt.Sprintf("%s entry %s is not a string (ignored)", key, clip(it)), Kind: key + " entry is not a string (ignored)", Detail: clip(it)})
			continue
		}
		out = append(out, s)
	}
	return out
}

// folderSetting reads a vault-relative folder: "", "/" and null name no
// folder (Obsidian's own "not set"), and a path leaving the vault is refused.
func folderSetting(raw json.RawMessage, key string, warn func(Problem)) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		if string(raw) != "null" {
			warn(Problem{Reason: fmt.Sprintf("%s is not a string (ignored): %s", key, clip(raw)), Kind: key + " is not a string (ignored)", Detail: clip(raw)})
		}
		return "", false
	}
	f := strings.Trim(strings.TrimSpace(s), "/")
	for _, seg := range strings.Split(f, "/") {
		if seg == ".." {
			warn(Problem{Reason: fmt.Sprintf("%s %q is outside the vault (ignored)", key, s), Kind: key + " is outside the vault (ignored)", Detail: strconv.Quote(s)})
			return "", false
		}
	}
	if f = path.Clean(f); f == "." {
		return "", false
	}
	return f, true
}

// clip is a JSON value short enough for a warning.
func clip(raw json.RawMessage) string {
	s := oneLine(string(raw))
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:77], "") + "..."
	}
	return s
}

// ParseExclude splits an exclude list as ExcludeEnv holds it: globs separated
// by commas, spaces around each trimmed, empty ones dropped.
func ParseExclude(s string) []string {
	var out []string
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

// scope is the vault's settings made ready to test paths with.
type scope struct {
	templates []string // folders, vault-relative
	ignore    []ignoreFilter
	exclude   []glob
}

// ignoreFilter is one of Obsidian's excluded-files filters. Obsidian tests a
// file's vault-relative path against it: a plain filter is a prefix and a
// "/.../" one a regular expression, both ignoring case.
type ignoreFilter struct {
	raw    string
	prefix string         // lower-cased; "" when re is set
	re     *regexp.Regexp // unanchored, as JavaScript's RegExp.test is
}

// newScope compiles the settings; a filter or glob that cannot be used is a
// warning, and the others apply.
func newScope(s ObsidianSettings, exclude []string) (scope, []Skipped) {
	var sc scope
	var warns []Skipped
	sc.templates = s.TemplateFolders
	for _, f := range s.IgnoreFilters {
		if len(f) > 2 && strings.HasPrefix(f, "/") && strings.HasSuffix(f, "/") {
			re, err := regexp.Compile("(?i)" + f[1:len(f)-1])
			if err != nil {
				// Go's RE2 lacks JavaScript's lookaround and backreferences.
				warns = append(warns, Skipped{Path: obsidianApp, Problem: Problem{
					Reason: fmt.Sprintf("userIgnoreFilters regular expression %q does not compile (ignored): %s", f, oneLine(err.Error())),
					Kind:   "userIgnoreFilters regular expression does not compile (ignored)",
					Detail: strconv.Quote(f),
				}})
				continue
			}
			sc.ignore = append(sc.ignore, ignoreFilter{raw: f, re: re})
			continue
		}
		if strings.TrimSpace(f) == "" {
			// A prefix of every path: almost surely a slip in the list.
			warns = append(warns, Skipped{Path: obsidianApp, Problem: NewProblem("userIgnoreFilters entry is empty (ignored: it would exclude every note)")})
			continue
		}
		sc.ignore = append(sc.ignore, ignoreFilter{raw: f, prefix: strings.ToLower(f)})
	}
	for _, e := range exclude {
		g, err := compileGlob(e)
		if err != nil {
			warns = append(warns, Skipped{Path: ExcludeEnv, Problem: Problem{
				Reason: fmt.Sprintf("pattern %q does not parse (ignored): %v", e, err),
				Kind:   "exclude pattern does not parse (ignored)",
				Detail: strconv.Quote(e),
			}})
			continue
		}
		sc.exclude = append(sc.exclude, g)
	}
	return sc, warns
}

// folder says why the folder rel (not hidden, not the fixed templates/) is
// passed over with everything in it, or reports ok.
func (sc *scope) folder(rel string) (Problem, bool) {
	for _, t := range sc.templates {
		if rel == t {
			return detailed(reasonTemplates, "named in Obsidian's settings"), true
		}
	}
	// A prefix of the folder's path with its slash is a prefix of every path
	// below it; a regular expression may match some of them and not others,
	// so it waits for the files.
	lower := strings.ToLower(rel + "/")
	for _, f := range sc.ignore {
		if f.re == nil && strings.HasPrefix(lower, f.prefix) {
			return detailed(reasonObsidianExcluded, "userIgnoreFilters "+strconv.Quote(f.raw)), true
		}
	}
	segs := strings.Split(rel, "/")
	for _, g := range sc.exclude {
		if g.match(segs) {
			return detailed(reasonExcluded, strconv.Quote(g.raw)), true
		}
	}
	return Problem{}, false
}

// file says why the note rel is passed over, or reports ok.
func (sc *scope) file(rel string) (Problem, bool) {
	lower := strings.ToLower(rel)
	for _, f := range sc.ignore {
		if (f.re == nil && strings.HasPrefix(lower, f.prefix)) || (f.re != nil && f.re.MatchString(rel)) {
			return detailed(reasonObsidianExcluded, "userIgnoreFilters "+strconv.Quote(f.raw)), true
		}
	}
	segs := strings.Split(rel, "/")
	for _, g := range sc.exclude {
		if !g.dirOnly && g.match(segs) {
			return detailed(reasonExcluded, strconv.Quote(g.raw)), true
		}
	}
	return Problem{}, false
}

// glob is one exclude pattern, matched against a whole vault-relative path:
// a "**" segment matches any number of folders (none included), any other
// segment is path.Match's (*, ?, [a-z], \ escapes) within one name. A
// pattern that matches a folder excludes everything in it ("Archive",
// "Archive/**", "drafts/*" all take drafts' subfolders too), and one ending in
// "/" matches folders only.
type glob struct {
	raw     string
	segs    []string
	dirOnly bool
}

func compileGlob(p string) (glob, error) {
	g := glob{raw: p, dirOnly: strings.HasSuffix(p, "/")}
	for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
		switch {
		case s == "" || s == ".":
			continue // "a//b", "./a": the same path
		case s == "..":
			return glob{}, errors.New(`".." leads out of the vault`)
		case s == "**" && len(g.segs) > 0 && g.segs[len(g.segs)-1] == "**":
			continue // "**/**" is "**"
		}
		if _, err := path.Match(s, ""); err != nil {
			return glob{}, err
		}
		g.segs = append(g.segs, s)
	}
	if len(g.segs) == 0 {
		return glob{}, errors.New("no path in it")
	}
	return g, nil
}

func (g glob) match(name []string) bool { return matchSegs(g.segs, name) }

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegs(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
