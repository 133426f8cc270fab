package vault

import (
	"errors"
	"testing"
)

func TestCleanNotePath(t *testing.T) {
	ok := map[string]string{
		"a.md":                 "a.md",
		"./notes/a.md":         "notes/a.md",
		"notes//a.md":          "notes/a.md",
		"100% done.md":         "100% done.md", // not an escape: opened as given
		"notes/a%20b.md":       "notes/a%20b.md",
		"notes/a..b.md":        "notes/a..b.md", // dots in a name, not a segment
		"Notes/UPPER.MD":       "Notes/UPPER.MD",
		"templates.md":         "templates.md",
		"notes/templates/x.md": "notes/templates/x.md", // only the top-level templates/ is skipped
	}
	for in, want := range ok {
		got, err := CleanNotePath(in)
		if err != nil || got != want {
			t.Errorf("CleanNotePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	refused := []string{"", "../a.md", "a/../../a.md", "/a.md", "%2e%2e/a.md", "%2E%2E%2Fa.md", "%252e%252e%252fa.md",
		"%25252e%25252e/a.md", "a.md\x00", "a%00.md", `a\b.md`, "c:a.md", "a\nb.md", ".hidden/a.md", "templates/a.md",
		"lint-report-1.md", "a.txt", ".", "notes/", "notes/.a.md", "a/.git/b.md", "bad-\xff.md"}
	for _, in := range refused {
		if got, err := CleanNotePath(in); !errors.Is(err, ErrRefused) {
			t.Errorf("CleanNotePath(%q) = %q, %v; want a refusal", in, got, err)
		}
	}
}
