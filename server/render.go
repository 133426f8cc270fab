package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// A tool's answer goes out twice (MCP 2025-06-18): typed, as
// structuredContent that the tool's outputSchema describes, for programs; and
// as text, which is what a client puts before the model. The text is written
// for that reader: what the JSON says in fewer bytes (no field names, no
// quoting, no HTML escaping), in the order it is read. An answer type that
// implements texter writes its own text; any other is its JSON.
type texter interface {
	Text() string
}

// answerText is the text content of a tool's answer.
func answerText(out any) (string, error) {
	if t, ok := out.(texter); ok {
		return t.Text(), nil
	}
	return jsonText(out)
}

// jsonText is v as compact JSON without HTML escaping: a note's "<", ">" and
// "&" stay one byte each instead of six ("\u003c").
func jsonText(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// outputSchema is a tool's outputSchema: its answer type's fields that are
// always written (no omitempty), with their JSON types, as required. The
// others are left to the documentation (docs/mcp.md, testdata/wire), since
// every byte of tools/list is paid by every conversation.
func outputSchema(t reflect.Type) json.RawMessage {
	type prop struct {
		name, typ string
	}
	var props []prop
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type)
				continue
			}
			if !f.IsExported() || name == "-" || name == "" || strings.Contains(opts, "omitempty") {
				continue
			}
			props = append(props, prop{name, schemaType(f.Type)})
		}
	}
	walk(t)
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `%q:{"type":%s}`, p.name, p.typ)
	}
	b.WriteString(`},"required":[`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(p.name))
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// schemaType is the JSON Schema type encoding/json writes t as; a slice, map
// or pointer written without omitempty may be null.
func schemaType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return `"boolean"`
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return `"integer"`
	case reflect.Float32, reflect.Float64:
		return `"number"`
	case reflect.String:
		return `"string"`
	case reflect.Slice, reflect.Array:
		return `["array","null"]`
	case reflect.Map:
		return `["object","null"]`
	case reflect.Pointer:
		return `["object","null"]`
	}
	return `"object"`
}

