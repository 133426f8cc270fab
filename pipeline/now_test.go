package pipeline_test

import (
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/pipeline"
)

func TestParseNow(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-03-01", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), true},
		{"2026-03-01T12:30:00Z", time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC), true},
		{"2026-03-01T12:30:00.5+01:00", time.Date(2026, 3, 1, 11, 30, 0, 5e8, time.UTC), true}, // to UTC
		{"", time.Time{}, false}, // the caller's to fill
		{"2026-02-30", time.Time{}, false},
		{"01/03/2026", time.Time{}, false},
		{"yesterday", time.Time{}, false},
	} {
		got, ok := pipeline.ParseNow(tc.in)
		if ok != tc.ok || !got.Equal(tc.want) || (ok && got.Location() != time.UTC) {
			t.Errorf("ParseNow(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
