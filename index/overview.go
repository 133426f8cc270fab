package index

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// metaLanguages is the meta key of the vault's notes counted by language
// (vault.Languages, as JSON).
const metaLanguages = "languages"

// Languages counts the vault's notes by language when it was last built
// (vault.FilesLanguages), most notes first; nil for an index that did not
// record it, or a vault without a note long enough to tell.
func (d *DB) Languages() vault.Languages {
	var ls vault.Languages
	if err := json.Unmarshal([]byte(d.meta[metaLanguages]), &ls); err != nil {
		return nil
	}
	return ls
}

// HasLanguages reports whether the index recorded the vault's languages (an
// index built before they were counted did not).
func (d *DB) HasLanguages() bool {
	_, ok := d.meta[metaLanguages]
	return ok
}

// The facets Facets counts notes by.
const (
	FacetType    = "type"
	FacetProject = "project"
	FacetStatus  = "status"
	FacetTopics  = "topics"
	FacetFolders = "folders" // top-level folders, as "name/"
)

// FacetNames are the facets, in the order an overview shows them.
var FacetNames = []string{FacetType, FacetProject, FacetStatus, FacetTopics, FacetFolders}

// Facet is how the notes spread over the values of one field: the values
// with the most notes, how many other values there are, and how many notes
// have none.
type Facet struct {
	Values []FacetValue // most notes first, ties by value
	// More is how many distinct values there are beyond Values.
	More int
	// Without is how many notes have no value: no frontmatter field, no
	// topics, or, for folders, a note at the vault's top level.
	Without int
}

// FacetValue is one value of a facet and the notes that have it.
type FacetValue struct {
	Value string
	Notes int
}

// facetQueries group the notes by each facet's value: value, notes, and the
// number of distinct values (a window over the groups, so one query says how
// many were left out). The frontmatter fields are stored lower-cased
// (writer.go), as the filters compare them; topics are a JSON array, each
// topic counted once per note.
var facetQueries = map[string]string{
	FacetType:    `SELECT type, count(*) AS n, count(*) OVER () FROM notes WHERE type != '' GROUP BY type`,
	FacetProject: `SELECT project, count(*) AS n, count(*) OVER () FROM notes WHERE project != '' GROUP BY project`,
	FacetStatus:  `SELECT status, count(*) AS n, count(*) OVER () FROM notes WHERE status != '' GROUP BY status`,
	FacetTopics:  `SELECT j.value, count(DISTINCT n.id) AS n, count(*) OVER () FROM notes n, json_each(n.topics) j WHERE j.value != '' GROUP BY j.value`,
	// substr and instr both count characters, so the folder keeps its
	// trailing "/" whatever the name is written in.
	FacetFolders: `SELECT substr(path, 1, instr(path, '/')), count(*) AS n, count(*) OVER () FROM notes WHERE instr(path, '/') > 0 GROUP BY 1`,
}

// facetWithout counts the notes without a value of each facet.
const facetWithout = `SELECT coalesce(sum(type = ''), 0), coalesce(sum(project = ''), 0), coalesce(sum(status = ''), 0),
	coalesce(sum(NOT EXISTS (SELECT 1 FROM json_each(topics) WHERE value != '')), 0), coalesce(sum(instr(path, '/') = 0), 0) FROM notes`

// UnknownFacetError is a facet name Facets does not know.
type UnknownFacetError struct{ Name string }

func (e *UnknownFacetError) Error() string {
	return fmt.Sprintf("unknown facet %s (the facets are %s)", vault.QuoteInput(e.Name), strings.Join(FacetNames, ", "))
}

// Facets counts the notes by the values of the named facets (FacetNames;
// nil names all of them), the limit values with the most notes of each. An
// unknown name is an *UnknownFacetError.
func (d *DB) Facets(ctx context.Context, names []string, limit int) (map[string]Facet, error) {
	if names == nil {
		names = FacetNames
	}
	for _, name := range names {
		if _, ok := facetQueries[name]; !ok {
			return nil, &UnknownFacetError{Name: name}
		}
	}
	if limit < 1 {
		return nil, fmt.Errorf("count facets: limit %d is not positive", limit)
	}
	var w [5]int
	if err := d.sql.QueryRowContext(ctx, facetWithout).Scan(&w[0], &w[1], &w[2], &w[3], &w[4]); err != nil {
		return nil, fmt.Errorf("count facets: %w", err)
	}
	without := map[string]int{}
	for i, name := range FacetNames {
		without[name] = w[i]
	}
	out := map[string]Facet{}
	for _, name := range names {
		if _, done := out[name]; done {
			continue
		}
		f, err := d.facet(ctx, name, limit)
		if err != nil {
			return nil, err
		}
		f.Without = without[name]
		out[name] = f
	}
	return out, nil
}

