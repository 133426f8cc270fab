package gen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// treeHash digests every file and folder under root: path, content and
// modification time.
func treeHash(t testing.TB, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			fmt.Fprintf(h, "dir %s\n", filepath.ToSlash(rel))
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		fmt.Fprintf(h, "file %s %d %s\n", filepath.ToSlash(rel), fi.ModTime().Unix(), hex.EncodeToString(sum[:]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func generate(t testing.TB, notes int, seed uint64) (string, Summary) {
	t.Helper()
	dir := t.TempDir()
	sum, err := Generate(context.Background(), dir, Options{Notes: notes, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return dir, sum
}

// vault600 is one generated vault shared by the tests that only read it.
var vault600 = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "gen-test-")
	if err != nil {
		return "", err
	}
	_, err = Generate(context.Background(), dir, Options{Notes: 600, Seed: 3})
	return dir, err
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := vault600(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func scanned(t *testing.T) (string, []vault.File, []vault.Skipped) {
	t.Helper()
	dir, err := vault600()
	if err != nil {
		t.Fatal(err)
	}
	files, skipped, err := vault.Scan(context.Background(), dir, vault.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, files, skipped
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, _ := generate(t, 400, 7)
	b, _ := generate(t, 400, 7)
	c, _ := generate(t, 400, 8)
	ha, hb, hc := treeHash(t, a), treeHash(t, b), treeHash(t, c)
	if ha != hb {
		t.Errorf("same notes and seed gave different trees: %s vs %s", ha, hb)
	}
	if ha == hc {
		t.Errorf("seeds 7 and 8 gave the same tree")
	}
}

func TestGenerateWritesExactlyN(t *testing.T) {
	for _, n := range []int{1, 2, 7, 49, 50, 51, 120, 1001} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			dir, sum := generate(t, n, 1)
			var notes int
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(dir, p)
				rel = filepath.ToSlash(rel)
				if d.IsDir() && rel == "templates" {
					return fs.SkipDir
				}
				if !d.IsDir() && strings.HasSuffix(rel, ".md") && !strings.HasPrefix(rel, "lint-report-") {
					notes++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			wantClusters := max(1, (n+25)/50)
			if notes != n || sum.Notes != n || sum.Files != n+2 || sum.Clusters != wantClusters {
				t.Errorf("%d notes on disk, summary %+v; want %d notes, %d files, %d clusters", notes, sum, n, n+2, wantClusters)
			}
			if sum.Bytes <= 0 || sum.Folders < 1 {
				t.Errorf("summary %+v: no bytes or folders", sum)
			}
		})
	}
}

func TestScanFindsTheNotesAndSkipsTheRest(t *testing.T) {
	_, files, skipped := scanned(t)
	if len(files) != 600 {
		t.Errorf("Scan found %d notes, want 600", len(files))
	}
	var reasons []string
	for _, s := range skipped {
		reasons = append(reasons, s.Path+": "+s.Reason)
	}
	want := []string{"lint-report-2026-03-01.md: lint report", "templates/: templates folder"}
	if strings.Join(reasons, "\n") != strings.Join(want, "\n") {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range files {
		switch top := strings.SplitN(f.Path, "/", 2)[0]; top {
		case "sessions", "knowledge", "reference", "personal":
		default:
			t.Errorf("%s: unexpected top-level folder %q", f.Path, top)
		}
	}
}

func TestNotesParseWithoutWarnings(t *testing.T) {
	_, files, _ := scanned(t)
	lo, hi := dayTime(0), dayTime(numDays)
	withoutFM := 0
	types := map[string]int{}
	for _, f := range files {
		n := vault.ParseNote(f.Path, f.Raw, f.ModTime)
		if len(n.Warnings) > 0 {
			t.Errorf("%s: warnings %q", f.Path, n.Warnings)
		}
		if !strings.Contains("\n"+n.Body, "\n# "+n.Title+"\n") {
			t.Errorf("%s: no \"# \" title", f.Path)
		}
		if n.Date.Before(lo) || !n.Date.Before(hi) {
			t.Errorf("%s: date %s outside 2019-01-01..2026-02-28 (%s)", f.Path, n.Date.Format(time.DateOnly), n.DateSource)
		}
		if !strings.HasPrefix(string(f.Raw), "---\n") {
			withoutFM++
			if strings.HasPrefix(f.Path, "sessions/") && n.DateSource != "filename" {
				t.Errorf("%s: a session without frontmatter should be dated by its file name, got %s", f.Path, n.DateSource)
			}
			continue
		}
		m := n.Frontmatter
		types[m.Type]++
		if n.DateSource != "frontmatter" || m.Status == "" || m.Source == "" || len(m.Topics) == 0 {
			t.Errorf("%s: incomplete frontmatter %+v (date from %s)", f.Path, m, n.DateSource)
		}
		folder := map[string]string{"session": "sessions", "knowledge": "knowledge", "reference": "reference", "personal": "personal"}[m.Type]
		if top := strings.SplitN(f.Path, "/", 2)[0]; top != folder {
			t.Errorf("%s: type %q does not match its folder", f.Path, m.Type)
		}
		if strings.HasPrefix(m.Source, "incident channel") && !strings.Contains(m.Source, " #") {
			t.Errorf("%s: source %q lost its channel name (an unquoted \" #\" starts a YAML comment)", f.Path, m.Source)
		}
		if (m.Type == "session" || m.Type == "reference") && m.Project == "" {
			t.Errorf("%s: %s without a project", f.Path, m.Type)
		}
		if m.Type == "session" && !strings.HasPrefix(path.Base(f.Path), m.Date+"-") {
			t.Errorf("%s: file name does not start with its date %s", f.Path, m.Date)
		}
	}
	if frac := float64(withoutFM) / float64(len(files)); frac < 0.05 || frac > 0.15 {
		t.Errorf("%.1f%% of notes have no frontmatter, want about 10%%", 100*frac)
	}
	for _, ty := range []string{"session", "knowledge", "reference", "personal"} {
		if types[ty] == 0 {
			t.Errorf("no notes of type %s: %v", ty, types)
		}
	}
}

func TestClustersOfAboutFifty(t *testing.T) {
	const n = 3000
	p := newPlan(n, 1)
	if len(p.clusters) != n/ClusterSize {
		t.Fatalf("%d clusters, want %d", len(p.clusters), n/ClusterSize)
	}
	total, work, personal := 0, 0, 0
	for _, c := range p.clusters {
		total += len(c.notes)
		if len(c.notes) < 35 || len(c.notes) > 65 {
			t.Errorf("cluster %s has %d notes, want about 50", c.slug, len(c.notes))
		}
		if c.personal {
			personal++
		} else {
			work++
		}
		for _, i := range c.notes {
			if p.notes[i].c != c {
				t.Fatalf("note %d is listed in cluster %s but planned in %s", i, c.slug, p.notes[i].c.slug)
			}
		}
	}
	if total != n {
		t.Errorf("clusters hold %d notes, want %d", total, n)
	}
	if personal == 0 || personal > work/2 {
		t.Errorf("%d personal and %d work clusters, want some personal ones", personal, work)
	}

	// On disk: one sessions/ folder per work cluster, and a cluster's notes
	// name their project.
	dir, sum := generate(t, n, 1)
	if sum.Clusters != len(p.clusters) {
		t.Errorf("summary says %d clusters, plan %d", sum.Clusters, len(p.clusters))
	}
	ents, err := os.ReadDir(filepath.Join(dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != work {
		t.Errorf("%d folders under sessions/, want one per work cluster (%d)", len(ents), work)
	}
	files, _, err := vault.Scan(context.Background(), dir, vault.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perProject := map[string]int{}
	for _, f := range files {
		if m := vault.ParseNote(f.Path, f.Raw, f.ModTime).Frontmatter; m.Project != "" {
			perProject[m.Project]++
		}
	}
	if len(perProject) != work {
		t.Errorf("%d projects in frontmatter, want %d", len(perProject), work)
	}
	for proj, k := range perProject {
		if k < 20 {
			t.Errorf("project %s has only %d notes with frontmatter naming it", proj, k)
		}
	}
}

func TestWikilinksMostlyResolve(t *testing.T) {
	_, files, _ := scanned(t)
	bodies := map[string]string{} // lower-cased file name → body
	for _, f := range files {
		bodies[strings.ToLower(strings.TrimSuffix(path.Base(f.Path), ".md"))] = string(f.Raw)
	}
	var links, resolved, aliased, headed int
	for _, f := range files {
		for _, l := range vault.ExtractLinks(vault.ParseNote(f.Path, f.Raw, f.ModTime).Body) {
			links++
			body, ok := bodies[strings.ToLower(l.Target)]
			if ok {
				resolved++
			}
			if l.Alias != "" {
				aliased++
			}
			if l.Heading != "" {
				headed++
				if ok && !strings.Contains(body, "\n## "+l.Heading+"\n") {
					t.Errorf("%s: [[%s#%s]]: the target has no such heading", f.Path, l.Target, l.Heading)
				}
			}
		}
	}
	perNote := float64(links) / float64(len(files))
	if perNote < 2 || perNote > 4 {
		t.Errorf("%.2f links per note, want 2 to 4", perNote)
	}
	if frac := float64(resolved) / float64(links); frac < 0.9 || frac == 1 {
		t.Errorf("%.1f%% of %d links resolve, want at least 90%% and a few dangling", 100*frac, links)
	}
	if aliased == 0 || headed == 0 {
		t.Errorf("%d aliased and %d heading links, want both forms", aliased, headed)
	}

	// Most links stay inside their cluster.
	p := newPlan(600, 3)
	same, all := 0, 0
	byBase := map[string]*note{}
	for _, n := range p.notes {
		byBase[n.base] = n
	}
	for _, n := range p.notes {
		for _, l := range n.links {
			if t := byBase[l.target]; t != nil {
				all++
				if t.c == n.c {
					same++
				}
			}
		}
	}
	if frac := float64(same) / float64(all); frac < 0.7 {
		t.Errorf("%.0f%% of resolved links stay in their cluster, want most", 100*frac)
	}
}

func TestNoteLengths(t *testing.T) {
	_, files, _ := scanned(t)
	var total, long, short int
	for _, f := range files {
		w := len(strings.Fields(vault.ParseNote(f.Path, f.Raw, f.ModTime).Body))
		total += w
		if w >= 1200 {
			long++
		}
		if w < 100 {
			short++
		}
	}
	mean := total / len(files)
	if mean < 300 || mean > 500 {
		t.Errorf("notes average %d words, want 300 to 500", mean)
	}
	if long == 0 || short == 0 {
		t.Errorf("%d long and %d very short notes, want some of each", long, short)
	}
}

func TestRefusesNonEmptyFolder(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.md")
	if err := os.WriteFile(mine, []byte("# Mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, dir)
	_, err := Generate(context.Background(), dir, Options{Notes: 20, Seed: 1})
	if !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Generate into a non-empty folder: err = %v, want ErrNotEmpty", err)
	}
	if treeHash(t, dir) != before {
		t.Fatal("a refused Generate changed the folder")
	}

	// With Force it writes its files and leaves the others alone; a second
	// run gives the same files again.
	if _, err := Generate(context.Background(), dir, Options{Notes: 20, Seed: 1, Force: true}); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(mine); err != nil || string(raw) != "# Mine\n" {
		t.Fatalf("mine.md after --force: %q, %v", raw, err)
	}
	first := treeHash(t, dir)
	if _, err := Generate(context.Background(), dir, Options{Notes: 20, Seed: 1, Force: true}); err != nil {
		t.Fatal(err)
	}
	if treeHash(t, dir) != first {
		t.Error("regenerating over the same vault changed it")
	}
	files, _, err := vault.Scan(context.Background(), dir, vault.ScanOptions{})
	if err != nil || len(files) != 21 {
		t.Errorf("Scan found %d notes (%v), want 20 and mine.md", len(files), err)
	}
}

func TestForceDoesNotWriteThroughSymlinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim.md")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "lint-report-"+dateString(numDays)+".md")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, err := Generate(context.Background(), dir, Options{Notes: 5, Seed: 1, Force: true}); err == nil {
		t.Error("Generate wrote over a symlink")
	}
	if raw, _ := os.ReadFile(victim); string(raw) != "keep me\n" {
		t.Errorf("the symlink's target was overwritten: %q", raw)
	}
}

func TestGenerateRejectsBadArguments(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  string
		opts Options
	}{
		{"no notes", t.TempDir(), Options{}},
		{"negative notes", t.TempDir(), Options{Notes: -1}},
		{"no folder", "", Options{Notes: 1}},
		{"a file", file, Options{Notes: 1, Force: true}},
	} {
		if _, err := Generate(context.Background(), tc.dir, tc.opts); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func BenchmarkGenerate3000(b *testing.B) {
	root := b.TempDir()
	var bytes int64
	i := 0
	for b.Loop() {
		sum, err := Generate(context.Background(), filepath.Join(root, strconv.Itoa(i)), Options{Notes: 3000, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		bytes = sum.Bytes
		i++
	}
	b.SetBytes(bytes)
}

// A cancelled context (Ctrl-C) stops the generator between notes.
func TestGenerateStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "v")
	if _, err := Generate(ctx, dir, Options{Notes: 500, Seed: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Generate with a cancelled context: %v, want context.Canceled", err)
	}
	files, _, err := vault.Scan(context.Background(), dir, vault.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 0 {
		t.Errorf("a cancelled Generate wrote %d notes", len(files))
	}
}
