package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/server"
)

// The tools the load calls, as the server names them.
const (
	toolSearch  = server.ToolSearch
	toolRead    = server.ToolRead
	toolList    = server.ToolList
	toolDelta   = server.ToolDelta
	toolReindex = server.ToolReindex
)

// toolOrder is the order tools appear in reports: those of the mix, most
// called first, then the one reindex.
var toolOrder = []string{toolSearch, toolRead, toolList, toolDelta, toolReindex}

// The mix of the load, in percent of the calls other than the one reindex;
// vault_delta takes the rest.
const (
	searchPct = 50
	readPct   = 20
	listPct   = 20
)

// step is one planned tool call and how to judge its answer.
type step struct {
	Tool    string
	Args    map[string]any
	Reindex bool // the mid-run reindex: append the marker line first
	// check judges the result's JSON text; an error counts as a failed call.
	check func(text string) error
}

// note is one note of the vault as the server lists it, with what reading
// it gave.
type note struct {
	server.ListNote
	Headings []string // its outline, as vault_read gives it
	Excerpts []string // paragraphs of its body, for vault_delta items
}

// catalog is what the plan draws from: the vault's notes (from vault_list and
// vault_read) and the labelled queries.
type catalog struct {
	Notes   []note
	Queries []string
}

// loadQueries reads the query texts of eval/queries.json.
func loadQueries(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the queries: %w", err)
	}
	var f struct {
		Queries []struct {
			Text string `json:"text"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	var out []string
	for _, q := range f.Queries {
		if t := strings.TrimSpace(q.Text); t != "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no queries", path)
	}
	return out, nil
}

// excerpts picks the prose paragraphs of a note body (no headings, lists,
// tables or code), at most max of them, each cut to 600 bytes on a word.
func excerpts(body string, max int) []string {
	var out []string
	inFence := false
	for _, para := range strings.Split(body, "\n\n") {
		para = strings.TrimSpace(para)
		if strings.Count(para, "```")%2 == 1 {
			inFence = !inFence
			continue
		}
		if inFence || len(para) < 80 || strings.ContainsAny(para[:1], "#|-*>`0123456789") {
			continue
		}
		if len(para) > 600 {
			cut := strings.LastIndexByte(para[:600], ' ')
			if cut < 200 {
				cut = 600
			}
			para = para[:cut]
		}
		out = append(out, strings.Join(strings.Fields(para), " "))
		if len(out) == max {
			break
		}
	}
	return out
}

// novel are candidate items no note of the demo vault covers.
var novel = []string{
	"The office espresso machine needs descaling every second Friday.",
	"Penguins huddle together in winter to share body heat.",
	"The quarterly budget review moved to the first Monday of the month.",
	"A haiku has three lines of five, seven and five syllables.",
	"Our team offsite will be in Lisbon, with a boat trip on the second day.",
	"Tomato plants need staking once they reach knee height.",
	"Идемпотентность означает, что повторный вызов не меняет результат.",
}

// buildPlan lays out n calls: the one vault_reindex at index reindexAt, the
// rest a shuffled, exact mix of searches, reads, lists and deltas drawn from
// cat with a PCG seeded by seed, so a seed always gives the same calls.
func buildPlan(cat catalog, n, reindexAt int, seed uint64) ([]step, error) {
	if len(cat.Notes) == 0 || len(cat.Queries) == 0 {
		return nil, errors.New("plan: the catalog is empty")
	}
	if reindexAt < 0 || reindexAt >= n {
		return nil, fmt.Errorf("plan: reindex at %d of %d calls", reindexAt, n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x7661756c74726167)) // "vaultrag"
	rest := n - 1
	kinds := make([]string, 0, rest)
	for _, k := range []struct {
		tool  string
		count int
	}{
		{toolSearch, rest * searchPct / 100},
		{toolRead, rest * readPct / 100},
		{toolList, rest * listPct / 100},
	} {
		for range k.count {
			kinds = append(kinds, k.tool)
		}
	}
	for len(kinds) < rest {
		kinds = append(kinds, toolDelta)
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })

	g := generator{cat: cat, rng: rng}
	out := make([]step, 0, n)
	for i := range n {
		if i == reindexAt {
			out = append(out, step{Tool: toolReindex, Args: map[string]any{}, Reindex: true})
			continue
		}
		var s step
		switch kinds[0] {
		case toolSearch:
			s = g.search()
		case toolRead:
			s = g.read()
		case toolList:
			s = g.list()
		default:
			s = g.delta()
		}
		kinds = kinds[1:]
		out = append(out, s)
	}
	return out, nil
}

