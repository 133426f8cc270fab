package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// FuzzParseConfig: Parse takes any bytes; a refusal names the file first, and
// an accepted configuration has at least one stage, a name, a retrieval stage
// first, and parses the same way twice.
func FuzzParseConfig(f *testing.F) {
	for _, dir := range []string{"configs", "experiments", "experiments/lab"} {
		paths, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*.yaml"))
		for _, p := range paths {
			raw, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
		}
	}
	for _, s := range []string{
		"",
		"stages: []",
		"stages:\n  - keyword:\n",
		"stages:\n  - rrf: {k: 60}\n",
		"stages:\n  - keyword: {limit: forty}\n",
		"stages:\n  - keyword: {limit: 40, limit: 41}\n",
		"stages:\n  - keyword: {}\n    vector: {}\n",
		"name: [x]\nstages:\n  - vector: {ladder: [3, 2]}\n",
		"stages: &a\n  - keyword: *a\n",
		"a: &a [*a, *a]\n",
		"\t- tabs",
		"--- !!binary\n",
		"stages:\n  - recency: {weight: -1}\n",
		"stages:\n  - keyword: {limit: 99999999999999999999}\n",
		"%YAML 1.1\n---\nstages:\n- keyword:\n",
	} {
		f.Add([]byte(s))
	}
	const file = "fuzz.yaml"
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := pipeline.Parse(file, raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), file+":") {
				t.Fatalf("error does not start with the file name: %v", err)
			}
			if cfg != nil {
				t.Fatalf("error %v with a configuration", err)
			}
			return
		}
		if len(cfg.Stages) == 0 {
			t.Fatal("accepted a configuration without stages")
		}
		if cfg.Name == "" || cfg.File != file {
			t.Fatalf("name %q, file %q", cfg.Name, cfg.File)
		}
		switch first := cfg.Stages[0].Name(); first {
		case "keyword", "vector", "hyde":
		default:
			t.Fatalf("first stage %s is not a retrieval stage", first)
		}
		again, err := pipeline.Parse(file, raw)
		if err != nil {
			t.Fatalf("parsed once, refused the second time: %v", err)
		}
		if len(again.Stages) != len(cfg.Stages) || again.Name != cfg.Name {
			t.Fatalf("second parse: %d stages named %q, first: %d named %q", len(again.Stages), again.Name, len(cfg.Stages), cfg.Name)
		}
		for i := range cfg.Stages {
			if a, b := cfg.Stages[i].Name(), again.Stages[i].Name(); a != b {
				t.Fatalf("stage %d is %s, then %s", i, a, b)
			}
			// Validate filled in defaults; running it again must accept them.
			if err := cfg.Stages[i].Validate(); err != nil {
				t.Fatalf("stage %d (%s) refuses its own defaults: %v", i, cfg.Stages[i].Name(), err)
			}
		}
	})
}

// rawSQLErrors are texts of SQLite and FTS5 errors that must never reach a
// user: user text goes to FTS5 as quoted terms only.
var rawSQLErrors = []string{"SQL logic error", "fts5: syntax error", `near "`, "no such column", "unterminated string", "malformed MATCH"}

// checkQueryOutcome asserts that a query either ran normally or was refused
// as a bad query with a message, and never surfaced a raw SQL error.
func checkQueryOutcome(t *testing.T, cfg *pipeline.Config, text string, k int, res *pipeline.Result, err error) {
	t.Helper()
	if err != nil {
		for _, raw := range rawSQLErrors {
			if strings.Contains(err.Error(), raw) {
				t.Fatalf("%s, %.60q: raw SQL error reached the caller: %v", cfg.Name, text, err)
			}
		}
		if !errors.Is(err, pipeline.ErrBadQuery) {
			t.Fatalf("%s, %.60q: %v, want a result or ErrBadQuery", cfg.Name, text, err)
		}
		if res != nil {
			t.Fatalf("%s, %.60q: refused with a result", cfg.Name, text)
		}
		return
	}
	if res == nil || res.Notes == nil {
		t.Fatalf("%s, %.60q: no error and no result", cfg.Name, text)
	}
	if len(res.Notes) > k {
		t.Fatalf("%s, %.60q: %d notes for k %d", cfg.Name, text, len(res.Notes), k)
	}
	for i, n := range res.Notes {
		if n.Rank != i+1 || n.Path == "" || n.Title == "" {
			t.Fatalf("%s, %.60q: note %d is %+v", cfg.Name, text, i, n)
		}
	}
	if len(res.Stages) != len(cfg.Stages) {
		t.Fatalf("%s, %.60q: %d stage reports for %d stages", cfg.Name, text, len(res.Stages), len(cfg.Stages))
	}
}

// hostileQuery is one awkward query and what it must give.
type hostileQuery struct {
	name string
	text string
	bad  string // non-empty: refused with ErrBadQuery and this in the message
	hits bool   // accepted and the keyword configuration finds something
}

