package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/index"
)

// TestProgressLine: on a terminal the line is redrawn in place and cleared at
// the end; elsewhere plain lines come at most once per interval, plus the
// last; each shows done/total, the rate and an ETA taken from tokens.
func TestProgressLine(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := start
	now := func() time.Time { return clock }
	feed := func(p *progressLine) {
		clock = start
		p.update(index.Progress{Phase: "reading", Done: 1, Total: 2})
		p.update(index.Progress{Phase: "reading", Done: 2, Total: 2})
		p.update(index.Progress{Phase: "embedding", Done: 0, Total: 100, TotalTokens: 1000, Reused: 5})
		for i, d := range []int{10, 20, 50} {
			clock = start.Add(time.Duration(i+1) * 4 * time.Second)
			p.update(index.Progress{Phase: "embedding", Done: d, Total: 100, Tokens: d * 5, TotalTokens: 1000, Reused: 5})
		}
		clock = start.Add(40 * time.Second)
		p.update(index.Progress{Phase: "embedding", Done: 100, Total: 100, Tokens: 1000, TotalTokens: 1000, Reused: 5})
	}

	var plain strings.Builder
	feed(newProgressLine(&plain, false, 10*time.Second, now))
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	want := []string{
		"embedding 0/100 chunks (0%), 5 reused",
		// 4 s and 8 s are within the interval of the first line; 12 s is not.
		"embedding 50/100 chunks (50%), 4.2 chunks/s, ETA 36s, 5 reused",
		"embedding 100/100 chunks (100%), 2.5 chunks/s, took 40s, 5 reused",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("plain lines:\n%s\nwant:\n%s", plain.String(), strings.Join(want, "\n"))
	}
	if strings.Contains(plain.String(), "\r") || strings.Contains(plain.String(), "\033") {
		t.Error("plain lines carry terminal control characters")
	}

	var tty strings.Builder
	feed(newProgressLine(&tty, true, 10*time.Second, now))
	out := tty.String()
	if !strings.Contains(out, "\r\033[Kreading 2/2 notes (100%)") || !strings.Contains(out, "\r\033[Kembedding 20/100 chunks (20%), 2.5 chunks/s, ETA 1m12s, 5 reused") {
		t.Errorf("terminal output lacks the redrawn lines: %q", out)
	}
	if !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("terminal output does not clear the line at the end: %q", out)
	}
}
