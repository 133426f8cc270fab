package vault

import (
	"regexp"
	"strings"
	"time"
)

// dateError says why a written date was not read as one. Its text is worded
// the same for every note with the problem, so a report can count them.
type dateError string

func (e dateError) Error() string { return string(e) }

// The ways a written date is refused.
const (
	errNotADate  dateError = "is not a date (write it year first: YYYY-MM-DD)"
	errNoSuchDay dateError = "is not a day of the calendar"
	errYearLast  dateError = "puts the year last, where day and month cannot be told apart (write it year first: YYYY-MM-DD)"
)

// yearLast matches the day-and-month-first orders (05/02/2020, 02-05-2020,
// 5.2.20): 5 February to some, 2 May to others.
var yearLast = regexp.MustCompile(`^\d{1,2}[-/.]\d{1,2}[-/.]\d{2}(\d{2})?\b`)

// parseDate reads a date as people write it in frontmatter and file names,
// year first so that it cannot be misread: YYYY-MM-DD, YYYYMMDD (also as YAML
// reads it, an integer), YYYY/MM/DD, each optionally followed by a time
// ("T" or spaces, then HH:MM[:SS[.fraction]], then "Z" or an offset ±hh[:mm]):
// RFC 3339, "YYYY-MM-DD HH:MM" and YAML's timestamps. A month or day may have
// one digit (YAML allows 2020-2-5). After all that, a space and words that do
// not start with a digit are a remark and ignored ("2020-02-05 (approx)").
//
// The result is the date and time as written, in UTC: an offset is not
// applied, so the day stays the one the note's author wrote. A day the
// calendar lacks (2021-02-30, 20201305) and a date with the year last
// (05/02/2020) are refused, with an error saying which.
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	y, mo, d, rest, ok := datePart(s)
	if !ok {
		if yearLast.MatchString(s) {
			return time.Time{}, errYearLast
		}
		return time.Time{}, errNotADate
	}
	var h, mi, sec int
	if rest != "" && !isRemark(rest) {
		if h, mi, sec, rest, ok = timePart(rest); !ok || (rest != "" && !isRemark(rest)) {
			return time.Time{}, errNotADate
		}
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(time.Month(mo), y) {
		return time.Time{}, errNoSuchDay
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC), nil
}

// datePart reads the date at the start of s: YYYYMMDD, or YYYY-M(M)-D(D) or
// YYYY/M(M)/D(D) with the same separator twice; rest is what follows it.
func datePart(s string) (y, mo, d int, rest string, ok bool) {
	if y, rest, ok = digits(s, 4, 4); !ok {
		return 0, 0, 0, "", false
	}
	if rest != "" && isDigit(rest[0]) {
		// YYYYMMDD: exactly eight digits (202002051030 is an id, not a date).
		if mo, rest, ok = digits(rest, 2, 2); ok {
			d, rest, ok = digits(rest, 2, 2)
		}
		if !ok || (rest != "" && isDigit(rest[0])) {
			return 0, 0, 0, "", false
		}
		return y, mo, d, rest, true
	}
	if rest == "" || (rest[0] != '-' && rest[0] != '/') {
		return 0, 0, 0, "", false
	}
	sep := rest[0]
	if mo, rest, ok = digits(rest[1:], 1, 2); !ok || rest == "" || rest[0] != sep {
		return 0, 0, 0, "", false
	}
	if d, rest, ok = digits(rest[1:], 1, 2); !ok || (rest != "" && isDigit(rest[0])) {
		return 0, 0, 0, "", false
	}
	return y, mo, d, rest, true
}

// timePart reads a time of day after a date: "T" (or "t") or spaces, then
// H(H):MM, optionally :SS and a fraction, then optionally (after spaces) "Z"
// or an offset ±h, ±hh, ±hhmm or ±hh:mm, which is checked and not applied.
func timePart(s string) (h, mi, sec int, rest string, ok bool) {
	switch {
	case s[0] == 'T' || s[0] == 't':
		s = s[1:]
	case s[0] == ' ' || s[0] == '\t':
		s = strings.TrimLeft(s, " \t")
	default:
		return 0, 0, 0, "", false
	}
	if h, s, ok = digits(s, 1, 2); !ok || h > 23 || s == "" || s[0] != ':' {
		return 0, 0, 0, "", false
	}
	if mi, s, ok = digits(s[1:], 2, 2); !ok || mi > 59 {
		return 0, 0, 0, "", false
	}
	if s != "" && s[0] == ':' {
		if sec, s, ok = digits(s[1:], 2, 2); !ok || sec > 59 {
			return 0, 0, 0, "", false
		}
		if s != "" && s[0] == '.' {
			if _, s, ok = digits(s[1:], 1, 9); !ok {
				return 0, 0, 0, "", false
			}
		}
	}
	zone := strings.TrimLeft(s, " \t")
	switch {
	case zone == "":
		return h, mi, sec, zone, true
	case zone[0] == 'Z' || zone[0] == 'z':
		return h, mi, sec, zone[1:], true
	case zone[0] == '+' || zone[0] == '-':
		oh, r, ok := digits(zone[1:], 1, 2)
		if !ok || oh > 14 {
			return 0, 0, 0, "", false
		}
		if r != "" && r[0] == ':' {
			r = r[1:]
		}
		if r != "" && isDigit(r[0]) {
			var om int
			if om, r, ok = digits(r, 2, 2); !ok || om > 59 {
				return 0, 0, 0, "", false
			}
		}
		return h, mi, sec, r, true
	}
	return h, mi, sec, s, true
}

// isRemark reports whether what follows a date is a remark: spaces, then
// something that is neither a digit nor a sign (which would be a time or an
// offset).
func isRemark(s string) bool {
	t := strings.TrimLeft(s, " \t")
	return len(t) < len(s) && t != "" && !isDigit(t[0]) && t[0] != '+' && t[0] != '-'
}

// digits reads between lo and hi decimal digits at the start of s (as many as
// there are, up to hi) and returns their value and what follows.
func digits(s string, lo, hi int) (n int, rest string, ok bool) {
	i := 0
	for i < len(s) && i < hi && isDigit(s[i]) {
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, s[i:], i >= lo
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// daysIn is the number of days of a month in a year.
func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
