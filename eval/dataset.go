// Package eval is the core of evaluation: it opens datasets (OpenDataset:
// the demo vault's queries.json, a vault dataset folder, any BEIR-layout
// collection, each kind registered by its own file) and their client
// expansions, indexes them (EnsureIndex), runs configurations over their
// queries (Run) and scores the rankings (the metrics). Whatever only needs a
// dataset, such as bench, imports this package alone. The regression gate is
// eval/gate, the reports and charts eval/report, sweeps and cross-validation
// eval/sweep; none of them is imported here, so neither is the plotting
// library.
package eval

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Query is one labelled query.
type Query struct {
	ID   string `json:"id"`
	Kind string `json:"kind,omitempty"` // e.g. demo: "vocabulary" or "paraphrase"; tables split by it
	Text string `json:"text"`
	// Relevant maps a note's vault-relative path to its grade (> 0).
	Relevant map[string]int `json:"relevant"`
}

// Dataset is a vault with labelled queries.
type Dataset struct {
	Name      string
	VaultPath string // the notes to index
	Queries   []Query
	Graded    bool   // judgements use more than one grade
	Source    string // where it was read from
	// Vault says the dataset is a vault of notes (the demo, a vault dataset
	// folder) rather than a classic collection (BEIR): vaults decide which
	// setting wins, collections only guard (Selection).
	Vault bool
	Hash  string // sha256 of the source files: the index is rebuilt when it changes
	// Expansions are the client's keywords and hypothetical answer per query
	// id (nil: the dataset has none); ExpansionsSource is the file they came
	// from.
	Expansions       map[string]Expansion
	ExpansionsSource string
	// ExpansionSets are further sets of expansions (--expansions-variant),
	// each run as a variant of its own beside the built-in ones.
	ExpansionSets []ExpansionSet
	// Answers are the passage-level judgements (nil: none), from
	// root/eval/answers/<name>.json.
	Answers Answers
}

func graded(qs []Query) bool {
	seen := map[int]bool{}
	for _, q := range qs {
		for _, g := range q.Relevant {
			seen[g] = true
		}
	}
	return len(seen) > 1
}

// DatasetKind is one kind of dataset a --dataset flag can name. Each kind's
// file registers it from an init function (registerKind), as the stages do,
// so adding a kind is adding a file.
type DatasetKind struct {
	// Name names the kind in messages: "demo", "vault", "BEIR".
	Name string
	// Describe says how a spec names a dataset of this kind, for the
	// --dataset flag's help and the error when a spec names none.
	Describe string
	// Claims says whether spec names a dataset of this kind. It only looks
	// (at the name, at which files a folder holds) and never reads a
	// dataset, so that every kind can be asked; no two kinds may claim one
	// spec.
	Claims func(spec string, o OpenOptions) bool
	// Open reads the dataset spec names. dir is the folder whose client.json
	// holds the dataset's own client expansions ("": it has none).
	Open func(spec string, o OpenOptions) (ds *Dataset, dir string, err error)
}

// OpenOptions are what opening a dataset needs besides its spec.
type OpenOptions struct {
	// Root is the folder holding eval/queries.json and vault/ (the demo).
	Root string
	// WorkDir is where a dataset that must be converted into notes (BEIR)
	// is written, in a folder of its name: data/eval, where its index is
	// kept too (IndexPath).
	WorkDir string
	// Expansions is a folder of client expansion files, <dataset>.json
	// each, read for a dataset without its own client.json ("": none).
	Expansions string
}

// kinds are the registered dataset kinds by name; written only while the
// package initialises.
var kinds = map[string]DatasetKind{}

// registerKind adds a dataset kind. A name registered twice is a
// programming error.
func registerKind(k DatasetKind) {
	if _, dup := kinds[k.Name]; dup {
		panic("eval: dataset kind " + k.Name + " registered twice")
	}
	kinds[k.Name] = k
}

// DatasetKinds are the registered kinds, sorted by name.
func DatasetKinds() []DatasetKind {
	out := make([]DatasetKind, 0, len(kinds))
	for _, name := range slices.Sorted(maps.Keys(kinds)) {
		out = append(out, kinds[name])
	}
	return out
}

// OpenDataset opens the dataset spec names (a --dataset value: "demo", or a
// folder of one of the registered kinds) with its client expansions when it
// has any: its folder's client.json, else o.Expansions/<name>.json.
func OpenDataset(spec string, o OpenOptions) (*Dataset, error) {
	var claimed []DatasetKind
	for _, k := range DatasetKinds() {
		if k.Claims(spec, o) {
			claimed = append(claimed, k)
		}
	}
	switch len(claimed) {
	case 0:
		descs := make([]string, 0, len(kinds))
		for _, k := range DatasetKinds() {
			descs = append(descs, k.Describe)
		}
		return nil, fmt.Errorf("dataset %q is none of these: %s", spec, strings.Join(descs, "; "))
	case 1:
	default:
		return nil, fmt.Errorf("dataset %q is both a %s and a %s dataset: move one of them out of the folder", spec, claimed[0].Name, claimed[1].Name)
	}
	ds, dir, err := claimed[0].Open(spec, o)
	if err != nil {
		return nil, err
	}
	if p := FindExpansions(ds, dir, o.Expansions); p != "" {
		if ds.Expansions, err = LoadExpansions(p, ds); err != nil {
			return nil, err
		}
		ds.ExpansionsSource = p
	}
	if ds.Answers, err = LoadAnswers(AnswersPath(o.Root, ds.Name), ds); err != nil {
		return nil, err
	}
	return ds, nil
}

// isDir says whether p is a folder.
func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// workFolder is where a dataset read from dir is converted under the work
// folder: a folder of the dataset's name.
func workFolder(o OpenOptions, dir string) string {
	return filepath.Join(o.WorkDir, filepath.Base(filepath.Clean(dir)))
}
