package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/pipeline"
)

// FuzzParseConfig: Parse takes any bytes; a refusal names the file first, and
// an accepted configuration has at least one stage, a name, a retrieval stage
// first, and parses the same way twice.
func FuzzParseConfig(f *testing.F) {
	for _, dir := range []string{"configs", "experiments"} {
		paths, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*.yaml"))
		for _, p := range paths {
			raw, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
		}
	}
	for _, s := range []string{
		"",
		"stages: []",
		"stages:\n  - keyword:\n",
		"stages:\n  - rrf: {k: 60}\n",
		"stages:\n  - keyword: {limit: forty}\n",
		"stages:\n  - keyword: {limit: 40, limit: 41}\n",
		"stages:\n  - keyword: {}\n    vector: {}\n",
		"name: [x]\nstages:\n  - vector: {ladder: [3, 2]}\n",
		"stages: &a\n  - keyword: *a\n",
		"a: &a [*a, *a]\n",
		"\t- tabs",
		"--- !!binary\n",
		"stages:\n  - recency: {weight: -1}\n",
		"stages:\n  - keyword: {limit: 99999999999999999999}\n",
		"%YAML 1.1\n---\nstages:\n- keyword:\n",
	} {
		f.Add([]byte(s))
	}
	const file = "fuzz.yaml"
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := pipeline.Parse(file, raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), file+":") {
				t.Fatalf("error does not start with the file name: %v", err)
			}
			if cfg != nil {
				t.Fatalf("error %v with a configuration", err)
			}
			return
		}
		if len(cfg.Stages) == 0 {
			t.Fatal("accepted a configuration without stages")
		}
		if cfg.Name == "" || cfg.File != file {
			t.Fatalf("name %q, file %q", cfg.Name, cfg.File)
		}
		switch first := cfg.Stages[0].Name(); first {
		case "keyword", "vector", "hyde":
		default:
			t.Fatalf("first stage %s is not a retrieval stage", first)
		}
		again, err := pipeline.Parse(file, raw)
		if err != nil {
			t.Fatalf("parsed once, refused the second time: %v", err)
		}
		if len(again.Stages) != len(cfg.Stages) || again.Name != cfg.Name {
			t.Fatalf("second parse: %d stages named %q, first: %d named %q", len(again.Stages), again.Name, len(cfg.Stages), cfg.Name)
		}
		for i := range cfg.Stages {
			if a, b := cfg.Stages[i].Name(), again.Stages[i].Name(); a != b {
				t.Fatalf("stage %d is %s, then %s", i, a, b)
			}
			// Validate filled in defaults; running it again must accept them.
			if err := cfg.Stages[i].Validate(); err != nil {
				t.Fatalf("stage %d (%s) refuses its own defaults: %v", i, cfg.Stages[i].Name(), err)
			}
		}
	})
}
