package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/internal/modeltest"
	"github.com/vault-rag/vault-rag/server"
)

// TestLoad runs a small load (200 calls from 16 clients) against the real
// binary, built from this checkout, and checks everything but timings: no
// call failed, the reindex ran mid-run and its change is searchable after,
// the server never wrote the vault, and it exits cleanly on SIGTERM.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the load test starts the real server with the real embedder; skipped under -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("VAULT_RAG_BIN")
	if bin == "" {
		bin = buildBinary(t, root)
	}
	var log bytes.Buffer
	o := DefaultOptions()
	o.Root, o.Bin, o.Calls, o.Clients = root, bin, 200, 16
	o.Timeout, o.Log = 5*time.Minute, &log
	rep, err := Run(context.Background(), o)
	if errors.Is(err, ErrNoEmbedder) {
		modeltest.Missing(t, "%v", err)
	}
	if rep != nil {
		var table bytes.Buffer
		rep.WriteTable(&table)
		t.Logf("progress:\n%s\nreport:\n%s", log.String(), table.String())
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}

	if rep.Errors != 0 || rep.NotRun != 0 {
		t.Errorf("%d calls failed, %d did not run: %q", rep.Errors, rep.NotRun, rep.ErrorSamples)
	}
	if rep.Overall.Calls != o.Calls {
		t.Errorf("%d calls ran, want %d", rep.Overall.Calls, o.Calls)
	}
	if rep.Sessions != o.Clients {
		t.Errorf("%d distinct sessions, want one per client (%d)", rep.Sessions, o.Clients)
	}
	for _, tool := range toolOrder {
		if !hasTool(rep.Tools, tool) {
			t.Errorf("no %s call in the load", tool)
		}
	}

	ri := rep.Reindex
	switch {
	case ri.Build == nil:
		t.Fatal("the mid-run reindex did not complete")
	case ri.Build.Changed != 1 || ri.Build.Added != 0 || ri.Build.Removed != 0:
		t.Errorf("reindex after changing one note: %+v", *ri.Build)
	}
	// Calls before the reindex's slot ended before it began, all but those
	// in flight on the other clients; the last quarter waited for it.
	if min := o.Calls/2 - (o.Clients - 1); ri.CallsBefore < min {
		t.Errorf("%d calls ended before the reindex began, want at least %d: it did not run mid-load", ri.CallsBefore, min)
	}
	if min := o.Calls - o.Calls*3/4; ri.CallsAfter < min {
		t.Errorf("%d calls started after the reindex ended, want at least %d", ri.CallsAfter, min)
	}

	c := rep.Checks
	if !c.MarkerAbsentBefore {
		t.Error("the marker was found before the note was changed")
	}
	if !c.MarkerTopAfter || !c.MarkerFoundByShipping {
		t.Errorf("after the reindex the change is not searchable: keyword top hit %v, shipping finds it %v", c.MarkerTopAfter, c.MarkerFoundByShipping)
	}
	if !c.NoteAsWritten {
		t.Error("the modified note is not its original bytes plus the one line the test appended")
	}
	if len(c.VaultDiffs) > 0 {
		t.Errorf("the server changed the vault copy: %q", c.VaultDiffs)
	}
	if len(c.SourceVaultDiffs) > 0 {
		t.Errorf("./vault changed: %q", c.SourceVaultDiffs)
	}
	if !rep.Exit.Clean || rep.Exit.Code != 0 {
		t.Errorf("the server's exit after SIGTERM: %+v", rep.Exit)
	}
	if rep.ProbeExit != nil && !rep.ProbeExit.Clean {
		t.Errorf("the idle probe's exit after SIGTERM: %+v", *rep.ProbeExit)
	}
	if f := rep.Failures(); len(f) > 0 {
		t.Errorf("failures: %q", f)
	}
}

func hasTool(ts []ToolStats, tool string) bool {
	for _, s := range ts {
		if s.Tool == tool && s.Calls > 0 {
			return true
		}
	}
	return false
}

// buildBinary builds vault-rag from the checkout into the test's folder, so
// the test runs the code it sits beside rather than whatever bin/ holds.
func buildBinary(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vault-rag")
	cmd := exec.Command("go", "build", "-tags=sqlite_fts5", "-o", bin, "./cmd/vault-rag")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build vault-rag: %v\n%s", err, out)
	}
	return bin
}

