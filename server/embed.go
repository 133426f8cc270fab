package server

import (
	"context"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
)

// embedSource finds and reads the notes a note embeds.
type embedSource interface {
	// resolve names the note a wikilink target names, as the index
	// resolves links; ok is false when none is.
	resolve(target string) (rel string, ok bool)
	load(rel string) (*noteDoc, error)
}

// serverEmbeds resolves embeds through the index and reads their notes from
// the vault, with vault_read's checks.
type serverEmbeds struct {
	s   *Server
	ctx context.Context
	db  *index.DB
}

func (e *serverEmbeds) resolve(target string) (string, bool) {
	rel, ok, err := e.db.ResolveLink(e.ctx, target)
	return rel, ok && err == nil
}

func (e *serverEmbeds) load(rel string) (*noteDoc, error) { return e.s.loadNote(rel) }

// expanded is a span of a note's text with its embeds expanded, and where
// each part of it comes from.
type expanded struct {
	text string
	segs []segment // in order of at
}

// segment is a part of an expanded text: copied from the note (src advances
// with at), or an embed's text (src is the embed's place in the note).
type segment struct {
	at, src int
	copied  bool
}

// source is the offset in the note's text that offset off of the expanded
// text comes from.
func (x *expanded) source(off int) int {
	i := sort.Search(len(x.segs), func(i int) bool { return x.segs[i].at > off }) - 1
	if i < 0 {
		return 0
	}
	if sg := x.segs[i]; sg.copied {
		return sg.src + off - sg.at
	}
	return x.segs[i].src
}

// around is where a page of max bytes showing the note's offset focus
// starts: a few lines before the line it is on.
func (x *expanded) around(focus, max int) int {
	at := 0
	for _, sg := range x.segs {
		if sg.copied && sg.src <= focus {
			at = sg.at + focus - sg.src
		}
	}
	at = min(at, len(x.text))
	start := strings.LastIndexByte(x.text[:at], '\n') + 1
	if at-start > max/3 { // a long line: start within it
		start = at - max/3
		for start > 0 && !utf8.RuneStart(x.text[start]) {
			start--
		}
		return start
	}
	for start > 0 {
		prev := strings.LastIndexByte(x.text[:start-1], '\n') + 1
		if at-prev > max/3 {
			break
		}
		start = prev
	}
	return start
}

// expand is text[start:end] with the embeds in it expanded one level: at
// most maxEmbeds of them, each replaced by its note's text (or section, or
// block) between a line naming its source and a line ending it. An embed of
// this note, of a note src cannot find or read, of an attachment, and any
// embed inside an embedded text stay as written.
func (d *noteDoc) expand(start, end int, src embedSource) expanded {
	var x expanded
	var b strings.Builder
	pos, done := start, 0
	copyTo := func(to int) {
		if to > pos {
			x.segs = append(x.segs, segment{at: b.Len(), src: pos, copied: true})
			b.WriteString(d.text[pos:to])
			pos = to
		}
	}
	if src != nil {
		for _, e := range vault.Embeds(d.n.Body) {
			e.Start += d.bodyStart
			e.End += d.bodyStart
			if e.Start < start || e.End > end || done == maxEmbeds {
				continue
			}
			name, text, ok := d.embedText(e, src)
			if !ok {
				continue
			}
			done++
			copyTo(e.Start)
			x.segs = append(x.segs, segment{at: b.Len(), src: e.Start})
			if e.Start > start && d.text[e.Start-1] != '\n' {
				b.WriteByte('\n')
			}
			b.WriteString("> embedded from " + name + ":\n" + text + "\n> end of embed")
			if e.End < end && d.text[e.End] != '\n' {
				b.WriteByte('\n')
			}
			pos = e.End
		}
	}
	copyTo(end)
	x.text = b.String()
	return x
}

// embedText is the text an embed stands for and the name of its source
// ("other/note.md#Heading"); ok is false when it stays as written.
func (d *noteDoc) embedText(e vault.Embed, src embedSource) (name, text string, ok bool) {
	if e.Target == "" || e.Attachment() {
		return "", "", false
	}
	rel, found := src.resolve(e.Target)
	if !found || rel == d.rel {
		return "", "", false
	}
	t, err := src.load(rel)
	if err != nil {
		return "", "", false
	}
	name = rel
	switch {
	case e.Block != "":
		if text, ok = t.block(e.Block); !ok {
			return "", "", false
		}
		name += "#^" + e.Block
	case e.Heading != "":
		ms := t.matchSection(strings.ReplaceAll(e.Heading, "#", vault.PathSeparator))
		if len(ms) == 0 {
			return "", "", false
		}
		text = t.n.Body[t.hs[ms[0]].Start:t.sectionEnd(ms[0])]
		name += "#" + e.Heading
	default:
		text = strings.Trim(t.n.Body, "\n")
	}
	if len(text) > maxEmbedBytes {
		text = text[:pageEnd(text, 0, maxEmbedBytes)] + "\n… (cut here: vault_read " + rel + " for the rest)"
	}
	return name, strings.TrimRight(text, " \t\n"), true
}

// block is the text of the block a "^id" marks, without the marker: the
// list item or paragraph whose last line ends with " ^id", or the paragraph
// just before a line that is only "^id".
func (d *noteDoc) block(id string) (string, bool) {
	marker := "^" + id
	for l := d.fileLine(d.bodyStart) - 1; l < len(d.lineStarts); l++ {
		line := strings.TrimRight(d.lineText(l), " \t")
		if line != marker && !strings.HasSuffix(line, " "+marker) {
			continue
		}
		if line == marker { // the paragraph above
			if l == 0 || strings.TrimSpace(d.lineText(l-1)) == "" {
				return "", false
			}
			s, e := d.paragraphs(d.lineStarts[l-1], d.lineEnd(l-1))
			return d.text[s:e], true
		}
		if t := strings.TrimLeft(line, " \t"); strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ ") {
			return strings.TrimSuffix(strings.TrimSuffix(line, marker), " "), true
		}
		s, _ := d.paragraphs(d.lineStarts[l], d.lineEnd(l))
		return strings.TrimRight(strings.TrimSuffix(d.text[s:d.lineEnd(l)], marker), " \t"), true
	}
	return "", false
}
