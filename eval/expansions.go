package eval

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// Expansion is what the client (a language model that never saw the notes)
// sends beside a question: a keyword query and a hypothetical answer.
type Expansion struct {
	Keywords string `json:"keywords"`
	Answer   string `json:"hypothetical_answer"`
}

// expansionsFile is ../shared/client-expansions/<dataset>.json, or
// client.json inside a vault dataset's folder.
type expansionsFile struct {
	Description string               `json:"description"`
	Queries     map[string]Expansion `json:"queries"`
}

// ClientFile is the name of a vault dataset's own expansions file.
const ClientFile = "client.json"

// Variants of a query's expansions the harness runs a configuration that
// reads them with (stages.ExpansionReader). The plain run, without any, is
// the configuration's own row.
const (
	// VariantClient sends the dataset's client expansions.
	VariantClient = "client"
	// VariantEcho has the client repeat the question as its keywords and as
	// its answer: a lazy client, which must cost nothing.
	VariantEcho = "echo"
	// VariantMismatched gives each query another query's expansions (a
	// seeded shuffle with no query keeping its own): a client that
	// misunderstood, and what trusting it costs.
	VariantMismatched = "mismatched"
)

// Variants are the expansion variants in the order rows are shown.
var Variants = []string{VariantClient, VariantEcho, VariantMismatched}

// VariantName is the row name of a configuration run with a variant:
// "shipping +client".
func VariantName(config, variant string) string {
	if variant == "" {
		return config
	}
	return config + " +" + variant
}

// ExpansionSet is a further set of client expansions a dataset is scored
// with beside its own (Dataset.Expansions): what another client, or the same
// client told more about the vault, would send. Its rows are named with
// VariantName(config, Name).
type ExpansionSet struct {
	Name    string // the variant, e.g. "vault-language"
	Source  string // the file it was read from
	Queries map[string]Expansion
}

// ExpansionDir is a folder of further client expansions, <dataset>.json
// each, scored as the variant Name (--expansions-variant NAME=DIR).
type ExpansionDir struct {
	Name, Dir string
}

// ExpansionDirs are the folders of further expansion sets, in the order
// given; as a flag.Value each value is NAME=DIR (ParseExpansionDir) and a
// name may be given once.
type ExpansionDirs []ExpansionDir

// String implements flag.Value.
func (d *ExpansionDirs) String() string {
	if d == nil {
		return ""
	}
	parts := make([]string, len(*d))
	for i, e := range *d {
		parts[i] = e.Name + "=" + e.Dir
	}
	return strings.Join(parts, ",")
}

// Set implements flag.Value.
func (d *ExpansionDirs) Set(v string) error {
	e, err := ParseExpansionDir(v)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(*d, func(o ExpansionDir) bool { return o.Name == e.Name }) {
		return fmt.Errorf("expansion set %q is given twice", e.Name)
	}
	*d = append(*d, e)
	return nil
}

// variantName is what a further set may be called: its name ends a row's
// name ("shipping +vault-language") and a report's file names, and " +" is
// what separates a configuration from its variant.
var variantName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ParseExpansionDir reads NAME=DIR: NAME is lower-case letters, digits and
// hyphens and not a built-in variant's (Variants), whose rows it would take;
// DIR is an existing folder.
func ParseExpansionDir(v string) (ExpansionDir, error) {
	name, dir, ok := strings.Cut(v, "=")
	if !ok || name == "" || dir == "" {
		return ExpansionDir{}, fmt.Errorf("read expansion set %q: want NAME=DIR, e.g. vault-language=../shared/client-expansions/vault-language", v)
	}
	if !variantName.MatchString(name) {
		return ExpansionDir{}, fmt.Errorf("read expansion set %q: the name %q must be lower-case letters, digits and single hyphens", v, name)
	}
	if slices.Contains(Variants, name) {
		return ExpansionDir{}, fmt.Errorf("read expansion set %q: %q is a built-in variant (%s); choose another name", v, name, strings.Join(Variants, ", "))
	}
	st, err := os.Stat(dir)
	if err != nil {
		return ExpansionDir{}, fmt.Errorf("read expansion set %s: %w", name, err)
	}
	if !st.IsDir() {
		return ExpansionDir{}, fmt.Errorf("read expansion set %s: %s is not a folder of <dataset>.json files", name, dir)
	}
	return ExpansionDir{Name: name, Dir: dir}, nil
}

