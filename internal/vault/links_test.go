package vault

import (
	"reflect"
	"testing"
)

func TestExtractLinks(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []Link
	}{
		{"plain", "see [[a]]", []Link{{Target: "a"}}},
		{"alias", "see [[a|the A note]]", []Link{{Target: "a", Alias: "the A note"}}},
		{"heading", "see [[a#Some Heading]]", []Link{{Target: "a", Heading: "Some Heading"}}},
		{"folder, heading and alias", "[[folder/a#H|alias]]", []Link{{Target: "folder/a", Heading: "H", Alias: "alias"}}},
		{"block reference", "[[a#^block-id]]", []Link{{Target: "a", Heading: "block-id"}}},
		{"heading in the same note", "[[#Local]]", []Link{{Heading: "Local"}}},
		{"embed", "![[diagram]] and ![[pasted.md]]", []Link{{Target: "diagram"}, {Target: "pasted"}}},
		{".md suffix stripped", "[[notes/b.md]] [[c.md#H]] [[d.md|D]]", []Link{{Target: "notes/b"}, {Target: "c", Heading: "H"}, {Target: "d", Alias: "D"}}},
		{"spaces trimmed", "[[  spaced name  |  alias ]]", []Link{{Target: "spaced name", Alias: "alias"}}},
		{"non-ASCII", "[[Über Notes]] [[日本語]]", []Link{{Target: "Über Notes"}, {Target: "日本語"}}},
		{"several on a line, in order", "[[x]] then [[y]] then [[x]]", []Link{{Target: "x"}, {Target: "y"}, {Target: "x"}}},
		{"across lines, in order", "[[one]]\ntext\n[[two]]", []Link{{Target: "one"}, {Target: "two"}}},
		{"empty", "[[]] and [[ ]] and [[|alias]] and [[#]]", nil},
		{"not closed", "[[open and more text", nil},
		{"split over lines", "[[half\nlink]]", nil},
		{"inline code", "use `[[not a link]]` but [[real]]", []Link{{Target: "real"}}},
		{"two inline code spans", "`[[a]]` [[b]] `[[c]]`", []Link{{Target: "b"}}},
		{"backtick fence", "```\n[[in fence]]\n```\n[[after]]", []Link{{Target: "after"}}},
		{"tilde fence", "~~~md\n[[in fence]]\n~~~\n[[after]]", []Link{{Target: "after"}}},
		{"indented fence", "  ```\n  [[in fence]]\n  ```\n[[after]]", []Link{{Target: "after"}}},
		{"unclosed fence hides the rest", "[[before]]\n```\n[[hidden]]", []Link{{Target: "before"}}},
		{"no links", "plain [text](url) and [single] brackets", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExtractLinks(tc.body); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ExtractLinks(%q) = %#v, want %#v", tc.body, got, tc.want)
			}
		})
	}
}