func TestBuildPlan(t *testing.T) {
	cat := catalog{
		Notes: []note{
			{ListNote: server.ListNote{Path: "a/one.md", Title: "One", NoteMeta: server.NoteMeta{Type: "knowledge", Date: "2025-02-10", Project: "p", Status: "active", Topics: []string{"x", "y"}}},
				Headings: []string{"Alpha", "Beta"}, Excerpts: []string{strings.Repeat("words about things ", 6)}},
			{ListNote: server.ListNote{Path: "b/c/two.md", Title: "Two", NoteMeta: server.NoteMeta{Type: "session", Date: "2024-12-31"}}, Headings: []string{}},
		},
		Queries: []string{"first query", "second query"},
	}
	const n, at = 401, 200
	plan, err := buildPlan(cat, n, at, 7)
	if err != nil {
		t.Fatal(err)
	}
	again, err := buildPlan(cat, n, at, 7)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for i, s := range plan {
		counts[s.Tool]++
		if s.Tool != again[i].Tool || !reflect.DeepEqual(s.Args, again[i].Args) {
			t.Fatalf("call %d differs between two plans of one seed: %v %v, then %v %v", i, s.Tool, s.Args, again[i].Tool, again[i].Args)
		}
		if (i == at) != s.Reindex || (s.Reindex && s.Tool != toolReindex) {
			t.Errorf("call %d: %s, reindex %v", i, s.Tool, s.Reindex)
		}
		if !s.Reindex && s.check == nil {
			t.Errorf("call %d (%s) has no check", i, s.Tool)
		}
		for _, k := range []string{"date_from", "date_to"} {
			if d, ok := s.Args[k].(string); ok {
				if _, err := time.Parse(time.DateOnly, d); err != nil {
					t.Errorf("call %d: %s %q is not a date", i, k, d)
				}
			}
		}
	}
	want := map[string]int{toolSearch: 200, toolRead: 80, toolList: 80, toolDelta: 40, toolReindex: 1}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("mix %v, want %v", counts, want)
	}
	other, err := buildPlan(cat, n, at, 8)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range plan {
		if plan[i].Tool == other[i].Tool && reflect.DeepEqual(plan[i].Args, other[i].Args) {
			same++
		}
	}
	if same == n {
		t.Error("two seeds gave the same plan")
	}
}

// TestChecks feeds the answer checks right and wrong answers.
func TestChecks(t *testing.T) {
	cat := catalog{Notes: []note{{ListNote: server.ListNote{Path: "a/one.md", NoteMeta: server.NoteMeta{Type: "knowledge"}}, Headings: []string{"## Alpha"}}}, Queries: []string{"q"}}
	g := generator{cat: cat, rng: rand.New(rand.NewPCG(1, 2))}
	var list step
	for range 1000 { // an unfiltered first page
		if list = g.list(); len(list.Args) == 2 && list.Args["offset"] == 0 {
			break
		}
	}
	if len(list.Args) != 2 {
		t.Fatalf("no unfiltered listing in 1000 draws")
	}
	limit := fmt.Sprint(list.Args["limit"])
	good := `{"total":1,"offset":0,"limit":` + limit + `,"notes":[{"path":"a/one.md","title":"One","type":"knowledge","date":"2025-01-01"}]}`
	if err := list.check(good); err != nil {
		t.Errorf("a right listing fails its check: %v", err)
	}
	for name, bad := range map[string]string{
		"not JSON":      `oops`,
		"wrong total":   strings.Replace(good, `"total":1`, `"total":2`, 1),
		"missing notes": `{"total":1,"offset":0,"limit":` + limit + `}`,
		"wrong limit":   strings.Replace(good, `"limit":`+limit, `"limit":7`, 1),
	} {
		if err := list.check(bad); err == nil {
			t.Errorf("%s: the check passed %s", name, bad)
		}
	}

	read := step{}
	for range 1000 { // a read of one section
		if read = g.read(); read.Args["section"] != nil {
			break
		}
	}
	okRead := `{"path":"a/one.md","section":"One › Alpha","headings":["## Alpha"],"content":"## Alpha\n\ntext"}`
	if err := read.check(okRead); err != nil {
		t.Errorf("a right read fails its check: %v", err)
	}
	if err := read.check(strings.Replace(okRead, `"section":"One › Alpha"`, `"section":"One › Beta"`, 1)); err == nil {
		t.Error("a read of the wrong section passes its check")
	}

	search := step{}
	for range 1000 { // a plain search: no filter, configuration or explain
		if search = g.search(); len(search.Args) == 2 {
			break
		}
	}
	okSearch := `{"config":"shipping","notes":[{"rank":1,"path":"a/one.md","title":"One","match":{"ranks":{"keyword":1}},"passages":[{"text":"t"}]}]}`
	if err := search.check(okSearch); err != nil {
		t.Errorf("a right search fails its check: %v", err)
	}
	for name, bad := range map[string]string{
		"stages without explain": strings.Replace(okSearch, `]}]}`, `]}],"stages":[{"stage":"keyword","count":1,"ms":1}]}`, 1),
		"wrong rank":             strings.Replace(okSearch, `"rank":1`, `"rank":2`, 1),
		"no passage":             strings.Replace(okSearch, `[{"text":"t"}]`, `[]`, 1),
	} {
		if err := search.check(bad); err == nil {
			t.Errorf("%s: the search check passed %s", name, bad)
		}
	}

	delta := g.delta()
	var items []string
	for i := range delta.Args["items"].([]any) {
		items = append(items, fmt.Sprintf(`{"index":%d,"status":"new"}`, i))
	}
	okDelta := `{"threshold":0.8,"model":"m","items":[` + strings.Join(items, ",") + `],"counts":{"new":1}}`
	if err := delta.check(okDelta); err != nil {
		t.Errorf("a right delta fails its check: %v", err)
	}
	if err := delta.check(strings.Replace(okDelta, `"status":"new"`, `"status":"maybe"`, 1)); err == nil {
		t.Error("a delta item of an unknown status passes its check")
	}

	if _, err := checkReindex(`{"run":2,"mode":"incremental","changed":0}`); err == nil {
		t.Error("a reindex that saw no change passes its check")
	}
	if b, err := checkReindex(`{"run":2,"mode":"incremental","changed":1,"embedded":1,"skipped":[],"took_ms":40}`); err != nil ||
		b != (BuildSummary{Run: 2, BuildCounts: server.BuildCounts{Mode: "incremental", Changed: 1, Embedded: 1}, TookMS: 40}) {
		t.Errorf("checkReindex: %+v, %v", b, err)
	}
}

