package vault

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// list scans root with opts and fails the test if the scan writes or fails.
func list(t *testing.T, root string, opts ScanOptions) Listing {
	t.Helper()
	before := vaulttest.MustDigest(t, root)
	l, err := List(context.Background(), root, opts)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if d := vaultfs.Diff(before, vaulttest.MustDigest(t, root), ""); d != nil {
		t.Errorf("List changed the vault: %q", d)
	}
	return l
}

func TestScanSettings(t *testing.T) {
	root := t.TempDir()
	vaulttest.WriteTree(t, root, map[string]string{
		".obsidian/app.json":                             `{"userIgnoreFilters": ["Archive/", "daily/2020", "/\\.excalidraw\\.md$/", "/^People/.*secret/"]}`,
		".obsidian/templates.json":                       `{"folder": "Meta/Templates/"}`,
		".obsidian/plugins/templater-obsidian/data.json": `{"templates_folder": "Tpl", "other": 1}`,
		"keep.md":                   "# keep\n",
		"Archive/old.md":            "# prefix, folder\n",
		"Archive/deep/older.md":     "# prefix, below the folder\n",
		"Archived.md":               "# not under Archive/\n",
		"Daily/2020-01-01.md":       "# prefix, any case, part of a name\n",
		"Daily/2021-01-01.md":       "# kept\n",
		"Daily/2020/x.md":           "# prefix, a folder\n",
		"a/Drawing.excalidraw.md":   "# regexp\n",
		"People/ann-secret-x.md":    "# regexp, anchored\n",
		"Work/People/secret.md":     "# the anchored regexp does not match here\n",
		"Meta/Templates/daily.md":   "# core Templates folder\n",
		"Meta/Templates.md":         "# a note beside it\n",
		"Tpl/t.md":                  "# Templater's folder\n",
		"templates/t.md":            "# the top-level templates/ stays skipped\n",
		"drafts/d.md":               "# glob drafts/*\n",
		"drafts/sub/e.md":           "# below a folder drafts/* matches\n",
		"drafts.md":                 "# kept\n",
		"x/y/z.tmp.md":              "# glob **/*.tmp.md\n",
		"top.tmp.md":                "# ** matches no folder too\n",
		"Old/2019/a.md":             "# glob Old/**\n",
		"Oldish/a.md":               "# kept\n",
		"only/a.md":                 "# glob only: the folder\n",
		"deep/only/b.md":            "# kept: patterns are anchored at the root\n",
		"x/notes.md/c.md":           "# glob **/notes.md/: a folder\n",
		"notes.md":                  "# kept: a pattern ending in / matches folders only\n",
		".hidden/h.md":              "# hidden folder\n",
		"sub/.h.md":                 "# hidden file\n",
		"lint-report-2020-01-01.md": "# lint report\n",
	}, testTime)
	l := list(t, root, ScanOptions{Exclude: []string{"drafts/*", "**/*.tmp.md", "Old/**", "only", "**/notes.md/"}})
	var files []string
	for _, f := range l.Files {
		files = append(files, f.Path)
	}
	want := []string{"Archived.md", "Daily/2021-01-01.md", "Meta/Templates.md", "Oldish/a.md", "Work/People/secret.md", "deep/only/b.md", "drafts.md", "keep.md", "notes.md"}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("indexed %q\nwant    %q", files, want)
	}
	skipped := map[string]Problem{}
	for _, s := range l.Skipped {
		skipped[s.Path] = s.Problem
	}
	for path, want := range map[string]string{
		"Archive/":                  `excluded in Obsidian's settings: userIgnoreFilters "Archive/"`,
		"Daily/2020-01-01.md":       `excluded in Obsidian's settings: userIgnoreFilters "daily/2020"`,
		"Daily/2020/":               `excluded in Obsidian's settings: userIgnoreFilters "daily/2020"`,
		"a/Drawing.excalidraw.md":   `excluded in Obsidian's settings: userIgnoreFilters "/\\.excalidraw\\.md$/"`,
		"People/ann-secret-x.md":    `excluded in Obsidian's settings: userIgnoreFilters "/^People/.*secret/"`,
		"Meta/Templates/":           "templates folder: named in Obsidian's settings",
		"Tpl/":                      "templates folder: named in Obsidian's settings",
		"templates/":                "templates folder",
		"drafts/d.md":               `excluded by VAULT_RAG_EXCLUDE: "drafts/*"`,
		"drafts/sub/":               `excluded by VAULT_RAG_EXCLUDE: "drafts/*"`,
		"x/y/z.tmp.md":              `excluded by VAULT_RAG_EXCLUDE: "**/*.tmp.md"`,
		"top.tmp.md":                `excluded by VAULT_RAG_EXCLUDE: "**/*.tmp.md"`,
		"Old/":                      `excluded by VAULT_RAG_EXCLUDE: "Old/**"`,
		"only/":                     `excluded by VAULT_RAG_EXCLUDE: "only"`,
		"x/notes.md/":               `excluded by VAULT_RAG_EXCLUDE: "**/notes.md/"`,
		"lint-report-2020-01-01.md": "lint report",
	} {
		if got := skipped[path].Reason; got != want {
			t.Errorf("%s: skipped as %q, want %q", path, got, want)
		}
	}
	if len(l.Skipped) != 16 {
		t.Errorf("%d skipped, want 16 (a folder once, nothing below it): %v", len(l.Skipped), l.Skipped)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings for good settings: %v", l.Warnings)
	}
	wantCounts := map[string]int{
		"excluded in Obsidian's settings": 5,
		"templates folder":                3,
		"excluded by VAULT_RAG_EXCLUDE":   7,
		"lint report":                     1,
		"hidden folder":                   2, // .obsidian and .hidden
		"hidden file":                     1,
	}
	if !reflect.DeepEqual(l.SkippedByKind, wantCounts) {
		t.Errorf("SkippedByKind = %v\nwant            %v", l.SkippedByKind, wantCounts)
	}
}

