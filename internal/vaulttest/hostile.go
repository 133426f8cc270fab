package vaulttest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Hostile is a generated vault of ordinary notes and files built to upset an
// indexer, with what a build must make of each.
type Hostile struct {
	// Good maps each note that must be searchable to a word only it holds.
	Good map[string]string
	// Bad maps each refused or damaged file, by the path the build reports
	// (a folder's with a "/" after it), to what the build says of it:
	// "skipped: " or "warning: " and the reason, or its start (the parts
	// that name a library's message are left out).
	Bad map[string]string
	// Linked maps a symlink to a note inside the vault, indexed as a note
	// of its own, to its target: a search of the target's word finds both.
	Linked map[string]string
	// Unseen are words of text that must never reach the model: of the
	// refused files and of the file outside the vault.
	Unseen []string
	// Unembedded are words of a note indexed for keyword search only (too
	// long to embed): a keyword search finds them, the model never sees them.
	Unembedded []string
}

// hostileDepth is how deep the nested folders go.
const hostileDepth = 60

// WriteHostile writes the hostile vault under root and the files its
// symlinks lead to under outside (a folder beside it, not in it). The
// expectations in Bad are those of the scanner and the note parser at the
// time of writing; the tests using it say so when one changes.
func WriteHostile(t T, root, outside string, mtime time.Time) Hostile {
	t.Helper()
	h := Hostile{Good: map[string]string{}, Bad: map[string]string{}}
	files := map[string]string{}
	for i := range 8 {
		p := fmt.Sprintf("ordinary-%02d.md", i)
		w := fmt.Sprintf("zebrafinch%02d", i)
		files[p] = fmt.Sprintf("# Ordinary %d\n\nA plain note about %s.\n\n## More\n\nIt links [[ordinary-%02d]].\n", i, w, (i+1)%8)
		h.Good[p] = w
	}
	// 60 levels of folders, a note at the bottom.
	var deep []string
	for i := range hostileDepth {
		deep = append(deep, fmt.Sprintf("d%02d", i))
	}
	deepNote := strings.Join(deep, "/") + "/deep.md"
	files[deepNote] = "# Deep\n\nAt the bottom lives the wombatdeep.\n"
	h.Good[deepNote] = "wombatdeep"

	// Binary content under a note's name.
	files["bad/binary.md"] = "# Binary\n\nnarwhalbinary\x00\x01\x02\x00" + strings.Repeat("\x00\xff", 512)
	h.Bad["bad/binary.md"] = "skipped: binary content (NUL bytes)"
	h.Unseen = append(h.Unseen, "narwhalbinary")
	// 20 MB: over the note size limit.
	files["bad/huge.md"] = "# Huge\n\nnarwhalhuge\n\n" + strings.Repeat("lorem ipsum dolor sit amet\n", 20<<20/27)
	h.Bad["bad/huge.md"] = "skipped: too large (20971515 bytes; the limit is 8388608)"
	h.Unseen = append(h.Unseen, "narwhalhuge")
	// Invalid UTF-8: indexed, its bad bytes replaced, with a warning.
	files["bad/invalid-utf8.md"] = "# Bad bytes\n\nSome \xff\xfe\xc3 bytes and the ibisutf.\n"
	h.Good["bad/invalid-utf8.md"] = "ibisutf"
	h.Bad["bad/invalid-utf8.md"] = "warning: invalid UTF-8 replaced with U+FFFD"
	// Malformed YAML: the frontmatter ignored, the body indexed.
	files["bad/malformed-yaml.md"] = "---\ntitle: [unclosed\ntopics: {a: b\n---\n# Malformed\n\nThe body names the ibismalformed.\n"
	h.Good["bad/malformed-yaml.md"] = "ibismalformed"
	h.Bad["bad/malformed-yaml.md"] = "warning: frontmatter is not valid YAML (ignored)"
	// Billion laughs: aliases expanding to 10^9 strings.
	var bomb strings.Builder
	bomb.WriteString("---\na0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&bomb, "a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	bomb.WriteString("topics: *a9\ntitle: *a9\n---\n# Laughs\n\nThe body names the ibisbomb.\n")
	files["bad/alias-bomb.md"] = bomb.String()
	h.Good["bad/alias-bomb.md"] = "ibisbomb"
	h.Bad["bad/alias-bomb.md"] = "warning: frontmatter topics, title: a YAML alias (*name), not followed (ignored)"
	// A 1 MB frontmatter value.
	files["bad/big-frontmatter.md"] = "---\ntitle: " + strings.Repeat("x", 1<<20) + "\ntype: note\n---\n# Big frontmatter\n\nThe body names the ibisfront.\n"
	h.Good["bad/big-frontmatter.md"] = "ibisfront"
	h.Bad["bad/big-frontmatter.md"] = "warning: title longer than 500 characters; only its start is used"
	// Control characters in names: refused (a name a terminal would act on).
	// Windows refuses to create such a name, so there the case cannot occur.
	if runtime.GOOS != "windows" {
		files["bad/bell\x07name.md"] = "# Bell\n\nnarwhalbell\n"
		h.Bad["bad/bell\x07name.md"] = `skipped: file name has a control character ("bad/bell\aname.md"); rename the file`
		files["bad/escape\x1b[2Jname.md"] = "# Escape\n\nnarwhalescape\n"
		h.Bad["bad/escape\x1b[2Jname.md"] = `skipped: file name has a control character ("bad/escape\x1b[2Jname.md"); rename the file`
		h.Unseen = append(h.Unseen, "narwhalbell", "narwhalescape")
	}
	// 100,001 headings: more chunks than a note may have. Its first 2,000
	// are indexed for keyword search only; the rest, not at all.
	var heads strings.Builder
	heads.WriteString("# Many headings\n\nThe ibisheadings opens it.\n\n")
	for i := range 100000 {
		fmt.Fprintf(&heads, "## H%d\n", i)
	}
	heads.WriteString("## Last\n\nnarwhalpastcut\n")
	files["bad/headings.md"] = heads.String()
	h.Good["bad/headings.md"] = "ibisheadings"
	h.Bad["bad/headings.md"] = "warning: note too long: only its first 2000 chunks are indexed, for keyword search only; the last 99% of its text, from “## H1999” on, is not searchable"
	h.Unseen = append(h.Unseen, "narwhalpastcut")
	h.Unembedded = append(h.Unembedded, "ibisheadings")
	// A plain note in a folder linked from inside the vault.
	files["linked-target/inner.md"] = "# Inner\n\nThe ibisinner lives here.\n"
	h.Good["linked-target/inner.md"] = "ibisinner"
	WriteTree(t, root, files, mtime)

	if runtime.GOOS == "windows" {
		// Symlinks need a privilege on Windows (and are Unix ones under wine):
		// the links' cases are the Unix tests'.
		return h
	}
	// Outside: a note and a folder of notes, reached only through links.
	WriteTree(t, outside, map[string]string{
		"secret.md":     "# Secret\n\nnarwhalsecret\n",
		"dir/secret.md": "# Secret dir\n\nnarwhalsecretdir\n",
	}, mtime)
	h.Unseen = append(h.Unseen, "narwhalsecret", "narwhalsecretdir")
	links := map[string]string{
		"links/in-file.md":  filepath.Join(root, "ordinary-00.md"),
		"links/out-file.md": filepath.Join(outside, "secret.md"),
		"links/in-dir":      filepath.Join(root, "linked-target"),
		"links/out-dir":     filepath.Join(outside, "dir"),
	}
	for rel, target := range links {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	h.Linked = map[string]string{"links/in-file.md": "ordinary-00.md"}
	h.Bad["links/out-file.md"] = "skipped: symlink leads outside the vault"
	h.Bad["links/out-dir/"] = "skipped: symlink leads outside the vault"
	return h
}
