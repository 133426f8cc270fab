package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepRefusals covers what `vault-rag sweep` refuses before it loads
// a model: eval's flags it does not take, a missing sweep file operand, a
// second operand and a bad sweep file, named with its line.
func TestSweepRefusals(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("base: hybrid\ngrid:\n  rrf.k: [20]\nfold: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(repoRoot, "experiments", "sweeps", "rrf-depth.yaml")
	cases := []struct {
		args []string
		want string
	}{
		// A sweep runs its own grid: eval's --check, --update, --config and
		// --expansions-variant are not its flags, before or after the file.
		{[]string{good, "--check"}, "unknown flag --check"},
		{[]string{"--update", good}, "unknown flag --update"},
		{[]string{good, "--config", "hybrid"}, "unknown flag --config"},
		{[]string{good, "--expansions-variant", "x=" + t.TempDir()}, "unknown flag --expansions-variant"},
		{[]string{"--sweep-out", "x.yaml"}, "name the sweep file"},
		{[]string{good, good}, "unexpected argument"},
		{[]string{"--root", repoRoot, bad}, bad + `:4: unknown key "fold"`},
		{[]string{bad, "--root", repoRoot}, bad + `:4: unknown key "fold"`},
		{[]string{"--root", repoRoot, filepath.Join(t.TempDir(), "missing.yaml")}, "read sweep:"},
	}
	for _, c := range cases {
		err := cmdSweep(context.Background(), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("sweep %v: error %v, want it to contain %q", c.args, err, c.want)
		}
	}
	// The committed example sweep decodes, its flags read after the file.
	if err := cmdSweep(context.Background(), []string{good, "--root", repoRoot, "--dataset", filepath.Join(t.TempDir(), "none")}); err == nil || !strings.Contains(err.Error(), "is none of these: ") {
		t.Errorf("the example sweep: %v (want it to decode and stop at the missing dataset)", err)
	}
}

// TestEvalSweepMoved: eval's former --sweep and --sweep-out fail with one
// line naming the sweep command, exit 2, before anything is loaded.
func TestEvalSweepMoved(t *testing.T) {
	good := filepath.Join(repoRoot, "experiments", "sweeps", "rrf-depth.yaml")
	for _, args := range [][]string{
		{"--sweep", good},
		{"--root", repoRoot, "-sweep=" + good, "--dataset", "demo"},
		{"--sweep-out", "x.yaml"},
	} {
		err := cmdEval(context.Background(), args)
		var ex exitError
		if !errors.As(err, &ex) || ex.code != 2 || !strings.Contains(ex.msg, "vault-rag sweep FILE.yaml") || strings.Contains(ex.msg, "\n") {
			t.Errorf("eval %v: %v, want exit 2 with one line pointing at vault-rag sweep", args, err)
		}
	}
}

// TestEvalExpansionsVariantFlag covers what --expansions-variant refuses
// while the flags are read, before any dataset or model is loaded.
func TestEvalExpansionsVariantFlag(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--expansions-variant", dir}, "want NAME=DIR"},
		{[]string{"--expansions-variant", "Vault Language=" + dir}, "lower-case letters"},
		{[]string{"--expansions-variant", "client=" + dir}, `"client" is a built-in variant`},
		{[]string{"--expansions-variant", "vault-language=" + filepath.Join(dir, "missing")}, "read expansion set vault-language"},
		{[]string{"--expansions-variant", "a=" + dir, "--expansions-variant", "a=" + dir}, `expansion set "a" is given twice`},
	}
	for _, c := range cases {
		err := cmdEval(context.Background(), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "-expansions-variant") {
			t.Errorf("eval %v: error %v, want it to name the flag and contain %q", c.args, err, c.want)
		}
	}
}
