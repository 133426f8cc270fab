// Package modeltest holds the one decision every test that needs a model, ONNX
// Runtime or Hugging Face's tokenizers (to compare ours with) makes when that
// thing is missing: skip on a developer's machine, fail in CI.
//
// .ci/run sets VAULT_RAG_REQUIRE_MODELS=1, so a CI machine whose setup stamp
// lies (no models, no runtime) cannot come out green with the model tests
// skipped. A developer without models still gets skips, with the reason.
package modeltest

import (
	"os"
	"strings"
	"testing"
)

// RequireEnv is the switch: set to 1 (or true, yes) a missing model fails the test.
const RequireEnv = "VAULT_RAG_REQUIRE_MODELS"

// Required reports whether missing models fail tests instead of skipping them.
func Required() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(RequireEnv))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Missing ends the test because something it needs is not installed: a skip
// with the reason, or, under VAULT_RAG_REQUIRE_MODELS=1, a failure.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf(RequireEnv+"=1 and a model the test needs is missing: "+format, args...)
		return
	}
	t.Skipf(format, args...)
}
