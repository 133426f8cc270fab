// Package eval is the core of evaluation: it loads datasets (the demo
// vault's queries.json, a vault dataset folder, any BEIR-layout collection)
// and their client expansions, indexes them (EnsureIndex), runs
// configurations over their queries (Run) and scores the rankings (the
// metrics). Whatever only needs a dataset, such as bench, imports this
// package alone. The regression gate is eval/gate, the reports and charts
// eval/report, sweeps and cross-validation eval/sweep; none of them is
// imported here, so neither is the plotting library.
package eval

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
}

// queriesFile is eval/queries.json.
type queriesFile struct {
	Description string  `json:"description"`
	Queries     []Query `json:"queries"`
}

// LoadDemo reads the demo vault's queries (root/eval/queries.json) over
// root/vault.
func LoadDemo(root string) (*Dataset, error) {
	return loadQueries("demo", filepath.Join(root, "eval", "queries.json"), filepath.Join(root, "vault"))
}

// IsVaultDataset says whether dir holds a vault dataset: a vault/ folder and a
// queries.json beside it.
func IsVaultDataset(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "vault"))
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "queries.json"))
	return err == nil
}

// LoadVault reads a vault dataset: dir/queries.json (the demo's shape) over
// dir/vault, which is indexed in place and never written. Its name is the
// folder's.
func LoadVault(dir string) (*Dataset, error) {
	return loadQueries(filepath.Base(filepath.Clean(dir)), filepath.Join(dir, "queries.json"), filepath.Join(dir, "vault"))
}

func loadQueries(name, p, vault string) (*Dataset, error) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read %s queries: %w", name, err)
	}
	var qf queriesFile
	if err := json.Unmarshal(raw, &qf); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(qf.Queries) == 0 {
		return nil, fmt.Errorf("%s: no queries", p)
	}
	ids := map[string]bool{}
	for _, q := range qf.Queries {
		if q.ID == "" || strings.TrimSpace(q.Text) == "" || len(q.Relevant) == 0 {
			return nil, fmt.Errorf("%s: query %q needs an id, a text and relevant notes", p, q.ID)
		}
		if ids[q.ID] {
			return nil, fmt.Errorf("%s: query id %s is used twice", p, q.ID)
		}
		ids[q.ID] = true
		for path, g := range q.Relevant {
			if g <= 0 {
				return nil, fmt.Errorf("%s: query %s: grade %d for %s must be positive", p, q.ID, g, path)
			}
			if _, err := os.Stat(filepath.Join(vault, filepath.FromSlash(path))); err != nil {
				return nil, fmt.Errorf("%s: query %s names %s, which is not in the vault", p, q.ID, path)
			}
		}
	}
	sum := sha256.Sum256(raw)
	return &Dataset{Name: name, VaultPath: vault, Queries: qf.Queries, Graded: graded(qf.Queries), Source: p, Hash: hex.EncodeToString(sum[:]), Vault: true}, nil
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

// BEIRDate is the date written into every converted BEIR document, so recency
// sees one fixed date instead of the conversion's file time.
const BEIRDate = "2000-01-01"

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// NoteName is the file a BEIR document becomes.
func NoteName(docID string) string {
	return "doc-" + unsafeID.ReplaceAllString(docID, "_") + ".md"
}

// LoadBEIR reads a BEIR-layout collection (corpus.jsonl, queries.jsonl,
// qrels/test.tsv) and writes its documents as markdown notes into work/vault
// (once per corpus content), so the same indexer indexes them. Queries without
// judgements are dropped, since no metric is defined for them.
func LoadBEIR(dir, work string) (*Dataset, error) {
	name := filepath.Base(filepath.Clean(dir))
	h := sha256.New()
	corpus, err := os.ReadFile(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("read BEIR corpus: %w", err)
	}
	h.Write(corpus)
	qrels, err := readQrels(filepath.Join(dir, "qrels", "test.tsv"), h)
	if err != nil {
		return nil, err
	}
	queries, err := readBEIRQueries(filepath.Join(dir, "queries.jsonl"), h)
	if err != nil {
		return nil, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	vault := filepath.Join(work, "vault")
	if err := writeBEIRVault(corpus, vault, sum); err != nil {
		return nil, err
	}
	ds := &Dataset{Name: name, VaultPath: vault, Source: dir, Hash: sum}
	for _, q := range queries {
		rel := qrels[q.ID]
		if len(rel) == 0 {
			continue
		}
		q.Relevant = map[string]int{}
		for doc, g := range rel {
			q.Relevant[NoteName(doc)] = g
		}
		ds.Queries = append(ds.Queries, q)
	}
	if len(ds.Queries) == 0 {
		return nil, fmt.Errorf("%s: no query has a judgement in qrels/test.tsv", dir)
	}
	ds.Graded = graded(ds.Queries)
	return ds, nil
}

func readQrels(p string, h io.Writer) (map[string]map[string]int, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read BEIR judgements: %w", err)
	}
	defer f.Close()
	out := map[string]map[string]int{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		h.Write([]byte(text + "\n"))
		fields := strings.Split(strings.TrimSpace(text), "\t")
		if line == 1 && len(fields) > 0 && fields[0] == "query-id" {
			continue
		}
		if len(fields) != 3 {
			if strings.TrimSpace(text) == "" {
				continue
			}
			return nil, fmt.Errorf("%s:%d: want query-id, corpus-id, score separated by tabs", p, line)
		}
		g, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: score %q is not an integer", p, line, fields[2])
		}
		if g <= 0 {
			continue // judged not relevant
		}
		if out[fields[0]] == nil {
			out[fields[0]] = map[string]int{}
		}
		out[fields[0]][fields[1]] = g
	}
	return out, sc.Err()
}

func readBEIRQueries(p string, h io.Writer) ([]Query, error) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read BEIR queries: %w", err)
	}
	h.Write(raw)
	var out []Query
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", p, i+1, err)
		}
		out = append(out, Query{ID: q.ID, Text: q.Text})
	}
	return out, nil
}

// writeBEIRVault writes one note per document, unless a vault of the same
// corpus is already there (its stamp names the corpus hash).
func writeBEIRVault(corpus []byte, vault, sum string) error {
	stamp := filepath.Join(filepath.Dir(vault), "vault.sha256")
	if b, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(b)) == sum {
		return nil
	}
	if err := os.RemoveAll(vault); err != nil {
		return err
	}
	if err := os.MkdirAll(vault, 0o755); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, line := range strings.Split(string(corpus), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			return fmt.Errorf("corpus.jsonl:%d: %w", i+1, err)
		}
		name := NoteName(d.ID)
		if seen[name] {
			return fmt.Errorf("corpus.jsonl:%d: document id %q collides with another after making it a file name", i+1, d.ID)
		}
		seen[name] = true
		title := strings.Join(strings.Fields(d.Title), " ")
		if title == "" {
			title = "Document " + d.ID
		}
		// The text is body text, never headings: a line starting "## " in a
		// document must not split it, so leading '#' are escaped.
		body := strings.ReplaceAll("\n"+strings.TrimSpace(d.Text), "\n#", "\n\\#")
		note := fmt.Sprintf("---\ndate: %s\n---\n# %s\n%s\n", BEIRDate, title, body)
		if err := os.WriteFile(filepath.Join(vault, name), []byte(note), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(stamp, []byte(sum+"\n"), 0o644)
}
