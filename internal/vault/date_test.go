package vault

import (
	"errors"
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	at := func(y int, m time.Month, d, h, mi, s int) time.Time { return time.Date(y, m, d, h, mi, s, 0, time.UTC) }
	feb5 := at(2020, 2, 5, 0, 0, 0)
	tests := []struct {
		in   string
		want time.Time
		err  error // nil: read as want
	}{
		// Accepted: year first, so never misread.
		{"2020-02-05", feb5, nil},
		{"  2020-02-05\t", feb5, nil},
		{"20200205", feb5, nil}, // YAML reads `date: 20200205` as an integer; its text is this
		{"2020/02/05", feb5, nil},
		{"2020-2-5", feb5, nil},  // YAML's timestamps allow one-digit months and days
		{"2020/2/05", feb5, nil}, // so do the slashes
		{"2020-02-29", at(2020, 2, 29, 0, 0, 0), nil},
		{"2000-02-29", at(2000, 2, 29, 0, 0, 0), nil},
		{"2020-02-05T10:30", at(2020, 2, 5, 10, 30, 0), nil},
		{"2020-02-05T10:30:15", at(2020, 2, 5, 10, 30, 15), nil},
		{"2020-02-05 10:30", at(2020, 2, 5, 10, 30, 0), nil},
		{"2020-02-05 10:30:15", at(2020, 2, 5, 10, 30, 15), nil},
		{"2020/02/05 10:30", at(2020, 2, 5, 10, 30, 0), nil},
		{"20200205T1:05", at(2020, 2, 5, 1, 5, 0), nil},
		{"2020-02-05T10:30:00Z", at(2020, 2, 5, 10, 30, 0), nil},
		{"2020-02-05t10:30:00z", at(2020, 2, 5, 10, 30, 0), nil},
		{"2020-02-05T10:30:00.123456Z", at(2020, 2, 5, 10, 30, 0), nil},
		// An offset is checked, not applied: the day stays the one written.
		{"2020-02-05T23:30:00-05:00", at(2020, 2, 5, 23, 30, 0), nil},
		{"2020-02-05T00:30+01:00", at(2020, 2, 5, 0, 30, 0), nil},
		{"2020-02-05T10:30:00+0530", at(2020, 2, 5, 10, 30, 0), nil},
		{"2001-12-14 21:59:43.10 -5", at(2001, 12, 14, 21, 59, 43), nil}, // YAML 1.1's spaced example
		{"2001-12-14t21:59:43.10-05:00", at(2001, 12, 14, 21, 59, 43), nil},
		// A remark after a space, as the earlier reader allowed.
		{"2020-02-05 (approx)", feb5, nil},
		{"2020-02-05 Wed", feb5, nil},
		{"2020-02-05 10:30 CET", at(2020, 2, 5, 10, 30, 0), nil},

		// Refused: a day the calendar lacks.
		{"20201305", time.Time{}, errNoSuchDay},
		{"2020-13-05", time.Time{}, errNoSuchDay},
		{"2021-02-30", time.Time{}, errNoSuchDay},
		{"2021-02-29", time.Time{}, errNoSuchDay},
		{"1900-02-29", time.Time{}, errNoSuchDay},
		{"2020-04-31", time.Time{}, errNoSuchDay},
		{"2020-00-10", time.Time{}, errNoSuchDay},
		{"20200200", time.Time{}, errNoSuchDay},
		// Refused: day and month first, which reads two ways.
		{"05/02/2020", time.Time{}, errYearLast},
		{"02-05-2020", time.Time{}, errYearLast},
		{"5/2/2020", time.Time{}, errYearLast},
		{"05.02.2020", time.Time{}, errYearLast},
		{"25/12/2020", time.Time{}, errYearLast}, // the form is refused, not only the ambiguous days
		{"05/02/20", time.Time{}, errYearLast},
		// Refused: not a date.
		{"next tuesday", time.Time{}, errNotADate},
		{"2020", time.Time{}, errNotADate},
		{"202002", time.Time{}, errNotADate},
		{"2020020", time.Time{}, errNotADate},
		{"202002051030", time.Time{}, errNotADate}, // a Zettelkasten id, not a date
		{"2020-02-05x", time.Time{}, errNotADate},
		{"2020-02/05", time.Time{}, errNotADate},
		{"2020.02.05", time.Time{}, errNotADate},
		{"2020-002-05", time.Time{}, errNotADate},
		{"2020-02-05T", time.Time{}, errNotADate},
		{"2020-02-05T25:00", time.Time{}, errNotADate},
		{"2020-02-05T10:60", time.Time{}, errNotADate},
		{"2020-02-05T10:30:61", time.Time{}, errNotADate},
		{"2020-02-05T10", time.Time{}, errNotADate},
		{"2020-02-05 10:30 99", time.Time{}, errNotADate},
		{"2020-02-05T10:30+25:00", time.Time{}, errNotADate},
		{"2020-02-05T10:30+01:75", time.Time{}, errNotADate},
		{"2020-02-05 -", time.Time{}, errNotADate},
		{"{{date}}", time.Time{}, errNotADate},
		{"", time.Time{}, errNotADate},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseDate(tc.in)
			if !errors.Is(err, tc.err) {
				t.Fatalf("parseDate(%q) error %v, want %v", tc.in, err, tc.err)
			}
			if !got.Equal(tc.want) || (err == nil && got.Location() != time.UTC) {
				t.Errorf("parseDate(%q) = %v, want %v (UTC)", tc.in, got, tc.want)
			}
		})
	}
}

// TestFileNameDate: a file name's date goes through the same reader, so a
// day the calendar lacks is refused there too.
func TestFileNameDate(t *testing.T) {
	mod := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	tests := []struct {
		path   string
		want   time.Time
		source string
	}{
		{"sessions/2025-11-18-lease-expiry-storm.md", time.Date(2025, 11, 18, 0, 0, 0, 0, time.UTC), "filename"},
		{"2020-02-29.md", time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC), "filename"},
		{"2021-02-30-review.md", mod, "mtime"},
		{"2020-13-01 plan.md", mod, "mtime"},
		{"2026-02-03/notes.md", mod, "mtime"},
	}
	for _, tc := range tests {
		got, source, err := effectiveDate("", tc.path, mod)
		if err != nil || !got.Equal(tc.want) || source != tc.source {
			t.Errorf("effectiveDate(%q) = %v (%s, %v), want %v (%s)", tc.path, got, source, err, tc.want, tc.source)
		}
	}
}
