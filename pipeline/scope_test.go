package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// The adversarial scope: 50 work notes (two chunks each) are all about the
// query; the 3 personal notes share only two of its words; 150 filler notes
// share none. So the nearest 100 chunks are all out of scope, the in-scope
// chunks come next, and the filler after them: 253 chunks in all.
const (
	scopeQuery   = "compaction stall backlog disk"
	scopeNear    = 50
	scopeFiller  = 150
	scopeChunks  = 2*scopeNear + 3 + scopeFiller
	scopePrefix  = "personal/"
	scopeNearEnd = 2 * scopeNear // chunks ranked before any in-scope one
)

var scopeInScope = []string{"personal/bread.md", "personal/garden.md", "personal/runs.md"}

func scopeVault() map[string]string {
	files := map[string]string{
		"personal/bread.md":  "# Bread\n\nThe backlog of loaves to bake, and the disk of dough to shape before sunrise on weekends.\n",
		"personal/garden.md": "# Garden\n\nThe backlog of weeding, and a disk harrow borrowed from the neighbour for the spring beds.\n",
		"personal/runs.md":   "# Runs\n\nA backlog of long runs, and the disk of my watch keeps every lap and split for later review.\n",
	}
	for i := 0; i < scopeNear; i++ {
		files[fmt.Sprintf("work/incident-%02d.md", i)] = fmt.Sprintf(
			"# Incident %d\n\nCompaction stall with a backlog on a full disk.\n\n## Follow-up\n\nThe compaction stall cleared once the disk backlog drained.\n", i)
	}
	for i := 0; i < scopeFiller; i++ {
		files[fmt.Sprintf("work/filler/f%03d.md", i)] = fmt.Sprintf(
			"# Filler %d\n\nQuarterly budget meeting moved to room %d with coffee and biscuits for everyone attending.\n", i, i)
	}
	return files
}

var (
	scopeOnce sync.Once
	scopeEnvV *stages.Env
	scopeErr  error
)

// scopeEnv builds the adversarial index once, for every scope test.
func scopeEnv(t *testing.T) *stages.Env {
	t.Helper()
	scopeOnce.Do(func() {
		dir := filepath.Join(sharedDir, "scope")
		vault := filepath.Join(dir, "vault")
		if scopeErr = vaulttest.WriteFiles(vault, scopeVault(), stagetest.FileTime()); scopeErr != nil {
			return
		}
		db, err := stagetest.Open(context.Background(), stagetest.Embedder(), vault, filepath.Join(dir, "vault.db"))
		if scopeErr = err; err != nil {
			return
		}
		atExit(func() { db.Close() })
		scopeEnvV = stages.NewEnv(db, stagetest.Models{})
	})
	if scopeErr != nil {
		t.Fatalf("build the scope index: %v", scopeErr)
	}
	return scopeEnvV
}

