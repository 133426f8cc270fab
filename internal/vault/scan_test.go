package vault

import (
	"context"
	"errors"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"
)

var testTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// scanVault builds the vault the scan rules are tested on and returns its root.
func scanVault(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	deep := strings.Repeat("d/", 40) + "deep.md"
	vaulttest.WriteTree(t, root, map[string]string{
		"a.md":                        "# A\n",
		"notes/b.md":                  "# B\nbody of b\n",
		"readme.txt":                  "not a note",
		"image.png":                   "\x89PNG",
		"a.md.bak":                    "# backup",
		"templates/daily.md":          "# {{date}}\n",
		"templates/nested/x.md":       "# x\n",
		"sub/templates/kept.md":       "# kept: only the top-level templates folder is skipped\n",
		"lint-report-2026-01-01.md":   "# lint\n",
		"sub/lint-report-x.md":        "# lint\n",
		"lint-report.md":              "# not a lint report: no dash after report\n",
		".obsidian/workspace.md":      "# hidden folder\n",
		"sub/.trash/old.md":           "# hidden folder, nested\n",
		".hidden.md":                  "# hidden file\n",
		"sub/.also-hidden.md":         "# hidden file, nested\n",
		"binary.md":                   "# looks like a note\x00\x01\x02 but is not",
		"big.md":                      strings.Repeat("x", 2048),
		"limit.md":                    strings.Repeat("y", 1024),
		deep:                          "# deep\n",
		"with space.md":               "# spaced\n",
		"naïve café/日本語 ノート.md":       "# non-ASCII\n",
		"folder.md/inner.md":          "# a folder named like a note is walked, not read\n",
		"UPPER/Mixed Case Name.md":    "# case kept\n",
		"notes/2026-02-03 Meeting.md": "# meeting\n",
	}, testTime)

	outside := t.TempDir()
	vaulttest.WriteTree(t, outside, map[string]string{"secret.md": "# outside the vault\n", "dir/o.md": "# outside\n"}, testTime)

	links := map[string]string{
		"dangling.md":          filepath.Join(root, "does-not-exist.md"),
		"loop.md":              "loop.md",
		"loop-a.md":            "loop-b.md",
		"loop-b.md":            "loop-a.md",
		"outside.md":           filepath.Join(outside, "secret.md"),
		"outside-rel.md":       filepath.Join("..", filepath.Base(outside), "secret.md"),
		"inside-link.md":       filepath.Join("notes", "b.md"),
		"abs-inside.md":        filepath.Join(root, "a.md"),
		"linked-dir":           filepath.Join(outside, "dir"),
		"dir-link.md":          "notes",
		"inside-dir-link":      "notes",
		".hidden-outside-link": filepath.Join(outside, "dir"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestScanRules(t *testing.T) {
	root := scanVault(t)
	before := vaulttest.MustDigest(t, root)
	files, skipped, err := Scan(context.Background(), root, ScanOptions{MaxBytes: 1024})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if d := vaultfs.Diff(before, vaulttest.MustDigest(t, root), ""); d != nil {
		t.Errorf("Scan changed the vault: %q", d)
	}

	got := map[string]File{}
	for _, f := range files {
		got[f.Path] = f
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Path] = s.Reason
	}

	deep := strings.Repeat("d/", 40) + "deep.md"
	tests := []struct {
		path    string
		indexed bool
		reason  string // substring of the skip reason; "" with !indexed means absent from both lists
	}{
		{path: "a.md", indexed: true},
		{path: "notes/b.md", indexed: true},
		{path: "readme.txt"},
		{path: "image.png"},
		{path: "a.md.bak"},
		{path: "templates/", reason: "templates"},
		{path: "templates/daily.md"},
		{path: "templates/nested/x.md"},
		{path: "sub/templates/kept.md", indexed: true},
		{path: "lint-report-2026-01-01.md", reason: "lint report"},
		{path: "sub/lint-report-x.md", reason: "lint report"},
		{path: "lint-report.md", indexed: true},
		{path: ".obsidian/workspace.md"},
		{path: "sub/.trash/old.md"},
		{path: ".hidden.md"},
		{path: "sub/.also-hidden.md"},
		{path: "binary.md", reason: "binary"},
		{path: "big.md", reason: "too large"},
		{path: "limit.md", indexed: true}, // exactly MaxBytes
		{path: deep, indexed: true},
		{path: "with space.md", indexed: true},
		{path: "naïve café/日本語 ノート.md", indexed: true},
		{path: "folder.md", reason: ""},
		{path: "folder.md/inner.md", indexed: true},
		{path: "UPPER/Mixed Case Name.md", indexed: true},
		{path: "notes/2026-02-03 Meeting.md", indexed: true},
		{path: "dangling.md", reason: "broken or looping symlink"},
		{path: "loop.md", reason: "broken or looping symlink"},
		{path: "loop-a.md", reason: "broken or looping symlink"},
		{path: "loop-b.md", reason: "broken or looping symlink"},
		{path: "outside.md", reason: "outside the vault"},
		{path: "outside-rel.md", reason: "outside the vault"},
		{path: "inside-link.md", indexed: true},
		{path: "abs-inside.md", indexed: true},
		{path: "linked-dir/", reason: "symlink leads outside the vault"},
		{path: "linked-dir/o.md"},
		{path: "inside-dir-link"}, // its notes are indexed under their own path
		{path: "inside-dir-link/b.md"},
		{path: ".hidden-outside-link"},
		{path: "dir-link.md", reason: "not a file"},
	}
	want := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			f, isFile := got[tc.path]
			reason, isSkipped := reasons[tc.path]
			switch {
			case tc.indexed:
				want[tc.path] = true
				if !isFile {
					t.Fatalf("not indexed (skipped: %v %q)", isSkipped, reason)
				}
				if isSkipped {
					t.Errorf("both indexed and skipped (%q)", reason)
				}
				if f.Hash != sha256Hex(f.Raw) {
					t.Errorf("Hash = %s, want sha256 of Raw %s", f.Hash, sha256Hex(f.Raw))
				}
				if f.ModTime.Location() != time.UTC {
					t.Errorf("ModTime %v is not UTC", f.ModTime)
				}
			case tc.reason != "":
				if isFile {
					t.Fatalf("indexed, want skipped with %q", tc.reason)
				}
				if !isSkipped {
					t.Fatalf("not reported as skipped, want reason containing %q", tc.reason)
				}
				if !strings.Contains(reason, tc.reason) {
					t.Errorf("reason = %q, want it to contain %q", reason, tc.reason)
				}
			default:
				if isFile || isSkipped {
					t.Errorf("indexed=%v skipped=%v (%q), want neither", isFile, isSkipped, reason)
				}
			}
		})
	}
	for p := range got {
		if !want[p] {
			t.Errorf("unexpected file %q indexed", p)
		}
	}

	// A symlink to a note inside the vault reads the target's bytes; the time is the target's.
	if f, ok := got["inside-link.md"]; ok {
		if string(f.Raw) != "# B\nbody of b\n" {
			t.Errorf("inside-link.md Raw = %q, want the bytes of notes/b.md", f.Raw)
		}
		if !f.ModTime.Equal(testTime) {
			t.Errorf("inside-link.md ModTime = %v, want %v", f.ModTime, testTime)
		}
	}
	if f := got["a.md"]; string(f.Raw) != "# A\n" || !f.ModTime.Equal(testTime) {
		t.Errorf("a.md = %q at %v, want %q at %v", f.Raw, f.ModTime, "# A\n", testTime)
	}

	if !sort.SliceIsSorted(files, func(i, j int) bool { return files[i].Path < files[j].Path }) {
		t.Errorf("files not sorted by path: %v", paths(files))
	}
	if !sort.SliceIsSorted(skipped, func(i, j int) bool { return skipped[i].Path < skipped[j].Path }) {
		t.Errorf("skipped not sorted by path: %v", skipped)
	}
}

