package vault

import (
	"reflect"
	"testing"
)

func TestEmbeds(t *testing.T) {
	body := "# T\n" +
		"![[other]] and ![[folder/b.md#Setup|alias]]\n" +
		"```\n![[in fence]]\n```\n" +
		"`![[in code]]` ![[c#^blk-1]] ![[pic.png]] ![[#Local]] ![[d#A#B]] [[plain link]]\n"
	var got []Embed
	for _, e := range Embeds(body) {
		if body[e.Start:e.Start+3] != "![[" || body[e.End-2:e.End] != "]]" {
			t.Errorf("%+v: offsets do not frame the embed", e)
		}
		e.Start, e.End = 0, 0
		got = append(got, e)
	}
	want := []Embed{
		{Target: "other"},
		{Target: "folder/b", Heading: "Setup"},
		{Target: "c", Block: "blk-1"},
		{Target: "pic.png"},
		{Heading: "Local"},
		{Target: "d", Heading: "A#B"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Embeds = %+v\nwant %+v", got, want)
	}
	for _, c := range []struct {
		target string
		want   bool
	}{{"pic.png", true}, {"doc.PDF", true}, {"note", false}, {"v1.2 notes", false}, {"a.md", false}} {
		if got := (Embed{Target: c.target}).Attachment(); got != c.want {
			t.Errorf("Attachment(%q) = %v, want %v", c.target, got, c.want)
		}
	}
}
