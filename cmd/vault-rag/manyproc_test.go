package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTwoServersAndReindex: two stdio servers (two clients on one vault) and
// a CLI reindex started together on a fresh copy of the demo vault end with
// one complete index, answering as a single build's does, and nothing logs
// an error. Run in each order of starting.
func TestTwoServersAndReindex(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "notes")
	mustCopyTree(t, filepath.Join(repoRoot, "vault"), src)
	// The reference: one build, alone, of a second copy.
	ref := filepath.Join(dir, "ref")
	mustCopyTree(t, src, ref)
	refDB := filepath.Join(dir, "ref.db")
	mustRun(t, dir, ref, refDB, "reindex")
	query := []string{"search", "--root", repoRoot, "--json", "--keywords", "lease ttl expiry", "why did the lock drop"}
	want := searchPaths(t, mustRun(t, dir, ref, refDB, query...).stdout)

	for _, order := range []string{"servers first", "reindex first"} {
		t.Run(order, func(t *testing.T) {
			vault := filepath.Join(t.TempDir(), "notes")
			mustCopyTree(t, src, vault)
			db := filepath.Join(t.TempDir(), "vault.db")
			type proc struct {
				name   string
				cmd    *exec.Cmd
				stderr *bytes.Buffer
				stdin  io.WriteCloser
				done   chan error
			}
			start := func(name string, args ...string) *proc {
				p := &proc{name: name, cmd: command(t, dir, vault, db, args...), stderr: &bytes.Buffer{}, done: make(chan error, 1)}
				p.cmd.Stderr = p.stderr
				var err error
				if args[0] == "serve" {
					// A client that stays connected and says nothing.
					if p.stdin, err = p.cmd.StdinPipe(); err != nil {
						t.Fatal(err)
					}
				}
				if err := p.cmd.Start(); err != nil {
					t.Fatal(err)
				}
				go func() { p.done <- p.cmd.Wait() }()
				t.Cleanup(func() {
					if p.stdin != nil {
						p.stdin.Close()
					}
					p.cmd.Process.Kill()
					<-p.done
				})
				return p
			}
			var procs []*proc
			serve := func() {
				for i := 1; i <= 2; i++ {
					procs = append(procs, start(fmt.Sprintf("server %d", i), "serve", "--transport", "stdio", "--poll", "200ms"))
				}
			}
			if order == "servers first" {
				serve()
			}
			cli := start("reindex", "reindex")
			if order == "reindex first" {
				serve()
			}
			procs = append(procs, cli)
			select {
			case err := <-cli.done:
				cli.done <- err // for the cleanup
				if err != nil {
					t.Fatalf("reindex beside two servers: %v\n%s", err, cli.stderr)
				}
			case <-time.After(8 * time.Minute): // a guard against a hang
				t.Fatalf("reindex never ended:\n%s", cli.stderr)
			}
			// The servers' own builds (each waits for the lock, then catches
			// up) end with the index whole and no build running.
			for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(300 * time.Millisecond) {
				var st statusReport
				r := mustRun(t, dir, vault, db, "status", "--json", "--addr", "127.0.0.1:1")
				if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
					t.Fatal(err)
				}
				if st.Building == nil && st.Vectors != nil && st.Vectors.Complete() && st.Notes > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the index never became whole: %s", r)
				}
			}
			if got := searchPaths(t, mustRun(t, dir, vault, db, query...).stdout); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("search of the index built beside two servers: %v, a single build's: %v", got, want)
			}
			var refSt, st statusReport
			json.Unmarshal([]byte(mustRun(t, dir, ref, refDB, "status", "--json", "--addr", "127.0.0.1:1").stdout), &refSt)
			json.Unmarshal([]byte(mustRun(t, dir, vault, db, "status", "--json", "--addr", "127.0.0.1:1").stdout), &st)
			if st.Notes != refSt.Notes || st.Chunks != refSt.Chunks || st.Links != refSt.Links || st.Vectors.Embedded != refSt.Vectors.Embedded {
				t.Errorf("index built beside two servers: %d notes, %d chunks, %d links, %d vectors; a single build: %d, %d, %d, %d",
					st.Notes, st.Chunks, st.Links, st.Vectors.Embedded, refSt.Notes, refSt.Chunks, refSt.Links, refSt.Vectors.Embedded)
			}
			for _, p := range procs {
				if strings.Contains(p.stderr.String(), "level=ERROR") || strings.Contains(p.stderr.String(), "disk I/O error") || strings.Contains(p.stderr.String(), "no such table") {
					t.Errorf("%s logged an error:\n%s", p.name, p.stderr)
				}
			}
		})
	}
}

// searchPaths is the ranked note paths of a `search --json` answer.
func searchPaths(t *testing.T, out string) []string {
	t.Helper()
	var res struct {
		Notes []struct {
			Path string `json:"path"`
		} `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("search --json: %v\n%s", err, out)
	}
	var paths []string
	for _, n := range res.Notes {
		paths = append(paths, n.Path)
	}
	if len(paths) == 0 {
		t.Fatalf("search found nothing: %s", out)
	}
	return paths
}
