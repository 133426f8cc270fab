// Package gen writes synthetic vaults for benchmarks: folders of markdown notes
// in the style of the demo vault, with frontmatter, dates, wikilinks and, above
// all, clusters of about fifty notes on one subject. Those clusters are the
// hard, ordinary case in a large vault: their notes share most of their words
// and sit close together in embedding space, and only their details (an error
// code, a config key, a version, a person, a date) tell them apart.
//
// A vault is a function of the number of notes and the seed: the same options
// give byte-identical files, with the same modification times.
package gen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNotEmpty is returned when the output folder already holds files and
// Options.Force is not set.
var ErrNotEmpty = errors.New("folder is not empty")

// Options say what to generate. Notes must be at least one; the zero Seed is
// a seed like any other.
type Options struct {
	Notes int    // how many notes, exactly
	Seed  uint64 // same Notes and Seed, same vault
	// Force allows writing into a folder that is not empty. Files the
	// generator writes are overwritten; nothing else is touched or deleted.
	Force bool
}

// Summary describes a generated vault.
type Summary struct {
	Dir      string
	Notes    int   // notes written (what the indexer will find)
	Files    int   // notes, the template and the lint report
	Folders  int   // folders holding at least one note
	Clusters int   // subjects of about ClusterSize notes each
	Bytes    int64 // total size of the files written
	Elapsed  time.Duration
}

// Generate writes a synthetic vault of opts.Notes notes into dir, creating it
// if needed. It refuses a folder that is not empty unless opts.Force is set.
// Besides the notes it writes templates/session-template.md and a
// lint-report-YYYY-MM-DD.md at the root, both of which the indexer skips.
// When ctx ends (Ctrl-C) it stops between notes and returns ctx's error;
// what it wrote stays, and a run with Force completes it.
func Generate(ctx context.Context, dir string, opts Options) (Summary, error) {
	start := time.Now()
	if opts.Notes < 1 {
		return Summary{}, fmt.Errorf("generate: need at least one note, got %d", opts.Notes)
	}
	if dir == "" {
		return Summary{}, errors.New("generate: no output folder")
	}
	existing, err := prepareDir(dir, opts.Force)
	if err != nil {
		return Summary{}, err
	}

	p := newPlan(opts.Notes, opts.Seed)
	folders := p.folders()
	for _, f := range append(folders, "templates") {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(f)), 0o755); err != nil {
			return Summary{}, fmt.Errorf("generate: %w", err)
		}
	}

	bytes, err := p.writeNotes(ctx, dir, existing)
	if err != nil {
		return Summary{}, err
	}
	extras := []struct {
		rel  string
		body []byte
	}{
		{"templates/session-template.md", []byte(sessionTemplate)},
		{"lint-report-" + dateString(numDays) + ".md", p.lintReport()},
	}
	for _, e := range extras {
		if err := writeFile(dir, e.rel, e.body, dayTime(numDays), existing); err != nil {
			return Summary{}, err
		}
		bytes += int64(len(e.body))
	}
	return Summary{
		Dir:      dir,
		Notes:    len(p.notes),
		Files:    len(p.notes) + len(extras),
		Folders:  len(folders),
		Clusters: len(p.clusters),
		Bytes:    bytes,
		Elapsed:  time.Since(start),
	}, nil
}

// prepareDir makes sure dir exists and may be written to, and reports whether
// it held anything before.
func prepareDir(dir string, force bool) (existing bool, err error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("generate: %w", err)
		}
		return false, nil
	case err != nil:
		return false, fmt.Errorf("generate: %w", err)
	case !fi.IsDir():
		return false, fmt.Errorf("generate: %s is not a folder", dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return false, fmt.Errorf("generate: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("generate: read %s: %w", dir, err)
	}
	if len(names) == 0 {
		return false, nil
	}
	if !force {
		return true, fmt.Errorf("generate into %s: %w (pass --force to write the generated files over it; nothing else is touched)", dir, ErrNotEmpty)
	}
	return true, nil
}

// writeNotes renders and writes every note, on as many goroutines as there
// are processors. Each note has its own random stream, so the order in which
// they are written does not matter.
func (p *plan) writeNotes(ctx context.Context, dir string, existing bool) (int64, error) {
	var (
		next    atomic.Int64
		total   atomic.Int64
		failed  atomic.Bool
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	workers := min(runtime.GOMAXPROCS(0), max(1, len(p.notes)/64))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &writer{b: make([]byte, 0, 16<<10)}
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(p.notes) {
					return
				}
				if err := ctx.Err(); err != nil {
					errOnce.Do(func() { first = fmt.Errorf("generate: %w", err) })
					failed.Store(true)
					return
				}
				n := p.notes[i]
				*w = writer{b: w.b[:0], r: newRand(p.seed, streamNotes+2*uint64(n.idx)+1), n: n}
				w.render()
				if err := writeFile(dir, n.rel, w.b, dayTime(n.day).Add(9*time.Hour), existing); err != nil {
					errOnce.Do(func() { first = err })
					failed.Store(true)
					return
				}
				total.Add(int64(len(w.b)))
			}
		}()
	}
	wg.Wait()
	return total.Load(), first
}

// writeFile writes one generated file and sets its modification time, so a
// note without a date of its own still gets a reproducible one. In a folder
// that held files before, it refuses to write through anything that is not a
// regular file (a symlink could lead out of the vault).
func writeFile(dir, rel string, body []byte, mtime time.Time, existing bool) error {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if existing {
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("generate: will not replace %s: not a regular file", p)
		}
	}
	if err := os.WriteFile(p, body, 0o644); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	return nil
}
