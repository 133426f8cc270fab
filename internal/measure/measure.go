// Package measure holds what every report of timings shares: a duration in
// milliseconds, the nearest-rank percentile, and writing a report as JSON.
// The pipeline's stage times, eval's latency columns, bench's figures and the
// load test's percentiles all go through it, so one figure is computed one way.
package measure

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Millis is d in milliseconds, to the microsecond.
func Millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// Percentile returns the p-th percentile (0..100) of durations by the
// nearest-rank method: the smallest value with at least p% of the values at or
// below it (rank ⌈p/100·n⌉). The median is Percentile(ds, 50): of an even
// count, the lower of the two middle values. ds is not changed.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	// The rounding guard keeps p/100·n that is an integer in exact arithmetic
	// but a hair above it in floating point (2.2% of 1500 is
	// 33.00000000000001) from rounding up a rank.
	i := int(math.Ceil(float64(len(s))*p/100-1e-9)) - 1
	return s[max(0, min(i, len(s)-1))]
}

// WriteJSON writes v to path as indented JSON ending in a newline, creating
// the folder.
func WriteJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the report: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}