func paths(fs []File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

func TestScanDefaultMaxBytes(t *testing.T) {
	root := t.TempDir()
	vaulttest.WriteTree(t, root, map[string]string{"small.md": "# s\n"}, testTime)
	big, err := os.Create(filepath.Join(root, "huge.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: DefaultMaxNoteBytes+1 bytes without writing them.
	if err := big.Truncate(DefaultMaxNoteBytes + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	files, skipped, err := Scan(context.Background(), root, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "small.md" {
		t.Errorf("files = %v, want [small.md]", paths(files))
	}
	if len(skipped) != 1 || skipped[0].Path != "huge.md" || !strings.Contains(skipped[0].Reason, "too large") {
		t.Errorf("skipped = %v, want huge.md too large", skipped)
	}
}

func TestScanRootErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "note.md")
	vaulttest.WriteTree(t, dir, map[string]string{"note.md": "# n\n"}, testTime)
	tests := []struct {
		name, root string
	}{
		{"missing", filepath.Join(dir, "nope")},
		{"a file", file},
		{"dangling symlink", func() string {
			p := filepath.Join(dir, "gone-link")
			if err := os.Symlink(filepath.Join(dir, "gone"), p); err != nil {
				t.Fatal(err)
			}
			return p
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, skipped, err := Scan(context.Background(), tc.root, ScanOptions{})
			if err == nil {
				t.Fatalf("Scan(%s) = %d files, %d skipped, nil error; want an error", tc.root, len(files), len(skipped))
			}
		})
	}
}

// A vault reached through a symlink (~/vault → ~/Dropbox/vault) is scanned
// like the folder itself.
func TestScanSymlinkedRoot(t *testing.T) {
	real := t.TempDir()
	vaulttest.WriteTree(t, real, map[string]string{"a.md": "# a\n", "sub/b.md": "# b\n"}, testTime)
	if err := os.Symlink(filepath.Join(real, "sub", "b.md"), filepath.Join(real, "link.md")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "vault")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	direct, _, err := Scan(context.Background(), real, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	via, skipped, err := Scan(context.Background(), link, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.md", "link.md", "sub/b.md"}
	if got := paths(direct); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("direct scan = %v, want %v", got, want)
	}
	if got := paths(via); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("scan through a symlinked root = %v (skipped %v), want %v", got, skipped, want)
	}
}

// A file name that is not valid UTF-8 cannot be stored as it is: stored
// repaired, it would name a file that does not exist. It is skipped with a
// reason that shows its real bytes.
func TestScanSkipsNamesThatAreNotUTF8(t *testing.T) {
	root := t.TempDir()
	vaulttest.WriteTree(t, root, map[string]string{"good.md": "# good\n"}, testTime)
	if err := os.WriteFile(filepath.Join(root, "bad-\xff.md"), []byte("# bad\n"), 0o644); err != nil {
		t.Skipf("this file system refuses the name: %v", err)
	}
	files, skipped, err := Scan(context.Background(), root, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(files); len(got) != 1 || got[0] != "good.md" {
		t.Errorf("files %q, want only good.md", got)
	}
	if len(skipped) != 1 || skipped[0].Path != "bad-\uFFFD.md" || !strings.Contains(skipped[0].Reason, "not valid UTF-8") || !strings.Contains(skipped[0].Reason, `\xff`) {
		t.Errorf("skipped %+v, want bad-\uFFFD.md with a reason naming the byte", skipped)
	}
}

// A file name with a control character (in the name or in a folder above
// it) is skipped: vault_read refuses such a path, so the note could be found
// but never read, and the name would reach terminals that show it. The
// reason shows the characters escaped.
func TestScanSkipsNamesWithControlCharacters(t *testing.T) {
	tests := []struct{ name, path, escaped string }{
		{"newline", "a\nb.md", `a\nb.md`},
		{"tab", "a\tb.md", `a\tb.md`},
		{"SOH", "a\x01b.md", `a\x01b.md`},
		{"ESC", "red-\x1b[31m.md", `red-\x1b[31m.md`},
		{"DEL", "a\x7fb.md", `a\x7fb.md`},
		{"C1 CSI", "a\u009bb.md", `a\u009bb.md`},
		{"in a folder", "dir\x1b[2J/note.md", `dir\x1b[2J/note.md`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			vaulttest.WriteTree(t, root, map[string]string{"good.md": "# good\n"}, testTime)
			full := filepath.Join(root, filepath.FromSlash(tc.path))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Skipf("this file system refuses the name: %v", err)
			}
			if err := os.WriteFile(full, []byte("# bad\n"), 0o644); err != nil {
				t.Skipf("this file system refuses the name: %v", err)
			}
			files, skipped, err := Scan(context.Background(), root, ScanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := paths(files); len(got) != 1 || got[0] != "good.md" {
				t.Errorf("files %q, want only good.md", got)
			}
			if len(skipped) != 1 || skipped[0].Path != tc.path || !strings.Contains(skipped[0].Reason, "control character") ||
				!strings.Contains(skipped[0].Reason, tc.escaped) || strings.IndexFunc(skipped[0].Reason, unicode.IsControl) >= 0 {
				t.Errorf("skipped %+v, want %q with a reason naming %s", skipped, tc.path, tc.escaped)
			}
			// The watcher's walk leaves it out too.
			var walked []string
			if err := Walk(context.Background(), root, ScanOptions{}, func(rel, _ string) { walked = append(walked, rel) }); err != nil {
				t.Fatal(err)
			}
			if len(walked) != 1 || walked[0] != "good.md" {
				t.Errorf("Walk gave %q, want only good.md", walked)
			}
		})
	}
}

// A cancelled context (Ctrl-C) stops the walk: an error, not a partial list.
func TestScanStopsWhenCancelled(t *testing.T) {
	root := t.TempDir()
	vaulttest.WriteTree(t, root, map[string]string{"a.md": "# a\n", "b/c.md": "# c\n"}, testTime)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	files, _, err := Scan(ctx, root, ScanOptions{})
	if !errors.Is(err, context.Canceled) || files != nil {
		t.Errorf("Scan with a cancelled context: %d files, %v; want context.Canceled", len(files), err)
	}
}
