package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// expandedConfig reads the client's keywords and answer, vetted.
const expandedConfig = `name: expanded
stages:
  - keyword: {limit: 40, title_weight: 3, text: [query, keywords], vet: 10}
  - vector:  {limit: 40, text: [query, answer], vet: 10}
  - rrf:     {k: 60, limit: 30}
`

// plainConfig is the same pipeline reading the question alone.
const plainConfig = `name: expanded
stages:
  - keyword: {limit: 40, title_weight: 3}
  - vector:  {limit: 40}
  - rrf:     {k: 60, limit: 30}
`

func notesJSON(t *testing.T, res *pipeline.Result) string {
	t.Helper()
	b, err := json.Marshal(res.Notes)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExpansionsAbsentEchoedOrIgnored: a configuration that reads the
// client's texts answers exactly as its plain twin when the client sends
// none, and when it only repeats the question; a configuration that does not
// read them ignores them.
func TestExpansionsAbsentEchoedOrIgnored(t *testing.T) {
	env := stagetest.IndexEnv(t, filepath.Join(repoRoot, "vault"))
	ctx := context.Background()
	expanded, plain := inline(t, expandedConfig), inline(t, plainConfig)
	for _, q := range []string{"why did writes get slow in the middle of the night", "FERR-4102", "feeding a sourdough starter"} {
		want, _, err := pipeline.Run(ctx, env, plain, pipeline.Request{Text: q, Now: testNow})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			cfg  *pipeline.Config
			req  pipeline.Request
		}{
			{"none sent", expanded, pipeline.Request{Text: q, Now: testNow}},
			{"echoed", expanded, pipeline.Request{Text: q, Keywords: " " + strings.ToUpper(q) + "?", Answer: q + ".", Now: testNow}},
			{"sent to a configuration that does not read them", plain, pipeline.Request{Text: q, Keywords: "sourdough", Answer: "flour and water", Now: testNow}},
		} {
			got, _, err := pipeline.Run(ctx, env, tc.cfg, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if notesJSON(t, got) != notesJSON(t, want) {
				t.Errorf("%q, %s: the notes differ from the plain configuration's", q, tc.name)
			}
		}
	}
}

// TestExpansionsChangeTheAnswer: sent and on topic, the client's words bring
// notes the question's own words miss.
func TestExpansionsChangeTheAnswer(t *testing.T) {
	env := stagetest.IndexEnv(t, filepath.Join(repoRoot, "vault"))
	ctx := context.Background()
	q := "why did writes get slow in the middle of the night"
	req := pipeline.Request{Text: q, Now: testNow, Explain: true,
		Keywords: "compaction stall write stall memtable flush L0",
		Answer:   "Writes got slow at night because compaction fell behind: L0 files piled up and the memtable flush stalled."}
	// Not vetted: the bag-of-words test embedder cannot tell a paraphrase
	// from another subject (vetting is tested in stages).
	got, _, err := pipeline.Run(ctx, env, inline(t, strings.ReplaceAll(expandedConfig, ", vet: 10", "")), req)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := pipeline.Run(ctx, env, inline(t, plainConfig), pipeline.Request{Text: q, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if notesJSON(t, got) == notesJSON(t, plain) {
		t.Fatalf("the client's texts changed nothing")
	}
}

func TestExpansionLimits(t *testing.T) {
	env := stagetest.IndexEnv(t, filepath.Join(repoRoot, "vault"))
	ctx := context.Background()
	long := strings.Repeat("word ", pipeline.MaxQueryBytes/5+2)
	for _, tc := range []struct {
		req  pipeline.Request
		want string
	}{
		{pipeline.Request{Text: "lease", Keywords: long}, "the keywords is"},
		{pipeline.Request{Text: "lease", Answer: long}, "the answer is"},
		{pipeline.Request{Text: "lease", Answer: "lease \xff"}, "the answer is not valid UTF-8"},
		{pipeline.Request{Text: "lease", Keywords: "lease\x00expiry\x1b[31m"}, ""}, // NUL and controls separate terms, as in the query
	} {
		tc.req.Now = testNow
		_, _, err := pipeline.Run(ctx, env, inline(t, expandedConfig), tc.req)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%.40q: refused: %v", tc.req.Keywords, err)
		case tc.want != "" && (!errors.Is(err, pipeline.ErrBadQuery) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("error %v, want ErrBadQuery saying %q", err, tc.want)
		}
	}
}

// TestReadsExpansions: the eval harness runs the client variants only for
// configurations holding a stage that reads the client's texts.
func TestReadsExpansions(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{plainConfig, false},
		{expandedConfig, true},
		{"stages:\n  - vector: {text: [answer], embed_as: passage}\n", true},
	} {
		cfg := inline(t, tc.src)
		got := false
		for _, s := range cfg.Stages {
			if r, ok := s.(stages.ExpansionReader); ok && r.ReadsExpansions() {
				got = true
			}
		}
		if got != tc.want {
			t.Errorf("%q reads expansions: %v, want %v", tc.src, got, tc.want)
		}
	}
}
