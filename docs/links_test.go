// Package docs holds no Go code: its test checks that every relative link of
// the README, CONTRIBUTING.md and the pages here leads to a file of the
// repository and, into a markdown page, to one of its headings, so moving or
// renaming a page cannot leave a dead link behind.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// link matches a markdown link or image target: [text](target) or
// ![alt](target), the target up to a space or the closing parenthesis.
var link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

func TestRelativeLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"), filepath.Join("..", "CONTRIBUTING.md"))
	checked := 0
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range links(string(raw)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file or folder (%s)", page, target, dest)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			text, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", page, target, err)
				continue
			}
			if !anchors(string(text))[anchor] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", page, target, dest, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the pages were not read")
	}
}

// links are the link targets of a markdown text outside fenced code blocks
// and inline code, where brackets are not links.
func links(md string) []string {
	var out []string
	for _, line := range prose(md) {
		for _, m := range link.FindAllStringSubmatch(stripCode(line), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// prose is the text's lines outside fenced code blocks.
func prose(md string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// stripCode removes inline code spans from a line.
func stripCode(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors GitHub gives a page's headings: lower case,
// punctuation dropped, spaces turned to hyphens, a repeated one suffixed -1,
// -2, ...
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(md) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