func (d *DB) facet(ctx context.Context, name string, limit int) (Facet, error) {
	f := Facet{Values: []FacetValue{}}
	rows, err := d.sql.QueryContext(ctx, facetQueries[name]+` ORDER BY n DESC, 1 LIMIT ?`, limit)
	if err != nil {
		return f, fmt.Errorf("count notes by %s: %w", name, err)
	}
	defer rows.Close()
	distinct := 0
	for rows.Next() {
		var v FacetValue
		if err := rows.Scan(&v.Value, &v.Notes, &distinct); err != nil {
			return f, fmt.Errorf("count notes by %s: %w", name, err)
		}
		f.Values = append(f.Values, v)
	}
	if err := rows.Err(); err != nil {
		return f, fmt.Errorf("count notes by %s: %w", name, err)
	}
	f.More = distinct - len(f.Values)
	return f, nil
}

// Dates is the span of the notes' dates and where they come from.
type Dates struct {
	From string // YYYY-MM-DD, the earliest; "" without notes
	To   string // YYYY-MM-DD, the latest
	// Sources counts the notes by where their date was read
	// (vault.Note.DateSource: "frontmatter", "filename", "mtime").
	Sources map[string]int
}

// Dates reads the span of the notes' dates, the ones the date filters
// compare.
func (d *DB) Dates(ctx context.Context) (Dates, error) {
	out := Dates{Sources: map[string]int{}}
	rows, err := d.sql.QueryContext(ctx, `SELECT date_source, count(*), min(date), max(date) FROM notes WHERE date != '' GROUP BY date_source`)
	if err != nil {
		return out, fmt.Errorf("read the notes' dates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var src, from, to string
		var n int
		if err := rows.Scan(&src, &n, &from, &to); err != nil {
			return out, fmt.Errorf("read the notes' dates: %w", err)
		}
		out.Sources[src] = n
		if out.From == "" || from < out.From {
			out.From = from
		}
		if to > out.To {
			out.To = to
		}
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("read the notes' dates: %w", err)
	}
	return out, nil
}

// FolderTitles is one folder's notes by title: the vault's own names for its
// subjects, which a caller can borrow for its keywords.
type FolderTitles struct {
	Folder string // vault-relative, ending in "/"; "" for the top level
	Notes  int
	Titles []string // case-insensitive title order
	More   int      // the folder's notes whose titles are not listed
}

// Titles lists the folders in path order, each note counted in the folder it
// is directly in, with the titles of up to perFolder of its notes; at most
// maxFolders folders, more being how many others there are.
func (d *DB) Titles(ctx context.Context, perFolder, maxFolders int) (folders []FolderTitles, more int, err error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT path, title FROM notes`)
	if err != nil {
		return nil, 0, fmt.Errorf("read the notes' titles: %w", err)
	}
	defer rows.Close()
	byFolder := map[string][]string{}
	for rows.Next() {
		var p, title string
		if err := rows.Scan(&p, &title); err != nil {
			return nil, 0, fmt.Errorf("read the notes' titles: %w", err)
		}
		dir := path.Dir(p) + "/"
		if dir == "./" {
			dir = ""
		}
		byFolder[dir] = append(byFolder[dir], title)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read the notes' titles: %w", err)
	}
	names := slices.Sorted(maps.Keys(byFolder))
	more = max(len(names)-maxFolders, 0)
	for _, name := range names[:len(names)-more] {
		titles := byFolder[name]
		slices.SortFunc(titles, func(a, b string) int {
			return cmp.Or(cmp.Compare(strings.ToLower(a), strings.ToLower(b)), cmp.Compare(a, b))
		})
		n := min(perFolder, len(titles))
		folders = append(folders, FolderTitles{Folder: name, Notes: len(titles), Titles: titles[:n:n], More: len(titles) - n})
	}
	return folders, more, nil
}