// LoadExpansionSets adds to ds the set of each folder that holds a file for
// it (DIR/<dataset>.json), checked as LoadExpansions checks one; a folder
// without one adds nothing, so only the datasets a set was written for get
// its rows.
func LoadExpansionSets(ds *Dataset, dirs []ExpansionDir) error {
	for _, d := range dirs {
		p := filepath.Join(d.Dir, ds.Name+".json")
		if !fileExists(p) {
			continue
		}
		x, err := LoadExpansions(p, ds)
		if err != nil {
			return fmt.Errorf("expansion set %s: %w", d.Name, err)
		}
		ds.ExpansionSets = append(ds.ExpansionSets, ExpansionSet{Name: d.Name, Source: p, Queries: x})
	}
	return nil
}

// variants are the rows a configuration that reads the client's texts runs
// on ds: the plain run, the built-in variants when the dataset has its own
// expansions, then one per further set.
func (ds *Dataset) variants() []string {
	out := []string{""}
	if ds.Expansions != nil {
		out = append(out, Variants...)
	}
	for _, s := range ds.ExpansionSets {
		out = append(out, s.Name)
	}
	return out
}

// LoadExpansions reads an expansions file and checks it against the
// dataset's queries: every query needs one, and each text must pass the
// same checks as a query's.
func LoadExpansions(path string, ds *Dataset) (map[string]Expansion, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read client expansions: %w", err)
	}
	var f expansionsFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, q := range ds.Queries {
		e, ok := f.Queries[q.ID]
		if !ok {
			return nil, fmt.Errorf("%s: no expansion for query %s", path, q.ID)
		}
		for _, t := range []string{e.Keywords, e.Answer} {
			if len(t) > pipeline.MaxQueryBytes || !utf8.ValidString(t) {
				return nil, fmt.Errorf("%s: query %s: an expansion is over %d bytes or not UTF-8", path, q.ID, pipeline.MaxQueryBytes)
			}
		}
	}
	return f.Queries, nil
}

// FindExpansions locates a dataset's client expansions: client.json in a
// vault dataset's folder, else dir/<name>.json when dir is set. "" when
// there are none.
func FindExpansions(ds *Dataset, datasetDir, dir string) string {
	if datasetDir != "" {
		if p := filepath.Join(datasetDir, ClientFile); fileExists(p) {
			return p
		}
	}
	if dir != "" {
		if p := filepath.Join(dir, ds.Name+".json"); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// expansionFor is what query i of the dataset sends under a variant.
func expansionFor(ds *Dataset, variant string, i int, shuffled []int) Expansion {
	q := ds.Queries[i]
	switch variant {
	case VariantClient:
		return ds.Expansions[q.ID]
	case VariantEcho:
		return Expansion{Keywords: q.Text, Answer: q.Text}
	case VariantMismatched:
		return ds.Expansions[ds.Queries[shuffled[i]].ID]
	}
	for _, s := range ds.ExpansionSets {
		if s.Name == variant {
			return s.Queries[q.ID]
		}
	}
	return Expansion{}
}

// Mismatch is a seeded cyclic shuffle of n queries (Sattolo's algorithm):
// query i takes query Mismatch[i]'s expansions, and none keeps its own.
func Mismatch(dataset string, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	h := fnv.New64a()
	h.Write([]byte(dataset))
	rng := rand.New(rand.NewPCG(h.Sum64(), 19))
	for i := n - 1; i > 0; i-- {
		j := rng.IntN(i)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// ReadsExpansions says whether any stage of a configuration reads the
// client's texts: only those run with the variants (the others' results are
// the plain run's, by construction).
func ReadsExpansions(cfg *pipeline.Config) bool {
	return slices.ContainsFunc(cfg.Stages, func(s stages.Stage) bool {
		r, ok := s.(stages.ExpansionReader)
		return ok && r.ReadsExpansions()
	})
}
