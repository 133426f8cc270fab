package index

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vaultfs"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

// A note's aliases are searched as its title: a word that only an alias holds
// finds the note, by either engine, and stops finding it once the alias is
// gone; the title shown stays the title.
func TestAliasesSearchedAsTitle(t *testing.T) {
	vault := filepath.Join(t.TempDir(), "vault")
	dbPath := filepath.Join(t.TempDir(), "vault.db")
	vaulttest.WriteTree(t, vault, map[string]string{
		"submit.md": "---\naliases:\n  - Publish your zanzibarite\n---\n# Submit a theme\nPrepare a release.\n",
		"mobile.md": "---\naliases: 移动端应用\nalias: [Quokkaphone]\n---\n# Mobile\nUse the app.\n",
		"other.md":  "# Other\nNothing here.\n",
	}, testTime)
	before := vaulttest.MustDigest(t, vault)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	for _, tc := range []struct{ match, want string }{
		{`"zanzibarite"`, "submit.md"},
		{`"quokkaphone"`, "mobile.md"},
		{`"移动"`, "mobile.md"}, // CJK aliases are split into bigrams, as titles are
	} {
		for _, e := range []Engine{EnginePostings, EngineFTS5} {
			hits, err := d.Keyword(context.Background(), KeywordQuery{Match: tc.match, Limit: 10, Engine: e})
			if err != nil {
				t.Fatal(err)
			}
			if got := hitPaths(t, d, hits); !reflect.DeepEqual(got, []string{tc.want}) {
				t.Errorf("engine %d, Keyword(%s) = %v, want [%s]", e, tc.match, got, tc.want)
			}
		}
	}
	n, err := d.NoteByPath(context.Background(), "submit.md")
	if err != nil {
		t.Fatal(err)
	}
	if n.Title != "Submit a theme" {
		t.Errorf("title %q, want the heading alone", n.Title)
	}

	if diff := vaultfs.Diff(before, vaulttest.MustDigest(t, vault), ""); diff != nil {
		t.Errorf("the build changed the vault: %q", diff)
	}

	// An incremental build that drops the alias forgets its word.
	vaulttest.WriteTree(t, vault, map[string]string{"submit.md": "# Submit a theme\nPrepare a release.\n"}, testTime.Add(1))
	before = vaulttest.MustDigest(t, vault)
	build(t, newFake(), vault, dbPath, true)
	d = open(t, dbPath)
	for _, e := range []Engine{EnginePostings, EngineFTS5} {
		hits, err := d.Keyword(context.Background(), KeywordQuery{Match: `"zanzibarite"`, Limit: 10, Engine: e})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 0 {
			t.Errorf("engine %d: the dropped alias still finds %v", e, hitPaths(t, d, hits))
		}
	}
	if diff := vaultfs.Diff(before, vaulttest.MustDigest(t, vault), ""); diff != nil {
		t.Errorf("the incremental build changed the vault: %q", diff)
	}
}
