package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// linkedVault is a few notes that link to each other.
var linkedVault = map[string]string{
	"ops/compaction-stall.md": "---\ndate: 2026-02-03\n---\n# Compaction stall\n\nCompaction stalled overnight because the disk filled. See [[disk-pressure]] and [[pager|the pager]].\n\n## Fix\n\nWe added disk alerts and throttled compaction.\n",
	"ops/disk-pressure.md":    "---\ndate: 2025-06-01\n---\n# Disk pressure\n\nWhen the disk fills, compaction stalls; see [[compaction-stall]].\n",
	"ops/pager.md":            "---\ndate: 2024-01-10\n---\n# Pager\n\nThe pager rotation is weekly.\n",
	"notes/journal.md":        "---\ndate: 2026-02-04\n---\n# Journal\n\nRead [[compaction-stall]] today.\n",
	"home/bread.md":           "---\ndate: 2026-01-01\n---\n# Bread\n\nThe dough rose overnight.\n",
}

func TestRunRefusesBadQueries(t *testing.T) {
	env := stagetest.Env(t, linkedVault)
	cfg := config(t, "keyword")
	tests := []struct {
		name string
		req  pipeline.Request
	}{
		{"empty", pipeline.Request{Text: ""}},
		{"white space", pipeline.Request{Text: " \t\r\n "}},
		{"over 16 KB", pipeline.Request{Text: strings.Repeat("a", pipeline.MaxQueryBytes+1)}},
		{"over 16 KB of words", pipeline.Request{Text: strings.Repeat("disk ", pipeline.MaxQueryBytes/5+2)}},
		{"invalid UTF-8", pipeline.Request{Text: "disk \xff\xfe pressure"}},
		{"a lone continuation byte", pipeline.Request{Text: "\x80"}},
		{"negative k", pipeline.Request{Text: "disk", K: -1}},
		{"k over 200", pipeline.Request{Text: "disk", K: 201}},
		{"month 13", pipeline.Request{Text: "disk", Filter: index.Filter{DateFrom: "2024-13-01"}}},
		{"not a date", pipeline.Request{Text: "disk", Filter: index.Filter{DateTo: "yesterday"}}},
		{"unpadded date", pipeline.Request{Text: "disk", Filter: index.Filter{DateFrom: "2024-1-5"}}},
		{"date with a time", pipeline.Request{Text: "disk", Filter: index.Filter{DateTo: "2024-01-05T10:00:00Z"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, st, err := pipeline.Run(context.Background(), env, cfg, tc.req)
			if !errors.Is(err, pipeline.ErrBadQuery) {
				t.Fatalf("err %v, want ErrBadQuery", err)
			}
			if res != nil || st != nil {
				t.Errorf("a refused query ran: result %v, state %v", res, st)
			}
		})
	}

	accepted := []struct {
		name string
		req  pipeline.Request
	}{
		{"exactly 16 KB", pipeline.Request{Text: strings.Repeat("a", pipeline.MaxQueryBytes)}},
		{"16 KB once trimmed", pipeline.Request{Text: "  " + strings.Repeat("a", pipeline.MaxQueryBytes) + "\n"}},
		{"k 1", pipeline.Request{Text: "disk", K: 1}},
		{"k 200", pipeline.Request{Text: "disk", K: 200}},
		{"k 0 means 10", pipeline.Request{Text: "disk"}},
		{"dates", pipeline.Request{Text: "disk", Filter: index.Filter{DateFrom: "2024-01-01", DateTo: "2026-12-31"}}},
		{"only punctuation: nothing to search, not an error", pipeline.Request{Text: "?!"}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := pipeline.Run(context.Background(), env, cfg, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if k := max(tc.req.K, 10); len(res.Notes) > k {
				t.Errorf("%d notes for k %d", len(res.Notes), k)
			}
		})
	}
}

// TestRunModelNotInstalled: a configuration whose model is absent fails with
// an error wrapping models.ErrNotInstalled; it never runs without the model.
func TestRunModelNotInstalled(t *testing.T) {
	env := stagetest.Env(t, linkedVault)
	ctx := context.Background()
	tests := []struct {
		name string
		cfg  *pipeline.Config
		text string
	}{
		{"hybrid-rerank", config(t, "hybrid-rerank"), "why did compaction stall"},
		{"rerank-chunk", config(t, "rerank-chunk"), "why did compaction stall"},
		{"rerank with nothing to rerank", inline(t, "stages:\n  - keyword: {}\n  - rerank: {}\n"), "?!"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := pipeline.Run(ctx, env, tc.cfg, pipeline.Request{Text: tc.text, Now: testNow})
			if !errors.Is(err, models.ErrNotInstalled) {
				t.Fatalf("err %v, want one wrapping ErrNotInstalled", err)
			}
			if res != nil {
				t.Errorf("returned a result without the model: %+v", res)
			}
			if !strings.Contains(err.Error(), "stage rerank") {
				t.Errorf("error %q does not say which stage", err)
			}
		})
	}

	t.Run("the real registry", func(t *testing.T) {
		settings := models.SettingsFrom(os.Getenv)
		reg, err := models.NewRegistry(settings.DataDir, settings.Runtime)
		if err != nil {
			t.Fatalf("no model registry: %v", err)
		}
		defer reg.Close()
		real := stages.NewEnv(stagetest.DB(t, env), pipeline.ModelsOf(reg))
		if _, err := reg.CrossEncoder(ctx, ""); err == nil {
			t.Skip("the cross-encoder is installed here")
		}
		cfg := inline(t, "stages:\n  - keyword: {}\n  - rerank: {model: ms-marco-MiniLM-L-6-v2}\n")
		res, _, err := pipeline.Run(ctx, real, cfg, pipeline.Request{Text: "compaction", Now: testNow})
		if !errors.Is(err, models.ErrNotInstalled) || res != nil {
			t.Errorf("result %v, err %v; want ErrNotInstalled and no result", res, err)
		}
	})

	t.Run("a scorer whose model is present runs", func(t *testing.T) {
		res, _, err := pipeline.Run(ctx, env, config(t, "bi-encoder-snippet"), pipeline.Request{Text: "why did compaction stall", Now: testNow})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) == 0 || !strings.Contains(stageInfo(t, res, "rerank"), "snippet passages") {
			t.Errorf("bi-encoder rerank: %+v", res.Stages)
		}
	})
}

