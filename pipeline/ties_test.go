package pipeline_test

import (
	"context"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// conventionsQuery holds words found only in the "## Conventions" section the
// demo vault's three reference notes share byte for byte.
const conventionsQuery = "monospace underscores compiled"

// conventionsNotes are those notes in the order the keyword search returns
// them: error-codes and orchard-cli tie exactly (titles and file names of one
// length in tokens), ferrite-config-keys, whose file name is a token longer,
// follows (a title is searched with its file name, vault.Note.TitleNames).
var conventionsNotes = []string{"reference/error-codes.md", "reference/orchard-cli.md", "reference/ferrite-config-keys.md"}

var (
	demoOnce sync.Once
	demoEnvV *stages.Env
	demoErr  error
)

// demoFakeEnv indexes the demo vault with the bag-of-words embedder: BM25 does
// not depend on the embedder, and this takes a second, not twenty.
func demoFakeEnv(t *testing.T) *stages.Env {
	t.Helper()
	demoOnce.Do(func() {
		db, err := stagetest.Open(context.Background(), stagetest.Embedder(), filepath.Join(repoRoot, "vault"), filepath.Join(sharedDir, "demo-fake.db"))
		if demoErr = err; err != nil {
			return
		}
		atExit(func() { db.Close() })
		demoEnvV = stages.NewEnv(db, stagetest.Models{})
	})
	if demoErr != nil {
		t.Fatalf("index the demo vault: %v", demoErr)
	}
	return demoEnvV
}

// checkTieGroup runs a query 20 times and checks the group comes back first,
// in note-id order, the same every run, with at least wantEqual of its scores
// exactly equal (so the tie-break, not the score, is what orders them).
func checkTieGroup(t *testing.T, env *stages.Env, cfg *pipeline.Config, query string, group []string, wantEqual int) {
	t.Helper()
	ctx := context.Background()
	ids := map[string]int64{}
	for _, p := range group {
		n, err := stagetest.DB(t, env).NoteByPath(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		ids[p] = n.ID
	}
	for i := 1; i < len(group); i++ {
		if ids[group[i-1]] >= ids[group[i]] {
			t.Fatalf("the group is not listed in note-id order: %v", ids)
		}
	}
	var first *pipeline.Result
	for run := 0; run < 20; run++ {
		res, st, err := pipeline.Run(ctx, env, cfg, pipeline.Request{Text: query, Now: testNow, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) < len(group) {
			t.Fatalf("%d notes, want at least %d", len(res.Notes), len(group))
		}
		top := paths(res)[:len(group)]
		if !reflect.DeepEqual(top, group) {
			t.Fatalf("run %d: top %v, want %v", run, top, group)
		}
		if run == 0 {
			first = res
			// The scores are the keyword stage's: -bm25.
			equal := 1
			for i := 1; i < len(group); i++ {
				a, b := res.Notes[i-1].Score, res.Notes[i].Score
				if a < b {
					t.Errorf("%s (%v) ranked above the higher %s (%v)", group[i-1], a, group[i], b)
				}
				if a == b {
					equal++
				}
			}
			if equal < wantEqual {
				t.Errorf("only %d exactly equal scores in the group, want %d: %+v", equal, wantEqual, res.Notes[:len(group)])
			}
			for i, it := range st.Ranking[:len(group)] {
				if it.NoteID != ids[group[i]] {
					t.Errorf("ranking item %d is note %d, want %d", i, it.NoteID, ids[group[i]])
				}
			}
			continue
		}
		for i := range res.Notes {
			a, b := res.Notes[i], first.Notes[i]
			if a.Path != b.Path || a.Score != b.Score || a.Heading != b.Heading {
				t.Fatalf("run %d, rank %d: %s %v, first run %s %v", run, i+1, a.Path, a.Score, b.Path, b.Score)
			}
		}
	}
}

// TestExactTiesDemoVault: the shared Conventions block. Two of the three notes
// score exactly equal bm25 and come back in note-id (= path) order, every run. FTS5's
// bm25 normalises by the length of the whole row, title included, so the tie
// also needs titles of one length in tokens: were one title a token shorter,
// its note would score a little higher and the test would say so.
func TestExactTiesDemoVault(t *testing.T) {
	env := demoFakeEnv(t)
	cfg := config(t, "keyword")
	checkTieGroup(t, env, cfg, conventionsQuery, conventionsNotes[:2], 2)
	res, _, err := pipeline.Run(context.Background(), env, cfg, pipeline.Request{Text: conventionsQuery, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(res); !reflect.DeepEqual(got, conventionsNotes) {
		t.Errorf("notes %v: the query's words are only in the Conventions sections", got)
	}
	for _, n := range res.Notes {
		if n.Heading != "Conventions" {
			t.Errorf("%s: chunk %q, want Conventions", n.Path, n.Heading)
		}
	}
	t.Logf("bm25: %s %v, %s %v, %s %v", res.Notes[0].Path, res.Notes[0].Score, res.Notes[1].Path, res.Notes[1].Score, res.Notes[2].Path, res.Notes[2].Score)
}

// TestExactTiesThreeWay: three notes with the same section and titles of the
// same length tie exactly, all three, and come back in note-id order, whatever
// order their files were written in.
func TestExactTiesThreeWay(t *testing.T) {
	section := "## Conventions\n\nNames in monospace are literal, underscores included. Default means the value compiled into the release.\n"
	files := map[string]string{
		"ref/c-gamma.md": "# Gamma reference\n\nGamma specific text about orchards.\n\n" + section,
		"ref/a-alpha.md": "# Alpha reference\n\nAlpha specific text about ferrites.\n\n" + section,
		"ref/b-beta.md":  "# Beta reference\n\nBeta specific text about errors.\n\n" + section,
		"other/x.md":     "# Other\n\nNothing here names the conventions.\n",
	}
	env := stagetest.Env(t, files)
	checkTieGroup(t, env, config(t, "keyword"), conventionsQuery, []string{"ref/a-alpha.md", "ref/b-beta.md", "ref/c-gamma.md"}, 3)
}