// TestLastBuild: /health's last build, as the report records it.
func TestLastBuild(t *testing.T) {
	if b := lastBuild(server.Health{}); b != nil {
		t.Errorf("no build yet: %+v", b)
	}
	var h server.Health
	h.Reindex.LastReport = &server.ReportBrief{BuildCounts: server.BuildCounts{Mode: "full", Notes: 3, Embedded: 9}, Skipped: 1, TookMS: 120}
	if b := lastBuild(h); b == nil || *b != (BuildSummary{BuildCounts: server.BuildCounts{Mode: "full", Notes: 3, Embedded: 9}, TookMS: 120}) {
		t.Errorf("last build %+v", b)
	}
}

func TestExcerpts(t *testing.T) {
	long := strings.Repeat("word ", 200)
	body := "# Title\n\nshort\n\n## Heading\n\n" + strings.Repeat("A prose paragraph of some length. ", 4) + "\n\n```\n" +
		strings.Repeat("code code ", 20) + "\n```\n\n- " + strings.Repeat("list item ", 20) + "\n\n" + long
	got := excerpts(body, 4)
	if len(got) != 2 || !strings.HasPrefix(got[0], "A prose paragraph") || len(got[1]) > 600 {
		t.Errorf("excerpts: %q", got)
	}
}

// TestSummarize checks the latency and reindex accounting and that a failed
// call fails the run.
func TestSummarize(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	results := []callResult{
		{ran: true, tool: toolSearch, start: ms(0), end: ms(10)},
		{ran: true, tool: toolReindex, start: ms(20), end: ms(100)},
		{ran: true, tool: toolSearch, start: ms(15), end: ms(50)},
		{ran: true, tool: toolRead, start: ms(110), end: ms(120), err: "vault_read: tool error: boom"},
		{},
	}
	r := newReport(Options{Calls: 5, Clients: 1, Protocol: "2025-11-25"})
	r.Sessions = 1
	r.summarize(results, time.Second, 1)
	ri := r.Reindex
	if ri.CallsBefore != 1 || ri.CallsOverlapping != 1 || ri.CallsAfter != 1 || ri.SearchesAnsweredDuring != 1 || ri.CallMS != 80 {
		t.Errorf("reindex accounting: %+v", ri)
	}
	if r.Errors != 1 || r.NotRun != 1 || r.Overall.Calls != 4 || r.CallsPerSec != 4 {
		t.Errorf("errors %d, not run %d, calls %d, %v calls/s", r.Errors, r.NotRun, r.Overall.Calls, r.CallsPerSec)
	}
	if len(r.Tools) != 3 || r.Tools[0].Tool != toolSearch || r.Tools[0].Calls != 2 || r.Tools[0].MaxMS != 35 {
		t.Errorf("per tool: %+v", r.Tools)
	}
	f := strings.Join(r.Failures(), "\n")
	for _, want := range []string{"1 of 4 calls failed", "boom", "1 planned calls did not run"} {
		if !strings.Contains(f, want) {
			t.Errorf("failures lack %q:\n%s", want, f)
		}
	}
}
