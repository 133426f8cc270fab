package vault

import (
	"reflect"
	"strings"
	"testing"
)

func TestPlainHeading(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Inhibit rules", "Inhibit rules"},
		{"[Inhibit rules](https://prometheus.io/docs/alerting/#inhibit_rule)", "Inhibit rules"},
		{"[Configure nginx to restrict methods](https://tecadmin.net/x/)", "Configure nginx to restrict methods"},
		{"Using [[Canvas]] files", "Using Canvas files"},
		{"See [[notes/a.md#Setup|the setup]]", "See the setup"},
		{"[[a#b]]", "a › b"},
		{"**Bold** and `code` and ==mark==", "Bold and code and mark"},
		{"![logo](x.png) Logo", "logo Logo"},
		{"snake_case_name stays", "snake_case_name stays"},
		{"  many   spaces ", "many spaces"},
		{"2 * 3 = 6", "2 * 3 = 6"},
	} {
		if got := PlainHeading(c.in); got != c.want {
			t.Errorf("PlainHeading(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestOutline(t *testing.T) {
	body := strings.Join([]string{
		"# Title",
		"intro",
		"## [Configuration](http://x)",
		"```",
		"## not a heading",
		"```",
		"### Inhibit rules ###",
		"#tag is not a heading",
		"#### Deep",
		"## Other",
		"###### Six",
		"####### seven is text",
	}, "\n")
	hs := Outline(body)
	var got []string
	for _, h := range hs {
		got = append(got, strings.Repeat("#", h.Level)+" "+h.Plain)
		if !strings.HasPrefix(body[h.Start:], strings.Repeat("#", h.Level)) {
			t.Errorf("heading %q: Start %d does not point at its line", h.Text, h.Start)
		}
	}
	want := []string{"# Title", "## Configuration", "### Inhibit rules", "#### Deep", "## Other", "###### Six"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Outline = %q, want %q", got, want)
	}
	if hs[2].Line != 7 {
		t.Errorf("line of %q = %d, want 7", hs[2].Text, hs[2].Line)
	}
	paths := map[int][]string{
		0: {"Title"},
		3: {"Title", "Configuration", "Inhibit rules", "Deep"},
		4: {"Title", "Other"},
		5: {"Title", "Other", "Six"},
	}
	for i, want := range paths {
		if got := HeadingPath(hs, i); !reflect.DeepEqual(got, want) {
			t.Errorf("HeadingPath(%d) = %q, want %q", i, got, want)
		}
	}
}
