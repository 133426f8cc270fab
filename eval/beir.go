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

// A BEIR-layout collection: corpus.jsonl, queries.jsonl and qrels/test.tsv
// in one folder, its documents written as notes under the work folder.
func init() {
	registerKind(DatasetKind{
		Name:     "BEIR",
		Describe: "a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)",
		Claims: func(spec string, _ OpenOptions) bool {
			return isDir(spec) && fileExists(filepath.Join(spec, "corpus.jsonl"))
		},
		Open: func(spec string, o OpenOptions) (*Dataset, string, error) {
			ds, err := LoadBEIR(spec, workFolder(o, spec))
			return ds, spec, err
		},
	})
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
