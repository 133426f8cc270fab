package index

import (
	"context"
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
		for _, engine := range []Engine{Postings, FTS5} {
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
