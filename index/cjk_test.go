package index

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

func TestSplitCJK(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"compaction stall at night", "compaction stall at night"},
		{"", ""},
		{"从印象笔记导入", " 从印 印象 象笔 笔记 记导 导入 "},
		{"如何使用Obsidian的模板", " 如何 何使 使用 Obsidian 的模 模板 "},
		{"中", " 中 "},
		{"设置，插件。", " 设置 ， 插件 。"},
		{"コンピューター", " コン ンピ ピュ ュー ータ ター "},
		{"한국어 검색", " 한국 국어   검색 "},
		{"bad \xff 字 \xfe", "bad \xff  字  \xfe"},
	} {
		if got := SplitCJK(tc.in); got != tc.want {
			t.Errorf("SplitCJK(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// English text comes back as the same string, not a copy with the same bytes.
	en := "lease_ttl_ms FERR-4102 naïve café"
	if got := SplitCJK(en); got != en {
		t.Errorf("SplitCJK(%q) = %q", en, got)
	}
}

// TestKeywordFindsAChineseWordInsideARun: 印象笔记 inside 从印象笔记导入
// matches a query for 印象笔记, on the postings and by FTS5, and an English
// note is found as before.
func TestKeywordFindsAChineseWordInsideARun(t *testing.T) {
	vault := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "index.db")
	vaulttest.WriteTree(t, vault, map[string]string{
		"导入.md":    "# 从印象笔记导入\n\n你可以从印象笔记导入笔记和附件。\n",
		"模板.md":    "# 模板\n\n在设置中启用核心插件模板。\n",
		"lease.md": "# Lease\n\nThe lease_ttl_ms setting bounds a lease.\n",
	}, testTime)
	build(t, newFake(), vault, dbPath, false)
	postingsAgree(t, dbPath)
	d := open(t, dbPath)
	ctx := context.Background()
	if script, share := d.Script(); script != "Han" || share < 0.25 {
		t.Errorf("the index records the vault's script %q (%.2f), want Han", script, share)
	}
	for _, tc := range []struct {
		terms []string
		want  string
	}{
		{[]string{"印象", "象笔", "笔记"}, "导入.md"},
		{[]string{"模板"}, "模板.md"},
		{[]string{"lease"}, "lease.md"},
	} {
		for _, engine := range []Engine{EnginePostings, EngineFTS5} {
			hits, err := d.Keyword(ctx, KeywordQuery{Terms: tc.terms, Limit: 5, Engine: engine})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 {
				t.Errorf("%v (engine %d): no hit, want %s", tc.terms, engine, tc.want)
				continue
			}
			if got := notePath(t, d, hits[0].NoteID); got != tc.want {
				t.Errorf("%v (engine %d): first hit %s, want %s", tc.terms, engine, got, tc.want)
			}
		}
	}
}

func notePath(t *testing.T, d *DB, id int64) string {
	t.Helper()
	rows, err := d.Notes(context.Background(), []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	return rows[id].Path
}

// TestEvidence: a chunk's share of the query's rare-term weight — rare terms
// it holds over all rare terms, by idf — with common terms left out.
func TestEvidence(t *testing.T) {
	vault := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "index.db")
	files := map[string]string{
		"both.md":   "# Both\n\nthe wombat digs a burrow\n",
		"burrow.md": "# Burrow\n\nthe burrow is deep\n",
	}
	for i := 0; i < 28; i++ {
		files[fmt.Sprintf("n%02d.md", i)] = fmt.Sprintf("# Note %d\n\nthe common words of note %d\n", i, i)
	}
	vaulttest.WriteTree(t, vault, files, testTime)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	ctx := context.Background()
	chunkOf := func(path string) int64 {
		n, err := d.NoteByPath(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := d.NoteChunks(ctx, n.ID)
		if err != nil || len(cs) == 0 {
			t.Fatalf("%s: chunks %v, %v", path, cs, err)
		}
		return cs[0].ID
	}
	q := KeywordQuery{Terms: []string{"the", "wombat", "burrow"}, CommonShare: 0.1}
	// 30 chunks: wombat in 1, burrow in 2 (rare); "the" in all (common).
	idf := func(df float64) float64 { return math.Log((30 - df + 0.5) / (df + 0.5)) }
	for _, tc := range []struct {
		path string
		held float64
	}{
		{"both.md", idf(1) + idf(2)},
		{"burrow.md", idf(2)},
		{"n00.md", 0},
	} {
		held, total, err := d.Evidence(ctx, q, chunkOf(tc.path))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(total-(idf(1)+idf(2))) > 1e-9 || math.Abs(held-tc.held) > 1e-9 {
			t.Errorf("%s: held %.4f of %.4f, want %.4f of %.4f", tc.path, held, total, tc.held, idf(1)+idf(2))
		}
	}
	// Only common terms: no judgement.
	if _, total, err := d.Evidence(ctx, KeywordQuery{Terms: []string{"the", "common"}, CommonShare: 0.1}, chunkOf("n00.md")); err != nil || total != 0 {
		t.Errorf("common terms only: total %v, %v; want 0", total, err)
	}
}