// TestRunExplain: with Explain, every note carries one entry per stage, in
// stage order, and the last entry is the note's own rank and score.
func TestRunExplain(t *testing.T) {
	env := stagetest.Env(t, linkedVault)
	for _, name := range []string{"keyword", "vector", "hybrid", "hybrid-recency", "hyde", "bi-encoder-chunk"} {
		t.Run(name, func(t *testing.T) {
			cfg := config(t, name)
			res, st, err := pipeline.Run(context.Background(), env, cfg, pipeline.Request{Text: "why did compaction stall overnight", Now: testNow, Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Notes) == 0 {
				t.Fatal("no notes")
			}
			if len(res.Stages) != len(cfg.Stages) || len(st.Steps) != len(cfg.Stages) {
				t.Fatalf("%d stage reports, %d steps for %d stages", len(res.Stages), len(st.Steps), len(cfg.Stages))
			}
			for i, s := range cfg.Stages {
				if res.Stages[i].Stage != s.Name() || res.Stages[i].Count != len(st.Steps[i].Items) {
					t.Errorf("stage report %d: %+v, want %s with %d items", i, res.Stages[i], s.Name(), len(st.Steps[i].Items))
				}
			}
			for _, n := range res.Notes {
				if len(n.Explain) != len(cfg.Stages) {
					t.Fatalf("%s: %d explain entries for %d stages", n.Path, len(n.Explain), len(cfg.Stages))
				}
				for i, e := range n.Explain {
					if e.Stage != cfg.Stages[i].Name() {
						t.Errorf("%s: explain entry %d is %s, want %s", n.Path, i, e.Stage, cfg.Stages[i].Name())
					}
				}
				last := n.Explain[len(n.Explain)-1]
				if last.Rank != n.Rank || last.Score != n.Score {
					t.Errorf("%s: rank %d score %v, but the last stage says rank %d score %v", n.Path, n.Rank, n.Score, last.Rank, last.Score)
				}
			}
			plain, _, err := pipeline.Run(context.Background(), env, cfg, pipeline.Request{Text: "why did compaction stall overnight", Now: testNow})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range plain.Notes {
				if n.Explain != nil {
					t.Errorf("%s: explain without asking", n.Path)
				}
			}
			if !reflect.DeepEqual(paths(plain), paths(res)) {
				t.Errorf("explain changed the ranking: %v vs %v", paths(plain), paths(res))
			}
		})
	}
}

// TestRunRelated: asked for, the top hit carries its linked notes, outgoing first; the
// others carry none.
func TestRunRelated(t *testing.T) {
	env := stagetest.Env(t, linkedVault)
	res, _, err := pipeline.Run(context.Background(), env, config(t, "keyword"), pipeline.Request{Text: "compaction stall fix throttled", Now: testNow, Related: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) < 2 || res.Notes[0].Path != "ops/compaction-stall.md" {
		t.Fatalf("notes %v, want ops/compaction-stall.md first and more after", paths(res))
	}
	type rel struct{ Path, Direction string }
	var got []rel
	for _, r := range res.Notes[0].Related {
		got = append(got, rel{r.Path, r.Direction})
	}
	want := []rel{
		{"ops/disk-pressure.md", "links to"},
		{"ops/pager.md", "links to"},
		{"notes/journal.md", "linked from"}, // disk-pressure links back too, but is listed once
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("related %v, want %v", got, want)
	}
	for _, n := range res.Notes[1:] {
		if len(n.Related) != 0 {
			t.Errorf("%s (rank %d) carries related notes", n.Path, n.Rank)
		}
	}
	raw, err := json.Marshal(res.Notes[0])
	if err != nil || !strings.Contains(string(raw), `"related":[`) {
		t.Errorf("related notes missing from the JSON: %s %v", raw, err)
	}
}

func TestRunRecencyNeedsAClock(t *testing.T) {
	env := stagetest.Env(t, linkedVault)
	cfg := config(t, "hybrid-recency")
	_, _, err := pipeline.Run(context.Background(), env, cfg, pipeline.Request{Text: "compaction"})
	if !errors.Is(err, stages.ErrNoClock) || !strings.Contains(err.Error(), "stage recency") {
		t.Fatalf("err %v, want the recency stage to refuse a query without a clock", err)
	}
	res, _, err := pipeline.Run(context.Background(), env, cfg, pipeline.Request{Text: "compaction", Now: testNow})
	if err != nil || len(res.Notes) == 0 {
		t.Fatalf("with a clock: %v %v", res, err)
	}
}

// TestRunDeterministic runs every configuration that can run here many times
// over one index: the results, scores included, never change.
func TestRunDeterministic(t *testing.T) {
	env := stagetest.Env(t, linkedVault)
	for _, name := range []string{"keyword", "vector", "hybrid", "shipping", "hybrid-recency", "hyde", "bi-encoder-note"} {
		cfg := config(t, name)
		var first []byte
		for i := 0; i < 10; i++ {
			res, _, err := pipeline.Run(context.Background(), env, cfg, pipeline.Request{Text: "the disk filled overnight", Now: testNow, Explain: true})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			res.Took = ""
			for i := range res.Stages {
				res.Stages[i].Millis = 0
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = b
			} else if string(b) != string(first) {
				t.Fatalf("%s: run %d differs:\n%s\nfirst:\n%s", name, i, b, first)
			}
		}
	}
}

// Retrievers in a row run at once (pipeline.Run) and merge in stage order:
// the result, the lists and the steps are the ones a run stage by stage
// gives.
func TestConcurrentRetrieversEqualSequential(t *testing.T) {
	env := stagetest.IndexEnv(t, filepath.Join(repoRoot, "vault"))
	cfg, err := pipeline.Parse("x.yaml", []byte("name: x\nstages:\n  - keyword: {limit: 20}\n  - vector: {limit: 20}\n  - hyde: {limit: 20}\n  - rrf: {k: 60, limit: 10}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"why did writes get slow in the middle of the night", "FERR-4102", "lease_ttl_ms"} {
		res, st, err := pipeline.Run(context.Background(), env, cfg, pipeline.Request{Text: q, Now: frozenNow})
		if err != nil {
			t.Fatal(err)
		}
		seq := stages.NewState(st.Query)
		for _, s := range cfg.Stages {
			if err := s.Run(context.Background(), env, seq); err != nil {
				t.Fatal(err)
			}
		}
		if len(seq.Steps) != len(st.Steps) || len(seq.Lists) != len(st.Lists) {
			t.Fatalf("%q: %d steps / %d lists, sequential %d / %d", q, len(st.Steps), len(st.Lists), len(seq.Steps), len(seq.Lists))
		}
		for i := range seq.Steps {
			if seq.Steps[i].Stage != st.Steps[i].Stage || !reflect.DeepEqual(seq.Steps[i].Items, st.Steps[i].Items) {
				t.Errorf("%q: step %d (%s) differs from the sequential run", q, i, seq.Steps[i].Stage)
			}
		}
		if !reflect.DeepEqual(seq.Ranking, st.Ranking) || len(res.Notes) == 0 {
			t.Errorf("%q: final ranking differs from the sequential run (or is empty)", q)
		}
	}
}

// TestRerankKeywordOnlyChunks: a bi-encoder rerank over the stored chunk
// vectors scores a note indexed for keyword search only (one too long to
// embed: here, past a limit of one chunk) by embedding its passage there,
// instead of failing for want of a stored vector.
func TestRerankKeywordOnlyChunks(t *testing.T) {
	ctx := context.Background()
	vault := stagetest.WriteVault(t, map[string]string{
		"long.md":  "# Compaction log\n\nCompaction stalled overnight.\n\n## Cause\n\nThe disk filled up.\n",
		"short.md": "# Short\n\nCompaction runs nightly.\n",
	})
	dbPath := filepath.Join(t.TempDir(), "vault.db")
	if _, err := index.Build(ctx, stagetest.Embedder(), index.BuildOptions{VaultPath: vault, DBPath: dbPath, MaxChunks: 1}); err != nil {
		t.Fatal(err)
	}
	db, err := index.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if cov, err := db.Coverage(ctx); err != nil || cov != (index.Coverage{Embedded: 1, Chunks: 1}) {
		t.Fatalf("coverage %+v (%v), want short.md's one chunk to embed, and embedded", cov, err)
	}
	env := stages.NewEnv(db, stagetest.Models{})
	res, _, err := pipeline.Run(ctx, env, config(t, "bi-encoder-chunk"), pipeline.Request{Text: "why did compaction stall overnight", Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range res.Notes {
		paths = append(paths, n.Path)
	}
	if len(paths) == 0 || paths[0] != "long.md" {
		t.Errorf("results %q, want long.md first (keyword only, reranked by its passage)", paths)
	}
}
