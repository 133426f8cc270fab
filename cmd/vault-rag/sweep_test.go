package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalSweepRefusals covers what `eval --sweep` refuses before it loads a
// model: conflicting flags and a bad sweep file, named with its line.
func TestEvalSweepRefusals(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("base: hybrid\ngrid:\n  rrf.k: [20]\nfold: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(repoRoot, "experiments", "sweeps", "rrf-depth.yaml")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--sweep", good, "--check"}, "--sweep runs its own grid"},
		{[]string{"--sweep", good, "--config", "hybrid"}, "--sweep runs its own grid"},
		{[]string{"--sweep", good, "--expansions-variant", "x=" + t.TempDir()}, "--sweep runs its own grid"},
		{[]string{"--sweep-out", "x.yaml"}, "--sweep-out needs --sweep"},
		{[]string{"--root", repoRoot, "--sweep", bad}, bad + `:4: unknown key "fold"`},
		{[]string{"--root", repoRoot, "--sweep", filepath.Join(t.TempDir(), "missing.yaml")}, "read sweep:"},
	}
	for _, c := range cases {
		err := cmdEval(context.Background(), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("eval %v: error %v, want it to contain %q", c.args, err, c.want)
		}
	}
	// The committed example sweep decodes.
	if err := cmdEval(context.Background(), []string{"--root", repoRoot, "--sweep", good, "--dataset", filepath.Join(t.TempDir(), "none")}); err == nil || !strings.Contains(err.Error(), "nor a BEIR-layout folder") {
		t.Errorf("the example sweep: %v (want it to decode and stop at the missing dataset)", err)
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