func scopeRun(t *testing.T, yaml string, f index.Filter) *pipeline.Result {
	t.Helper()
	res, _, err := pipeline.Run(context.Background(), scopeEnv(t), inline(t, yaml), pipeline.Request{Text: scopeQuery, Filter: f, Now: testNow, K: 50})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestScopePrecondition proves the case is adversarial: the nearest 40 chunks,
// and so the unscoped top 40 notes, hold nothing in scope.
func TestScopePrecondition(t *testing.T) {
	env := scopeEnv(t)
	ctx := context.Background()
	n, err := stagetest.DB(t, env).ChunkCount(ctx)
	if err != nil || n != scopeChunks {
		t.Fatalf("%d chunks (%v), want %d", n, err, scopeChunks)
	}
	qv, _ := stagetest.Embedder().EmbedQuery(ctx, scopeQuery)
	knn, err := stagetest.DB(t, env).Vector(ctx, index.VectorQuery{Vector: qv, Mode: index.VectorExact, K: scopeChunks})
	if err != nil {
		t.Fatal(err)
	}
	hits := knn.Hits
	rows, _, err := stagetest.DB(t, env).List(ctx, index.Filter{PathPrefix: scopePrefix}, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	inScope := map[int64]bool{}
	for _, r := range rows {
		inScope[r.ID] = true
	}
	first := -1
	for i, h := range hits {
		if inScope[h.NoteID] {
			first = i
			break
		}
	}
	if first != scopeNearEnd {
		t.Fatalf("the first in-scope chunk is at %d, want %d: the vault no longer makes the case", first, scopeNearEnd)
	}
	res := scopeRun(t, "stages:\n  - vector: {limit: 40}\n", index.Filter{})
	for _, p := range paths(res) {
		if strings.HasPrefix(p, scopePrefix) {
			t.Errorf("unscoped top 40 holds %s", p)
		}
	}
}

func sortedPaths(res *pipeline.Result) []string {
	out := paths(res)
	sort.Strings(out)
	return out
}

// TestScopeOutcomeFilled: escalation goes past the out-of-scope top 40 and
// finds every in-scope note, and says so.
func TestScopeOutcomeFilled(t *testing.T) {
	scope := index.Filter{PathPrefix: scopePrefix}
	tests := []struct {
		name string
		yaml string
		info string // the whole line after the outcome
	}{
		{
			name: "default ladder (160, 640, ...)",
			yaml: "stages:\n  - vector: {limit: 40}\n",
			info: fmt.Sprintf("filled: 3 notes from the nearest 160 of %d chunks", scopeChunks),
		},
		{
			name: "escalated a rung: nothing in the first 40, all in 120",
			yaml: "stages:\n  - vector: {limit: 40, ladder: [40, 120, 400]}\n",
			info: fmt.Sprintf("filled: 3 notes from the nearest 120 of %d chunks", scopeChunks),
		},
		{
			// The rung that finds them also passes the chunk count. Both
			// "filled" and "drained" are true; filled is reported, since the
			// scope (3 notes) is whole.
			name: "found at a rung past the chunk count",
			yaml: "stages:\n  - vector: {limit: 40, ladder: [40, 1000]}\n",
			info: fmt.Sprintf("filled: 3 notes from the nearest %d of %d chunks", scopeChunks, scopeChunks),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := scopeRun(t, tc.yaml, scope)
			if got := stageInfo(t, res, "vector"); got != tc.info {
				t.Errorf("info %q, want %q", got, tc.info)
			}
			if got := sortedPaths(res); !reflect.DeepEqual(got, scopeInScope) {
				t.Errorf("notes %v, want the in-scope %v", got, scopeInScope)
			}
		})
	}

	t.Run("hybrid", func(t *testing.T) {
		res, _, err := pipeline.Run(context.Background(), scopeEnv(t), config(t, "hybrid"), pipeline.Request{Text: scopeQuery, Filter: scope, Now: testNow})
		if err != nil {
			t.Fatal(err)
		}
		if got := stageOutcome(t, res, "vector"); got != index.ScopeFilled {
			t.Errorf("vector outcome %q (%s), want filled", got, stageInfo(t, res, "vector"))
		}
		if got := sortedPaths(res); !reflect.DeepEqual(got, scopeInScope) {
			t.Errorf("notes %v, want the in-scope %v", got, scopeInScope)
		}
	})
}

// TestScopeOutcomeLadderEnd: a ladder that stops before the in-scope chunks
// says it stopped looking, not that nothing is there.
func TestScopeOutcomeLadderEnd(t *testing.T) {
	scope := index.Filter{PathPrefix: scopePrefix}
	res := scopeRun(t, "stages:\n  - vector: {limit: 40, ladder: [10, 20]}\n", scope)
	want := fmt.Sprintf("ladder-end: stopped after the nearest 20 of %d chunks with 0 of 3 wanted notes; more may exist", scopeChunks)
	if got := stageInfo(t, res, "vector"); got != want {
		t.Errorf("info %q, want %q", got, want)
	}
	if len(res.Notes) != 0 {
		t.Errorf("notes %v from chunks that are all out of scope", paths(res))
	}

	// A ladder reaching into the in-scope chunks but not past them all.
	res = scopeRun(t, fmt.Sprintf("stages:\n  - vector: {limit: 40, ladder: [40, %d]}\n", scopeNearEnd+1), scope)
	want = fmt.Sprintf("ladder-end: stopped after the nearest %d of %d chunks with 1 of 3 wanted notes; more may exist", scopeNearEnd+1, scopeChunks)
	if got := stageInfo(t, res, "vector"); got != want {
		t.Errorf("info %q, want %q", got, want)
	}
	if len(res.Notes) != 1 || !strings.HasPrefix(res.Notes[0].Path, scopePrefix) {
		t.Errorf("notes %v, want one in-scope note", paths(res))
	}
}

// TestScopeOutcomeDrained: the whole index was examined and there is no more
// to find. With a scope that has notes this cannot happen: the stage wants at
// most as many notes as the scope holds and every note has a chunk, so once
// every chunk is examined the scope is whole and the outcome is "filled" (see
// TestScopeOutcomeFilled). It is reached by a scope with no notes, and by an
// unscoped search wanting more notes than the vault holds.
func TestScopeOutcomeDrained(t *testing.T) {
	t.Run("a scope with no notes", func(t *testing.T) {
		res := scopeRun(t, "stages:\n  - vector: {limit: 40}\n", index.Filter{PathPrefix: "nowhere/"})
		want := fmt.Sprintf("drained: no note matches the filters (k=0 of %d chunks)", scopeChunks)
		if got := stageInfo(t, res, "vector"); got != want {
			t.Errorf("info %q, want %q", got, want)
		}
		if len(res.Notes) != 0 {
			t.Errorf("notes %v", paths(res))
		}
	})
	t.Run("a scope whose filters match no note", func(t *testing.T) {
		res := scopeRun(t, "stages:\n  - vector: {limit: 40}\n", index.Filter{PathPrefix: scopePrefix, DateFrom: "2030-01-01"})
		if got := stageOutcome(t, res, "vector"); got != index.ScopeDrained {
			t.Errorf("outcome %q (%s), want drained", got, stageInfo(t, res, "vector"))
		}
	})
	t.Run("more notes wanted than the vault holds", func(t *testing.T) {
		notes := scopeNear + 3 + scopeFiller
		res := scopeRun(t, "stages:\n  - vector: {limit: 500, ladder: [100, 1000]}\n", index.Filter{})
		want := fmt.Sprintf("drained: all %d chunks examined, %d notes in scope found", scopeChunks, notes)
		if got := stageInfo(t, res, "vector"); got != want {
			t.Errorf("info %q, want %q", got, want)
		}
	})
	t.Run("a broad scope, more wanted than it holds", func(t *testing.T) {
		// work/ holds 200 notes, 250 are wanted: want is capped at 200, so
		// finding them all is "filled", not "drained".
		res := scopeRun(t, "stages:\n  - vector: {limit: 250, ladder: [100, 1000]}\n", index.Filter{PathPrefix: "work/"})
		want := fmt.Sprintf("filled: 200 notes from the nearest %d of %d chunks", scopeChunks, scopeChunks)
		if got := stageInfo(t, res, "vector"); got != want {
			t.Errorf("info %q, want %q", got, want)
		}
	})
}
