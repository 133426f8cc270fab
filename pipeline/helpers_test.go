package pipeline_test

import (
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/pipeline"
)

// repoRoot holds configs/, experiments/ and vault/ (tests run in pipeline/).
const repoRoot = ".."

// testNow is the clock every test query carries.
var testNow = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// config loads a configuration of the repository by name.
func config(t *testing.T, name string) *pipeline.Config {
	t.Helper()
	cfg, err := pipeline.Find(repoRoot, name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// inline parses a configuration written in the test.
func inline(t *testing.T, yaml string) *pipeline.Config {
	t.Helper()
	cfg, err := pipeline.Parse("inline.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func paths(res *pipeline.Result) []string {
	out := make([]string, len(res.Notes))
	for i, n := range res.Notes {
		out[i] = n.Path
	}
	return out
}

// stageStep returns what the named stage did.
func stageStep(t *testing.T, res *pipeline.Result, stage string) pipeline.StageInfo {
	t.Helper()
	for _, s := range res.Stages {
		if s.Stage == stage {
			return s
		}
	}
	t.Fatalf("no %s stage in %+v", stage, res.Stages)
	return pipeline.StageInfo{}
}

// stageInfo returns the named stage's line for people.
func stageInfo(t *testing.T, res *pipeline.Result, stage string) string {
	t.Helper()
	return stageStep(t, res, stage).Info
}

// stageOutcome returns how the named stage's scope search ended.
func stageOutcome(t *testing.T, res *pipeline.Result, stage string) index.ScopeOutcome {
	t.Helper()
	return stageStep(t, res, stage).Outcome
}