// Settings that cannot be used are warnings naming the file and the value;
// the scan goes on with the rest.
func TestScanBadSettings(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		exclude  []string
		warnings []string // "path: reason" prefixes, in order
		skipped  []string // paths still skipped by what could be used
	}{
		{
			name:     "app.json is not JSON",
			files:    map[string]string{".obsidian/app.json": `{"userIgnoreFilters": ["Archive/"`},
			warnings: []string{".obsidian/app.json: Obsidian settings file is not a JSON object (ignored): "},
		},
		{
			name:     "app.json is a list",
			files:    map[string]string{".obsidian/app.json": `["Archive/"]`},
			warnings: []string{".obsidian/app.json: Obsidian settings file is not a JSON object (ignored): "},
		},
		{
			name:     "userIgnoreFilters is a string",
			files:    map[string]string{".obsidian/app.json": `{"userIgnoreFilters": "Archive/"}`},
			warnings: []string{`.obsidian/app.json: userIgnoreFilters is not a list of strings (ignored): "Archive/"`},
		},
		{
			name:     "userIgnoreFilters is null",
			files:    map[string]string{".obsidian/app.json": `{"userIgnoreFilters": null}`},
			warnings: nil,
		},
		{
			name:     "userIgnoreFilters holds a number and an object",
			files:    map[string]string{".obsidian/app.json": `{"userIgnoreFilters": [42, "Archive/", {"a": 1}]}`},
			warnings: []string{".obsidian/app.json: userIgnoreFilters entry 42 is not a string (ignored)", `.obsidian/app.json: userIgnoreFilters entry {"a": 1} is not a string (ignored)`},
			skipped:  []string{"Archive/"},
		},
		{
			name:  "a regular expression Go cannot compile, and an empty filter",
			files: map[string]string{".obsidian/app.json": `{"userIgnoreFilters": ["/(?<=a)b/", "", "/[/", "Archive/"]}`},
			warnings: []string{
				`.obsidian/app.json: userIgnoreFilters regular expression "/(?<=a)b/" does not compile (ignored): `,
				".obsidian/app.json: userIgnoreFilters entry is empty (ignored: it would exclude every note)",
				`.obsidian/app.json: userIgnoreFilters regular expression "/[/" does not compile (ignored): `,
			},
			skipped: []string{"Archive/"},
		},
		{
			name:     "templates.json is not JSON",
			files:    map[string]string{".obsidian/templates.json": `folder: Meta`},
			warnings: []string{".obsidian/templates.json: Obsidian settings file is not a JSON object (ignored): "},
		},
		{
			name:     "templates.json folder is a number",
			files:    map[string]string{".obsidian/templates.json": `{"folder": 7}`},
			warnings: []string{".obsidian/templates.json: folder is not a string (ignored): 7"},
		},
		{
			name:     "templates.json folder leaves the vault",
			files:    map[string]string{".obsidian/templates.json": `{"folder": "../elsewhere"}`},
			warnings: []string{`.obsidian/templates.json: folder "../elsewhere" is outside the vault (ignored)`},
		},
		{
			name:  "templates.json folder is the vault root",
			files: map[string]string{".obsidian/templates.json": `{"folder": "/"}`},
		},
		{
			name:     "Templater's folder is a list",
			files:    map[string]string{".obsidian/plugins/templater-obsidian/data.json": `{"templates_folder": ["Tpl"]}`},
			warnings: []string{`.obsidian/plugins/templater-obsidian/data.json: templates_folder is not a string (ignored): ["Tpl"]`},
		},
		{
			name:    "globs that do not parse",
			exclude: []string{"[abc", "Archive/**", "../up", "/"},
			warnings: []string{
				`VAULT_RAG_EXCLUDE: pattern "[abc" does not parse (ignored): syntax error in pattern`,
				`VAULT_RAG_EXCLUDE: pattern "../up" does not parse (ignored): ".." leads out of the vault`,
				`VAULT_RAG_EXCLUDE: pattern "/" does not parse (ignored): no path in it`,
			},
			skipped: []string{"Archive/"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{"a.md": "# a\n", "Archive/b.md": "# b\n", "Meta/m.md": "# m\n", "Tpl/t.md": "# t\n"}
			for p, c := range tc.files {
				files[p] = c
			}
			vaulttest.WriteTree(t, root, files, testTime)
			l := list(t, root, ScanOptions{Exclude: tc.exclude})
			var warns []string
			for _, w := range l.Warnings {
				warns = append(warns, w.Path+": "+w.Reason)
			}
			// The wanted warning is a prefix: the rest is the JSON or regexp
			// package's own wording.
			ok := len(warns) == len(tc.warnings)
			for i := 0; ok && i < len(warns); i++ {
				ok = strings.HasPrefix(warns[i], tc.warnings[i])
			}
			if !ok {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(tc.warnings, "\n"))
			}
			var skipped []string
			for _, s := range l.Skipped {
				skipped = append(skipped, s.Path)
			}
			if !reflect.DeepEqual(skipped, tc.skipped) {
				t.Errorf("skipped %q, want %q", skipped, tc.skipped)
			}
			if !slices.ContainsFunc(l.Files, func(f File) bool { return f.Path == "a.md" }) {
				t.Errorf("a.md was not indexed: %v", l.Files)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"Archive/**", []string{"Archive", "Archive/a.md", "Archive/x/y.md"}, []string{"Archived", "x/Archive/a.md"}},
		{"**/*.excalidraw.md", []string{"a.excalidraw.md", "x/y/a.excalidraw.md"}, []string{"a.md", "x/a.excalidraw.md/b"}},
		{"drafts/*", []string{"drafts/a.md", "drafts/sub"}, []string{"drafts", "drafts/sub/b.md", "x/drafts/a.md"}},
		{"**/drafts", []string{"drafts", "a/b/drafts"}, []string{"drafts/a.md", "adrafts"}},
		{"a/**/b.md", []string{"a/b.md", "a/x/b.md", "a/x/y/b.md"}, []string{"b.md", "a/x/c.md"}},
		{"**", []string{"a.md", "x/y"}, nil},
		{"**/**/n?.md", []string{"n1.md", "x/n2.md"}, []string{"n10.md"}},
		{"[ab]*.md", []string{"a.md", "bee.md"}, []string{"c.md", "x/a.md"}},
		{`\*.md`, []string{"*.md"}, []string{"a.md"}},
		{"./x//y.md", []string{"x/y.md"}, nil},
		{"Note *.md", []string{"Note 1.md"}, []string{"Note/1.md"}},
	}
	for _, tc := range tests {
		g, err := compileGlob(tc.pattern)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tc.pattern, err)
			continue
		}
		for _, p := range tc.yes {
			if !g.match(strings.Split(p, "/")) {
				t.Errorf("%q does not match %q", tc.pattern, p)
			}
		}
		for _, p := range tc.no {
			if g.match(strings.Split(p, "/")) {
				t.Errorf("%q matches %q", tc.pattern, p)
			}
		}
	}
}

func TestParseExclude(t *testing.T) {
	for in, want := range map[string][]string{
		"":                                    nil,
		" , ,":                                nil,
		"Archive/**":                          {"Archive/**"},
		"Archive/** , **/*.excalidraw.md,,x ": {"Archive/**", "**/*.excalidraw.md", "x"},
	} {
		if got := ParseExclude(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseExclude(%q) = %q, want %q", in, got, want)
		}
	}
}
