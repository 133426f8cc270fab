package modeltest

import "testing"

func TestRequired(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "no": false, "1": true, "true": true, "YES": true, " on ": true} {
		t.Setenv(RequireEnv, v)
		if got := Required(); got != want {
			t.Errorf("%s=%q: Required() = %v, want %v", RequireEnv, v, got, want)
		}
	}
}

// fakeT records what Missing did to a test.
type fakeT struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeT) Helper()                       {}
func (f *fakeT) Skipf(format string, a ...any) { f.skipped = true }
func (f *fakeT) Fatalf(format string, a ...any) {
	f.failed = true
	f.msg = format
}

func TestMissingSkipsOrFails(t *testing.T) {
	t.Setenv(RequireEnv, "")
	f := &fakeT{}
	Missing(f, "no model %s", "x")
	if !f.skipped || f.failed {
		t.Errorf("without the switch: skipped=%v failed=%v, want a skip", f.skipped, f.failed)
	}
	t.Setenv(RequireEnv, "1")
	f = &fakeT{}
	Missing(f, "no model %s", "x")
	if f.skipped || !f.failed {
		t.Errorf("with the switch: skipped=%v failed=%v, want a failure", f.skipped, f.failed)
	}
}
