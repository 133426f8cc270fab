package index

import (
	"fmt"
	"strings"
	"time"
)

// Filter narrows a search or a listing to notes whose metadata match. The zero
// value matches everything. Topics must all be present.
type Filter struct {
	PathPrefix string
	Type       string
	Project    string
	Status     string
	Topics     []string
	DateFrom   string // YYYY-MM-DD, inclusive
	DateTo     string // YYYY-MM-DD, inclusive
}

// Empty reports whether the filter matches everything.
func (f Filter) Empty() bool {
	return f.PathPrefix == "" && f.Type == "" && f.Project == "" && f.Status == "" && len(f.Topics) == 0 && f.DateFrom == "" && f.DateTo == ""
}

// Validate checks the filter's values.
func (f Filter) Validate() error {
	for _, d := range []string{f.DateFrom, f.DateTo} {
		if d != "" {
			if _, err := time.Parse("2006-01-02", d); err != nil {
				return fmt.Errorf("date %q is not YYYY-MM-DD", d)
			}
		}
	}
	return nil
}

// where renders the filter as SQL over the notes table aliased n.
func (f Filter) where() (string, []any) {
	conds := []string{"1"}
	var args []any
	if p := strings.TrimPrefix(f.PathPrefix, "/"); p != "" {
		// Compare bytes: substr on TEXT counts characters, len(p) counts bytes.
		conds = append(conds, "substr(CAST(n.path AS BLOB), 1, ?) = CAST(? AS BLOB)")
		args = append(args, len(p), p)
	}
	for _, c := range []struct{ col, v string }{{"n.type", f.Type}, {"n.project", f.Project}, {"n.status", f.Status}} {
		if c.v != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, strings.ToLower(c.v))
		}
	}
	for _, t := range f.Topics {
		conds = append(conds, "EXISTS (SELECT 1 FROM json_each(n.topics) WHERE value = ?)")
		args = append(args, strings.ToLower(strings.TrimPrefix(t, "#")))
	}
	if f.DateFrom != "" {
		conds = append(conds, "n.date >= ?")
		args = append(args, f.DateFrom)
	}
	if f.DateTo != "" {
		conds = append(conds, "n.date <= ?")
		args = append(args, f.DateTo)
	}
	return strings.Join(conds, " AND "), args
}
