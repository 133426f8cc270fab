package pipeline_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
)

// TestMissing: on a machine with no model installed, each stage names the
// models it lacks, in stage order; a configuration needing none can run.
func TestMissing(t *testing.T) {
	reg, err := models.NewRegistry(t.TempDir(), models.Runtime{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, src string
		want      []pipeline.MissingModel
		err       string
	}{
		{"keyword only", "stages:\n  - keyword: {}\n", nil, ""},
		{"vector and rerank", "stages:\n  - vector: {}\n  - rerank: {model: ms-marco-MiniLM-L-6-v2}\n", []pipeline.MissingModel{
			{Stage: "vector", Model: models.DefaultEmbedder, Role: "embedder", Problem: "not fetched"},
			{Stage: "rerank", Model: "ms-marco-MiniLM-L-6-v2", Role: "cross-encoder", Problem: "not fetched"},
		}, ""},
		{"a cost stand-in says so", "stages:\n  - keyword: {}\n  - rerank: {model: all-MiniLM-L6-v2-standin}\n", []pipeline.MissingModel{
			{Stage: "rerank", Model: "all-MiniLM-L6-v2-standin", Role: models.RoleCostStandIn, Problem: "not fetched"},
		}, ""},
		{"a model the manifest lacks", "stages:\n  - keyword: {}\n  - rerank: {model: no-such-model}\n", nil, `stage rerank: unknown model "no-such-model"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := pipeline.Parse("x.yaml", []byte("name: x\n"+tc.src))
			if err != nil {
				t.Fatal(err)
			}
			got, err := pipeline.Missing(cfg, reg, models.DefaultEmbedder)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Missing = %+v, %v; want %+v", got, err, tc.want)
			}
			words, err := pipeline.MissingModels(cfg, reg, models.DefaultEmbedder)
			if err != nil || len(words) != len(got) {
				t.Fatalf("MissingModels = %q, %v", words, err)
			}
			for i, m := range got {
				if want := "stage " + m.Stage + " needs " + m.Model + " (" + string(m.Role) + "): " + m.Problem; words[i] != want {
					t.Errorf("MissingModels[%d] = %q, want %q", i, words[i], want)
				}
			}
		})
	}
}

// TestNames: the configurations of configs/ then experiments/, each sorted,
// a name in both once, and nothing else (not experiments/lab, not other
// files, not a file no client could name: sweep-x.v2.yaml).
func TestNames(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"configs/shipping.yaml", "configs/hybrid.yaml", "configs/README.md", "experiments/hybrid.yaml",
		"experiments/a-test.yaml", "experiments/lab/deep.yaml", "experiments/sweeps/s.yaml", "experiments/sweep-x.v2.yaml"} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := pipeline.Names(root)
	if want := []string{"hybrid", "shipping", "a-test"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Names = %q, %v; want %q", got, err, want)
	}
	if got, err := pipeline.Names(t.TempDir()); err != nil || len(got) != 0 {
		t.Errorf("Names of a folder without configurations = %q, %v", got, err)
	}
}

// TestFindNames: Find takes a valid name (pipeline.ValidName, the rule the
// server and sweeps share) or a path, and refuses any other name.
func TestFindNames(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"configs/x.yaml", "experiments/sweep-x.v2.yaml"} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("stages:\n  - keyword: {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name        string
		valid, find bool
	}{
		{"x", true, true},
		{filepath.Join(root, "experiments", "sweep-x.v2.yaml"), false, true}, // a path
		{"sweep-x.v2", false, false},
		{"-x", false, false},
		{strings.Repeat("x", 64), true, false}, // valid, but there is none
		{strings.Repeat("x", 65), false, false},
	} {
		if got := pipeline.ValidName(tc.name); got != tc.valid {
			t.Errorf("ValidName(%q) = %v", tc.name, got)
		}
		_, err := pipeline.Find(root, tc.name)
		if (err == nil) != tc.find {
			t.Errorf("Find(%q): %v", tc.name, err)
		}
		if !tc.valid && !tc.find && (err == nil || !strings.Contains(err.Error(), pipeline.NameRule)) {
			t.Errorf("Find(%q) = %v, want it to give the rule", tc.name, err)
		}
	}
}
