//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Query is one question of a dataset's queries.json.
type Query struct {
	ID       string         `json:"id"`
	Kind     string         `json:"kind"`
	Text     string         `json:"text"`
	Relevant map[string]int `json:"relevant"` // vault-relative path → grade (3, 2, 1)
}

// Dataset is a folder with queries.json and vault/.
type Dataset struct {
	Dir     string
	Name    string
	Queries []Query
	byID    map[string]*Query
}

func loadDataset(dir string) (*Dataset, error) {
	b, err := os.ReadFile(filepath.Join(dir, "queries.json"))
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", dir, err)
	}
	var f struct {
		Queries []Query `json:"queries"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("dataset %s: queries.json: %w", dir, err)
	}
	if len(f.Queries) == 0 {
		return nil, fmt.Errorf("dataset %s: queries.json has no queries", dir)
	}
	abs, _ := filepath.Abs(dir)
	d := &Dataset{Dir: abs, Name: filepath.Base(abs), Queries: f.Queries, byID: map[string]*Query{}}
	for i := range d.Queries {
		q := &d.Queries[i]
		if _, dup := d.byID[q.ID]; dup {
			return nil, fmt.Errorf("dataset %s: query id %s twice", dir, q.ID)
		}
		d.byID[q.ID] = q
	}
	return d, nil
}

func (d *Dataset) Query(id string) (*Query, bool) {
	q, ok := d.byID[id]
	return q, ok
}

// pick resolves a list of ids, in the order given, refusing unknown ones
// and repeats.
func (d *Dataset) pick(ids []string) ([]*Query, error) {
	var out []*Query
	seen := map[string]bool{}
	for _, id := range ids {
		q, ok := d.byID[id]
		if !ok {
			return nil, fmt.Errorf("dataset %s has no question %q", d.Name, id)
		}
		if seen[id] {
			return nil, fmt.Errorf("question %s named twice", id)
		}
		seen[id] = true
		out = append(out, q)
	}
	return out, nil
}

// kinds are the dataset's question kinds, sorted.
func (d *Dataset) kinds() []string {
	set := map[string]bool{}
	for _, q := range d.Queries {
		set[q.Kind] = true
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cleanPath is a cited path as compared with the judgements: surrounding
// space and any leading "./" removed, nothing else.
func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p
}