// generator draws the arguments of one call.
type generator struct {
	cat catalog
	rng *rand.Rand
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

func (g generator) note() note { return pick(g.rng, g.cat.Notes) }

// filter draws one metadata filter (or a pair) that some note satisfies, as
// vault_search and vault_list take it.
func (g generator) filter() map[string]any {
	n := g.note()
	f := map[string]any{}
	switch g.rng.IntN(7) {
	case 0: // a folder
		if i := strings.LastIndexByte(n.Path, '/'); i > 0 {
			f["path"] = n.Path[:i+1]
		}
	case 1: // a top-level folder
		if i := strings.IndexByte(n.Path, '/'); i > 0 {
			f["path"] = n.Path[:i+1]
		}
	case 2:
		if n.Type != "" {
			f["type"] = n.Type
		}
	case 3:
		if n.Project != "" {
			f["project"] = n.Project
		}
		if n.Status != "" {
			f["status"] = n.Status
		}
	case 4:
		if len(n.Topics) > 0 {
			f["topics"] = []any{pick(g.rng, n.Topics)}
		}
	case 5: // the note's month
		if d, err := time.Parse(time.DateOnly, n.Date); err == nil {
			first := d.AddDate(0, 0, 1-d.Day())
			f["date_from"] = first.Format(time.DateOnly)
			f["date_to"] = first.AddDate(0, 1, -1).Format(time.DateOnly)
		}
	default: // from the note's date on, within its type
		if len(n.Date) == 10 {
			f["date_from"] = n.Date
		}
		if n.Type != "" {
			f["type"] = n.Type
		}
	}
	return f
}

func (g generator) search() step {
	args := map[string]any{"query": pick(g.rng, g.cat.Queries)}
	k := pick(g.rng, []int{3, 5, 10, 10, 20})
	args["k"] = k
	var filter map[string]any
	if g.rng.IntN(2) == 0 {
		filter = g.filter()
		for key, v := range filter {
			args[key] = v
		}
	}
	var config string
	switch r := g.rng.IntN(20); {
	case r == 0:
		config = "keyword"
	case r == 1:
		config = "hybrid"
	case r == 2:
		args["explain"] = true
	case r == 3:
		args["now"] = "2026-03-01"
	}
	if config != "" {
		args["config"] = config
	}
	return step{Tool: toolSearch, Args: args, check: func(text string) error {
		var res server.SearchResult
		if err := decode(text, &res); err != nil {
			return err
		}
		// Stages are in the answer with explain only.
		if res.Notes == nil || (args["explain"] == true) != (res.Stages != nil) {
			return fmt.Errorf("search result lacks notes, or has stages without explain or none with it: %.200s", text)
		}
		if config != "" && res.Config != config {
			return fmt.Errorf("search ran configuration %q, asked for %q", res.Config, config)
		}
		if len(res.Notes) > k {
			return fmt.Errorf("search returned %d notes for k=%d", len(res.Notes), k)
		}
		for i, n := range res.Notes {
			switch {
			case n.Rank != i+1:
				return fmt.Errorf("search result %d has rank %d", i, n.Rank)
			case len(n.Passages) == 0 && i < pipeline.PassageNotes:
				// Past the first PassageNotes notes a passage is shown only
				// when it holds a word of the query.
				return fmt.Errorf("search result %d (%s) has no passage", i, n.Path)
			case filter["path"] != nil && !strings.HasPrefix(n.Path, filter["path"].(string)):
				return fmt.Errorf("search with path %q returned %s", filter["path"], n.Path)
			case filter["type"] != nil && n.Type != filter["type"]:
				return fmt.Errorf("search with type %q returned %s of type %q", filter["type"], n.Path, n.Type)
			case filter["project"] != nil && n.Project != filter["project"]:
				return fmt.Errorf("search with project %q returned %s of project %q", filter["project"], n.Path, n.Project)
			}
		}
		return nil
	}}
}

func (g generator) read() step {
	n := g.note()
	args := map[string]any{"path": n.Path}
	section := ""
	if len(n.Headings) > 0 && g.rng.IntN(2) == 0 {
		section = pick(g.rng, n.Headings) // an outline entry: "## Heading" or "### Parent › Heading"
		if g.rng.IntN(4) == 0 {
			section = strings.ToLower(strings.TrimLeft(section, "# ")) // the forms the tool accepts
		}
		args["section"] = section
	}
	return step{Tool: toolRead, Args: args, check: func(text string) error {
		var res server.ReadResult
		if err := decode(text, &res); err != nil {
			return err
		}
		want := strings.ToLower(strings.TrimLeft(section, "# "))
		switch {
		case res.Path != n.Path:
			return fmt.Errorf("read %s returned %s", n.Path, res.Path)
		case res.Content == "":
			return fmt.Errorf("read %s returned no content", n.Path)
		case section != "" && !strings.HasSuffix(strings.ToLower(res.Section), want):
			return fmt.Errorf("read %s section %q returned section %q", n.Path, section, res.Section)
		case !slices.Equal(res.Headings, n.Headings):
			return fmt.Errorf("read %s: headings %q, earlier %q", n.Path, res.Headings, n.Headings)
		}
		return nil
	}}
}

func (g generator) list() step {
	args := map[string]any{}
	var filter map[string]any
	if g.rng.IntN(3) > 0 {
		filter = g.filter()
		for key, v := range filter {
			args[key] = v
		}
	}
	limit := pick(g.rng, []int{5, 10, 50, 200})
	offset := 0
	if limit < 50 {
		offset = limit * g.rng.IntN(4)
	}
	args["limit"], args["offset"] = limit, offset
	total := len(g.cat.Notes)
	return step{Tool: toolList, Args: args, check: func(text string) error {
		var res server.ListResult
		if err := decode(text, &res); err != nil {
			return err
		}
		switch {
		case res.Notes == nil:
			return fmt.Errorf("list result lacks notes: %.200s", text)
		case res.Offset != offset || res.Limit != limit:
			return fmt.Errorf("list echoed offset %d limit %d, asked %d and %d", res.Offset, res.Limit, offset, limit)
		case len(res.Notes) > limit:
			return fmt.Errorf("list returned %d notes for limit %d", len(res.Notes), limit)
		case len(filter) == 0 && res.Total != total:
			return fmt.Errorf("unfiltered list counts %d notes, the vault has %d", res.Total, total)
		case len(res.Notes) != max(0, min(limit, res.Total-offset)):
			return fmt.Errorf("list returned %d notes at offset %d of %d (limit %d)", len(res.Notes), offset, res.Total, limit)
		case (res.NextOffset != nil) != (offset+limit < res.Total):
			return fmt.Errorf("list next_offset %v at offset %d limit %d of %d", res.NextOffset, offset, limit, res.Total)
		case !slices.IsSortedFunc(res.Notes, func(a, b server.ListNote) int { return strings.Compare(a.Path, b.Path) }):
			return errors.New("list is not in path order")
		}
		for _, n := range res.Notes {
			if p, ok := filter["path"].(string); ok && !strings.HasPrefix(n.Path, p) {
				return fmt.Errorf("list with path %q returned %s", p, n.Path)
			}
			if t, ok := filter["type"].(string); ok && n.Type != t {
				return fmt.Errorf("list with type %q returned %s of type %q", t, n.Path, n.Type)
			}
		}
		return nil
	}}
}

func (g generator) delta() step {
	count := 1 + g.rng.IntN(5)
	items := make([]any, 0, count)
	for range count {
		n := g.note()
		if len(n.Excerpts) == 0 || g.rng.IntN(3) == 0 {
			items = append(items, map[string]any{"text": pick(g.rng, novel)})
			continue
		}
		it := map[string]any{"text": pick(g.rng, n.Excerpts)}
		if g.rng.IntN(2) == 0 {
			it["title"] = n.Title
		}
		items = append(items, it)
	}
	return step{Tool: toolDelta, Args: map[string]any{"items": items}, check: func(text string) error {
		var res server.DeltaResult
		if err := decode(text, &res); err != nil {
			return err
		}
		if len(res.Items) != count {
			return fmt.Errorf("delta judged %d items of %d", len(res.Items), count)
		}
		for i, it := range res.Items {
			if it.Index != i || (it.Status != server.StatusCovered && it.Status != server.StatusNew && it.Status != server.StatusLanguage) {
				return fmt.Errorf("delta item %d: index %d, status %q", i, it.Index, it.Status)
			}
		}
		return nil
	}}
}

// checkReindex judges the mid-run reindex: an incremental build that saw the
// one note changed.
func checkReindex(text string) (BuildSummary, error) {
	var res server.ReindexResult
	if err := decode(text, &res); err != nil {
		return BuildSummary{}, err
	}
	b := BuildSummary{Run: res.Run, BuildCounts: res.BuildCounts, TookMS: res.TookMS}
	if b.Changed < 1 || b.Added != 0 || b.Removed != 0 {
		return b, fmt.Errorf("reindex after changing one note reports changed %d, added %d, removed %d", b.Changed, b.Added, b.Removed)
	}
	return b, nil
}

// decode unmarshals a tool result's JSON text.
func decode(text string, v any) error {
	if err := json.Unmarshal([]byte(text), v); err != nil {
		return fmt.Errorf("result is not the JSON expected (%v): %.200s", err, text)
	}
	return nil
}