// Text is vault_search's answer for the model: one block per note, its
// rank, path, title and stated date, then each passage under its heading
// path ("…" where the section goes on); then the related notes; the rare
// fields (scope, degraded stages, vectors still being built, waits) first,
// as JSON. With explain the whole answer is its JSON.
func (r SearchResult) Text() string {
	if len(r.Stages) > 0 {
		s, err := jsonText(r)
		if err != nil {
			return err.Error()
		}
		return s
	}
	var b strings.Builder
	if r.Scope != nil || len(r.Degraded) > 0 || r.Vectors != nil || r.WaitedMS != 0 || r.Building != nil {
		// The rare fields, as the JSON writes them.
		if s, err := jsonText(struct {
			Scope    *ScopeInfo   `json:"scope,omitempty"`
			Degraded []string     `json:"degraded,omitempty"`
			Vectors  *Coverage    `json:"vectors,omitempty"`
			WaitedMS int64        `json:"waited_for_first_index_ms,omitempty"`
			Building *BuildHolder `json:"other_process_building,omitempty"`
		}{r.Scope, r.Degraded, r.Vectors, r.WaitedMS, r.Building}); err == nil {
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	if len(r.Notes) == 0 {
		b.WriteString("No note found.")
		return b.String()
	}
	for i, n := range r.Notes {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d. ", n.Rank)
		noteHead(&b, n.Path, n.Title, n.Date)
		b.WriteString("\n")
		for _, p := range n.Passages {
			if p.Heading != "" {
				fmt.Fprintf(&b, "§ %s\n", p.Heading)
			}
			b.WriteString(strings.TrimSpace(p.Text))
			if p.More {
				b.WriteString(" …")
			}
			b.WriteString("\n")
		}
		for _, l := range n.Related {
			arrow := "→"
			if l.Direction != "links to" {
				arrow = "←"
			}
			fmt.Fprintf(&b, "%s %s", arrow, l.Path)
			if l.Heading != "" {
				fmt.Fprintf(&b, " § %s", l.Heading)
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// noteHead writes a note's path, its title when the path does not already
// say it (titleInPath), and the date it states.
func noteHead(b *strings.Builder, path, title, date string) {
	b.WriteString(path)
	if t := strings.TrimSpace(title); t != "" && !titleInPath(t, path) {
		fmt.Fprintf(b, " — %s", t)
	}
	if date != "" {
		fmt.Fprintf(b, " (%s)", date)
	}
}

// titleInPath reports whether the text should leave a note's title out, the
// path being always shown: when it says nothing the file name does not
// ("Install guide" for "docs/install-guide.md"), or when it shares no word
// with the file name, as a title taken from a heading that names a part of
// the note does ("Robustness" for "zfs_storage_planning.md").
func titleInPath(title, path string) bool {
	base := path[strings.LastIndex(path, "/")+1:]
	base = strings.TrimSuffix(base, ".md")
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	tw, bw := words(title), words(base)
	if strings.Join(tw, "") == strings.Join(bw, "") {
		return true
	}
	for _, w := range tw {
		if slices.Contains(bw, w) {
			return false
		}
	}
	return true
}

// Text is vault_read's answer for the model: the path and title, the part
// read and its file lines, the outline on a first page, the text, and where
// more continues.
func (r ReadResult) Text() string {
	var b strings.Builder
	noteHead(&b, r.Path, r.Title, r.Date)
	b.WriteString("\n")
	if r.Section != "" {
		fmt.Fprintf(&b, "§ %s\n", r.Section)
	}
	if r.Lines != "" {
		fmt.Fprintf(&b, "lines %s\n", r.Lines)
	}
	if len(r.OtherMatches) > 0 {
		fmt.Fprintf(&b, "also matches: %s\n", strings.Join(r.OtherMatches, " | "))
	}
	if len(r.Headings) > 0 {
		fmt.Fprintf(&b, "headings: %s", strings.Join(r.Headings, " | "))
		if r.HeadingsMore > 0 {
			fmt.Fprintf(&b, " (+%d)", r.HeadingsMore)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	b.WriteString(r.Content)
	if r.NextOffset != nil {
		fmt.Fprintf(&b, "\n\n[more: offset %d of %d bytes]", *r.NextOffset, r.TotalBytes)
	}
	return b.String()
}

// Text is vault_grep's answer for the model, as rg prints it: the counts,
// what was cut, then each note's path and its lines, number first, with
// the heading path the line sits under.
func (r GrepResult) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d matching lines in %d notes (%d searched)", r.Matches, r.Notes, r.Searched)
	if !r.Complete {
		b.WriteString(", search stopped early")
	}
	if r.Unreadable > 0 {
		fmt.Fprintf(&b, ", %d unreadable", r.Unreadable)
	}
	b.WriteString("\n")
	if r.Note != "" {
		b.WriteString(r.Note)
		b.WriteString("\n")
	}
	if r.WaitedMS > 0 {
		fmt.Fprintf(&b, "waited %d ms for the first index\n", r.WaitedMS)
	}
	for _, n := range r.Results {
		b.WriteString(n.Path)
		if len(n.Lines) == 0 || n.Matches > len(n.Lines) {
			fmt.Fprintf(&b, " (%d)", n.Matches)
		}
		if n.Date != "" {
			fmt.Fprintf(&b, " %s", n.Date)
		}
		b.WriteString("\n")
		heading := ""
		for _, l := range n.Lines {
			if l.Heading != heading && l.Heading != "" {
				fmt.Fprintf(&b, "§ %s\n", l.Heading)
			}
			heading = l.Heading
			fmt.Fprintf(&b, "%d:%s\n", l.Line, l.Text)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Text is vault_list's answer for the model: the page's range and the
// total, then one line per note.
func (r ListResult) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d notes", r.Total)
	if len(r.Notes) > 0 && len(r.Notes) < r.Total {
		fmt.Fprintf(&b, ", %d-%d listed", r.Offset+1, r.Offset+len(r.Notes))
	}
	if r.NextOffset != nil {
		fmt.Fprintf(&b, ", next_offset %d", *r.NextOffset)
	}
	if r.WaitedMS > 0 {
		fmt.Fprintf(&b, " (waited %d ms for the first index)", r.WaitedMS)
	}
	b.WriteString("\n")
	for _, n := range r.Notes {
		noteHead(&b, n.Path, n.Title, n.Date)
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
