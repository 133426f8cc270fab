package eval_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/internal/evaltest"
)

// repoRoot holds configs/, eval/ and vault/ (tests run in eval/).
const repoRoot = ".."

func TestParseExpansionDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "demo.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value, want string // want: "" accepted, else a part of the error
	}{
		{"vault-language=" + dir, ""},
		{"v2=" + dir, ""},
		{dir, "want NAME=DIR"},
		{"=" + dir, "want NAME=DIR"},
		{"vault-language=", "want NAME=DIR"},
		{"Vault=" + dir, "lower-case letters"},
		{"vault language=" + dir, "lower-case letters"},
		{"a+b=" + dir, "lower-case letters"},
		{"-x=" + dir, "lower-case letters"},
		{"client=" + dir, "built-in variant"},
		{"echo=" + dir, "built-in variant"},
		{"mismatched=" + dir, "built-in variant"},
		{"x=" + filepath.Join(dir, "missing"), "no such file"},
		{"x=" + file, "is not a folder"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			got, err := eval.ParseExpansionDir(tc.value)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
				name, d, _ := strings.Cut(tc.value, "=")
				if got.Name != name || got.Dir != d {
					t.Errorf("read as %+v", got)
				}
			case err == nil:
				t.Fatalf("accepted as %+v, want an error with %q", got, tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
	// As a flag, a name may be given once.
	var dirs eval.ExpansionDirs
	if err := dirs.Set("a=" + dir); err != nil {
		t.Fatal(err)
	}
	if err := dirs.Set("a=" + dir); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a repeated name: %v", err)
	}
	if err := dirs.Set("b=" + dir); err != nil || len(dirs) != 2 || dirs.String() != "a="+dir+",b="+dir {
		t.Errorf("two sets: %v, %q", err, dirs.String())
	}
}

// TestLoadExpansionSetsChecksTheFile: a set's file is held to the same
// checks as the dataset's own expansions, and the error names the set.
func TestLoadExpansionSetsChecksTheFile(t *testing.T) {
	demo, err := eval.LoadDemo(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	evaltest.WriteExpansions(t, filepath.Join(dir, "demo.json"), demo.Queries[1:], func(q eval.Query) string { return q.Text })
	err = eval.LoadExpansionSets(demo, []eval.ExpansionDir{{Name: "short", Dir: dir}})
	if err == nil || !strings.Contains(err.Error(), "expansion set short") || !strings.Contains(err.Error(), "no expansion for query "+demo.Queries[0].ID) {
		t.Errorf("a set missing a query: %v", err)
	}
}
