package measure

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func ms(xs ...int) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred, many := make([]time.Duration, 100), make([]time.Duration, 1500)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for i := range many {
		many[i] = time.Duration(i+1) * time.Millisecond
	}
	cases := []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(4, 1, 3, 2), 50, 2 * time.Millisecond},    // rank ⌈2⌉ = 2: of an even count, the lower middle
		{ms(5, 1, 4, 2, 3), 50, 3 * time.Millisecond}, // rank ⌈2.5⌉ = 3
		{ms(3, 1, 2), 50, 2 * time.Millisecond},       // bench's median of 3
		// rank ⌈1.4⌉ = 2: rounding to the nearest (1) would put fewer than
		// 14% of the values at or below it.
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 14, 2 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 95, 19 * time.Millisecond}, // rank 19 exactly
		{ms(3, 1, 2), 100, 3 * time.Millisecond},
		{ms(3, 1, 2), 0, 1 * time.Millisecond},
		{hundred, 50, 50 * time.Millisecond},
		{hundred, 95, 95 * time.Millisecond},
		{hundred, 99, 99 * time.Millisecond},
		{hundred, 100, 100 * time.Millisecond},
		{hundred, 0, 1 * time.Millisecond},
		{many, 2.2, 33 * time.Millisecond}, // 1500·2.2/100 is 33.00000000000001 in floating point
	}
	for _, c := range cases {
		if got := Percentile(c.in, c.p); got != c.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.in, c.p, got, c.want)
		}
	}
	in := ms(3, 1, 2)
	Percentile(in, 50)
	if in[0] != 3*time.Millisecond {
		t.Errorf("Percentile sorted its argument: %v", in)
	}
}

func TestMillis(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want float64
	}{
		{0, 0},
		{1500 * time.Microsecond, 1.5},
		{1500*time.Microsecond + 999, 1.5}, // below a microsecond is dropped
		{2 * time.Second, 2000},
	} {
		if got := Millis(c.d); got != c.want {
			t.Errorf("Millis(%v) = %v, want %v", c.d, got, c.want)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report", "x.json")
	if err := WriteJSON(path, map[string]any{"a": 1, "b": []string{"<c>"}}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": 1,\n  \"b\": [\n    \"\\u003cc\\u003e\"\n  ]\n}\n"
	if string(raw) != want {
		t.Errorf("WriteJSON wrote %q, want %q", raw, want)
	}
	if err := WriteJSON(path, func() {}); err == nil {
		t.Error("WriteJSON of a func: no error")
	}
}
