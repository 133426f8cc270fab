package vault

import (
	"context"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

func TestScriptCountsDominant(t *testing.T) {
	for _, tc := range []struct {
		texts []string
		want  string
	}{
		{[]string{"The lease expired at night."}, "Latin"},
		{[]string{"Идемпотентность означает одно и то же.", "keys"}, "Cyrillic"},
		// Chinese with English names: the Latin letters outnumber the Han
		// ones (a name has several letters where a Han word has one or two),
		// and the vault is still a Chinese one.
		{[]string{"用 Templater 和 Dataview 插件管理笔记模板和查询"}, "Han"},
		// Japanese: Han with more kana, not a Chinese vault.
		{[]string{"ノートをインポートする方法を説明します。"}, "Hiragana"},
		{[]string{"1234 !!", ""}, ""},
	} {
		c := ScriptCounts{}
		for _, s := range tc.texts {
			c.Add([]byte(s))
		}
		if got, _ := c.Dominant(); got != tc.want {
			t.Errorf("%q: dominant %q, want %q (%v)", tc.texts, got, tc.want, c)
		}
	}
	// Only the first KiB of a text counts.
	c := ScriptCounts{}
	long := make([]byte, 0, 4<<10)
	for len(long) < 2<<10 {
		long = append(long, "abcd "...)
	}
	for len(long) < 4<<10 {
		long = append(long, "где "...)
	}
	c.Add(long)
	if c["Cyrillic"] != 0 || c["Latin"] == 0 {
		t.Errorf("letters past the first KiB were counted: %v", c)
	}
}

func TestOutside(t *testing.T) {
	latin := func(s string) bool { return s == "Latin" }
	if got, top := CountScripts("abc где").Outside(latin); got != 0.5 || top != "Cyrillic" {
		t.Errorf("Outside = %v, %q; want 0.5, Cyrillic", got, top)
	}
	if got, top := CountScripts("123").Outside(latin); got != 0 || top != "" {
		t.Errorf("no letters: %v, %q; want 0, \"\"", got, top)
	}
	// Every letter counts, past the first KiB a note is sampled by.
	long := strings.Repeat("abcd ", 400) + strings.Repeat("где ", 2000)
	if got, _ := CountScripts(long).Outside(latin); got < 0.7 {
		t.Errorf("a text Cyrillic after its first KiB: outside share %.2f, want the whole text's", got)
	}
}

func TestDetectScript(t *testing.T) {
	root := t.TempDir()
	vaulttest.WriteTree(t, root, map[string]string{
		"导入.md": "# 从印象笔记导入\n\n你可以从印象笔记导入笔记和附件，包括 Evernote 的 ENEX 文件。\n",
		"模板.md": "# 模板\n\n在设置中启用核心插件模板。\n",
		"templates/t.md": "An English template, not a note: " +
			"it is not counted at all, however long it is.",
	}, testTime)
	script, share, err := DetectScript(context.Background(), root)
	if err != nil || script != "Han" || share < 0.5 {
		t.Errorf("DetectScript = %q, %.2f, %v; want Han, most letters", script, share, err)
	}
}