func hostileQueries() []hostileQuery {
	return []hostileQuery{
		{name: "empty", text: "", bad: "the query is empty"},
		{name: "white space", text: " \t\r\n\u00a0\u3000 ", bad: "the query is empty"},
		{name: "100 KB", text: strings.Repeat("lease expiry storm ", 100<<10/19+1), bad: "the limit is 16384"},
		{name: "just under the limit", text: strings.Repeat("lease ", pipeline.MaxQueryBytes/6), hits: true},
		{name: "one 16 KB word", text: strings.Repeat("x", pipeline.MaxQueryBytes)},
		{name: "invalid UTF-8", text: "lease \xff\xfe", bad: "not valid UTF-8"},
		{name: "only punctuation", text: `?!.,;:-_()[]{}<>"'*^+=~|/\@#$%&`},
		{name: "FTS5 column filter", text: "title:lease body:expiry", hits: true},
		{name: "FTS5 column set", text: "{title body}: lease", hits: true},
		{name: "FTS5 NEAR", text: "NEAR(lease expiry, 2)", hits: true},
		{name: "FTS5 boolean", text: "lease AND NOT expiry OR", hits: true},
		{name: "FTS5 prefix and initial", text: "leas* ^lease -storm +renewal", hits: true},
		{name: "FTS5 unbalanced", text: `"lease (expiry`, hits: true},
		{name: "FTS5 operators alone", text: "AND OR NOT NEAR"},
		{name: "SQL: drop table", text: "'; DROP TABLE notes; --", hits: false},
		{name: "SQL: or 1=1", text: `lease" OR 1=1 --`, hits: true},
		{name: "SQL: union", text: "') UNION SELECT key, value FROM meta --"},
		{name: "SQL: comment and semicolon", text: "/* lease */ ; SELECT 1"},
		{name: "Cyrillic", text: "Москва аренда истекла"},
		{name: "CJK", text: "東京の天気はどうですか"},
		{name: "Arabic", text: "انتهاء عقد الإيجار"},
		{name: "Devanagari", text: "नमस्ते दुनिया"},
		{name: "emoji", text: "🔥 lease 🚀", hits: true},
		{name: "combining marks", text: "le\u0301ase cafe\u0301"},
		{name: "NUL and controls", text: "lease\x00expiry\x1b[31m\x07", hits: true},
		{name: "zero-width", text: "\u200blease\u200d\ufeff", hits: true},
	}
}

// runHostile runs every hostile query through the keyword, vector and hybrid
// configurations over env, checks the outcome, and that the index is intact.
func runHostile(t *testing.T, env *stages.Env) {
	ctx := context.Background()
	_, notesBefore, err := stagetest.DB(t, env).List(ctx, index.Filter{}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"keyword", "vector", "hybrid"} {
		cfg := config(t, name)
		for _, q := range hostileQueries() {
			t.Run(name+"/"+q.name, func(t *testing.T) {
				res, _, err := pipeline.Run(ctx, env, cfg, pipeline.Request{Text: q.text, Now: testNow})
				checkQueryOutcome(t, cfg, q.text, 10, res, err)
				switch {
				case q.bad != "":
					if err == nil || !strings.Contains(err.Error(), q.bad) {
						t.Fatalf("err %v, want ErrBadQuery saying %q", err, q.bad)
					}
				case err != nil:
					t.Fatalf("refused: %v", err)
				case q.hits && len(res.Notes) == 0:
					t.Fatalf("no notes for %.60q", q.text)
				case name != "keyword" && len(res.Notes) == 0:
					// A vector search ranks every note; only an empty index has none.
					t.Fatalf("%s found nothing", name)
				}
			})
		}
	}
	_, notesAfter, err := stagetest.DB(t, env).List(ctx, index.Filter{}, 0, 0)
	if err != nil || notesAfter != notesBefore {
		t.Fatalf("index holds %d notes after the hostile queries, %d before (%v)", notesAfter, notesBefore, err)
	}
}

// TestHostileQueriesFakeEmbedder runs the hostile queries over the demo
// vault indexed with the bag-of-words embedder (fast; runs under -short).
func TestHostileQueriesFakeEmbedder(t *testing.T) {
	runHostile(t, stagetest.IndexEnv(t, filepath.Join(repoRoot, "vault")))
}

// TestHostileQueriesRealEmbedder runs them with bge-small-en-v1.5, whose
// tokenizer meets the odd scripts and the 16 KB query.
func TestHostileQueriesRealEmbedder(t *testing.T) {
	runHostile(t, realEnv(t))
}

// FuzzQuery runs arbitrary query text through the keyword, vector and hybrid
// configurations over the demo vault (bag-of-words embedder): each run gives
// a result or ErrBadQuery, never a raw SQL error.
func FuzzQuery(f *testing.F) {
	for _, q := range hostileQueries() {
		if len(q.text) < 1024 {
			f.Add(q.text)
		}
	}
	ctx := context.Background()
	db, err := stagetest.Open(ctx, stagetest.Embedder(), filepath.Join(repoRoot, "vault"), filepath.Join(f.TempDir(), "vault.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	env := stages.NewEnv(db, stagetest.Models{})
	var cfgs []*pipeline.Config
	for _, name := range []string{"keyword", "vector", "hybrid"} {
		cfg, err := pipeline.Find(repoRoot, name)
		if err != nil {
			f.Fatal(err)
		}
		cfgs = append(cfgs, cfg)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, cfg := range cfgs {
			res, _, err := pipeline.Run(ctx, env, cfg, pipeline.Request{Text: text, Now: testNow, K: 5})
			checkQueryOutcome(t, cfg, text, 5, res, err)
		}
	})
}
