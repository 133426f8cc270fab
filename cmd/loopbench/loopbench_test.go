//go:build unix

package main

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestNDCGAt5(t *testing.T) {
	rel := map[string]int{"a.md": 3, "b.md": 2, "c/d.md": 1}
	idcg := 3 + 2/math.Log2(3) + 1/math.Log2(4)
	cases := []struct {
		name  string
		cited []string
		want  float64
	}{
		{"ideal", []string{"a.md", "b.md", "c/d.md"}, 1},
		{"ideal then noise", []string{"a.md", "b.md", "c/d.md", "x.md", "y.md"}, 1},
		{"nothing", nil, 0},
		{"none relevant", []string{"x.md", "y.md"}, 0},
		{"reversed", []string{"c/d.md", "b.md", "a.md"}, (1 + 2/math.Log2(3) + 3/math.Log2(4)) / idcg},
		{"second rank only", []string{"x.md", "a.md"}, (3 / math.Log2(3)) / idcg},
		{"leading ./ cleaned", []string{"./a.md", "./b.md", "./c/d.md"}, 1},
		{"duplicate counts once, keeps its slot", []string{"a.md", "a.md", "b.md"}, (3 + 2/math.Log2(4)) / idcg},
		{"duplicate after cleaning", []string{"a.md", "./a.md"}, 3 / idcg},
		{"sixth citation ignored", []string{"v.md", "w.md", "x.md", "y.md", "z.md", "a.md"}, 0},
		{"exact comparison: case", []string{"A.md"}, 0},
		{"exact comparison: no extension", []string{"a"}, 0},
	}
	for _, c := range cases {
		if got := ndcgAt5(c.cited, rel); !near(got, c.want) {
			t.Errorf("%s: ndcgAt5(%q) = %.6f, want %.6f", c.name, c.cited, got, c.want)
		}
	}
	// the ideal list is cut at 5
	many := map[string]int{"1": 3, "2": 3, "3": 3, "4": 3, "5": 3, "6": 3}
	if got := ndcgAt5([]string{"1", "2", "3", "4", "5"}, many); !near(got, 1) {
		t.Errorf("five of six grade-3 notes: %.6f, want 1", got)
	}
	if got := ndcgAt5([]string{"a"}, map[string]int{}); got != 0 {
		t.Errorf("no judgements: %v, want 0", got)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		want float64
	}{{nil, 0}, {[]int{5}, 5}, {[]int{9, 1, 5}, 5}, {[]int{4, 1, 3, 2}, 2.5}} {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

func TestCheckCommandRefuses(t *testing.T) {
	refused := [][]string{
		{"bash", "-c", "ls"},
		{"grep", "x"},
		{"find", "."},
		{"cat", "/etc/passwd"},
		{"cat", "../queries.json"},
		{"cat", "notes/../../queries.json"},
		{"ls", ".."},
		{"ls", "-la", "/"},
		{"rg", "x", "/work"},
		{"rg", "x", "../"},
		{"rg", "--pre", "cat", "x"},
		{"rg", "--pre=cat", "x"},
		{"rg", "--hostname-bin=hostname", "x"},
		{"rg", "--ignore-file=/etc/ignore", "x"},
		{"rg", "-f/etc/patterns", "x"},
		{"rg", "-e", "x", "/etc"},
		{"rg", "--regexp=x", "../x"},
		{"rg", "-A", "3", "x", "/etc"},
		{"rg", "-iA3", "x", "/etc"},
		{"rg", "-i", "/api", "/etc"},
		{"rg", "x", "--", "/etc"},
		{"rg", "--file", "../patterns", "x"},
		{"sed", "-n", "/x/p", "/etc/passwd"},
		{"sed", "-n", "-e", "/x/p", "../queries.json"},
		{"sed", "-i", "s/a/b/", "a.md"},
		{"sed", "-i.bak", "s/a/b/", "a.md"},
		{"sed", "-ni", "p", "a.md"},
		{"sed", "--in-place", "s/a/b/", "a.md"},
		{"sed", "--in-place=.bak", "s/a/b/", "a.md"},
		{"sed", "-f", "script.sed", "a.md"},
		{"sed", "-n", "1w out.txt", "a.md"},
		{"sed", "-n", "/x/W out.txt", "a.md"},
		{"sed", "s/a/b/w out.txt", "a.md"},
		{"sed", "s|a|b|gw out.txt", "a.md"},
		{"sed", "s/a/date/e", "a.md"},
		{"sed", "1e date", "a.md"},
		{"sed", "-e", "p", "-e", "1e id", "a.md"},
		{"sed", "--expression=1w x", "a.md"},
		{"sed", "-n", "p;w x", "a.md"},
		{"sed", "-n", "1,3{p;w x\n}", "a.md"},
		{"sed", "r other.md", "a.md"},
		{"sed", "$R other.md", "a.md"},
		{"sed", "1r /etc/passwd", "a.md"},
		{"sed", "-n", "/a\\/b/w x", "a.md"},
	}
	for _, argv := range refused {
		if why := checkCommand(argv); why == "" {
			t.Errorf("checkCommand(%q) allowed it, want a refusal", argv)
		}
	}
	allowed := [][]string{
		{"rg", "-il", "power outage"},
		{"rg", "-n", "-C", "3", "--glob", "*.md", "wake on lan", "linux"},
		{"rg", "-e", "foo", "-e", "bar", "notes/a.md"},
		{"rg", "--files"},
		{"rg", "-g", "!*.txt", "x"},
		{"rg", "..foo"},
		{"rg", "-F", "a/../b"},
		{"rg", "/api/v1"},
		{"rg", "-e", "/api", "-e", "/health", "docs"},
		{"rg", "-g", "/docs/*.md", "x"},
		{"rg", "--glob=../x", "x"},
		{"rg", "-n", "-A", "5", "/etc/hosts", "linux"},
		{"rg", "-C3", "-i", "/var/log", "linux_snippets.md"},
		{"cat", "linux_snippets.md"},
		{"cat", "./a.md", "folder/b c.md"},
		{"cat", "Reference/TypeScript API/Workspace/on('file-open').md"},
		{"ls"},
		{"ls", "-R", "devops"},
		{"ls", "-la", "folder/"},
		{"sed", "-n", "1,40p", "a.md"},
		{"sed", "-n", "/^## Install/,/^## /p", "a.md"},
		{"sed", "-n", "-e", "10,20p", "a.md"},
		{"sed", "-E", "-n", "s/(wake)/\\1/p", "a.md"},
		{"sed", "s/write/read/g", "a.md"},
		{"sed", "-n", "/w/p", "a.md"},
		{"sed", "-n", "/e x/p;$=", "a.md"},
		{"sed", "y/abc/xyz/", "a.md"},
		{"sed", "1d;$d", "a.md"},
		{"sed", "-n", "1~2p", "a.md"},
		{"sed", "-n", "5q;p", "a.md"},
		{"sed", "-n", "\\,foo,p", "a.md"},
		{"sed", "1i\\header", "a.md"},
	}
	for _, argv := range allowed {
		if why := checkCommand(argv); why != "" {
			t.Errorf("checkCommand(%q) refused it (%s), want it allowed", argv, why)
		}
	}
}

func TestCapOutput(t *testing.T) {
	small := []byte("hello\n")
	if got := capOutput(small); string(got) != "hello\n" {
		t.Errorf("small output changed: %q", got)
	}
	big := []byte(strings.Repeat("é", outputCap)) // 2 bytes each
	got := capOutput(big)
	if !strings.HasSuffix(string(got), truncatedLine) {
		t.Fatalf("no truncation line")
	}
	body := got[:len(got)-len(truncatedLine)]
	if len(body) > outputCap || len(body) < outputCap-1 {
		t.Errorf("kept %d bytes, want %d or one less", len(body), outputCap)
	}
	if !strings.HasSuffix(string(body), "é") {
		t.Errorf("cut inside a UTF-8 character")
	}
}

func TestStratify(t *testing.T) {
	var qs []Query
	add := func(kind string, n int) {
		for i := 0; i < n; i++ {
			qs = append(qs, Query{ID: kind + string(rune('a'+i)), Kind: kind})
		}
	}
	// blue-book's shape: 21 howto, 15 lookup, 12 concept, 12 multi
	add("howto", 21)
	add("lookup", 15)
	add("concept", 12)
	add("multi", 12)
	got := stratify(qs, 12)
	if len(got) != 12 {
		t.Fatalf("%d picked, want 12", len(got))
	}
	per := map[string]int{}
	for _, q := range got {
		per[q.Kind]++
	}
	want := map[string]int{"howto": 4, "lookup": 3, "concept": 3, "multi": 2}
	for k, n := range want {
		if per[k] != n {
			t.Errorf("%s: %d picked, want %d (all: %v)", k, per[k], n, per)
		}
	}
	again := stratify(qs, 12)
	for i := range got {
		if got[i].ID != again[i].ID {
			t.Fatalf("not deterministic")
		}
	}
	// a small kind still gets one
	qs = nil
	add("big", 40)
	add("tiny", 1)
	per = map[string]int{}
	for _, q := range stratify(qs, 4) {
		per[q.Kind]++
	}
	if per["tiny"] != 1 || per["big"] != 3 {
		t.Errorf("40+1 questions, 4 picked: %v, want big 3, tiny 1", per)
	}
}

// TestScoreEndToEnd scores a tiny dataset from answer and log files.
func TestScoreEndToEnd(t *testing.T) {
	dir := t.TempDir()
	writeScoreQueries(t, dir)
	answers := filepath.Join(dir, "answers.jsonl")
	logf := filepath.Join(dir, "calls.jsonl")
	for _, a := range []Answer{
		{QID: "q1", Arm: armRipgrep, Citations: []string{"a.md", "b.md"}},
		{QID: "q2", Arm: armRipgrep, Citations: []string{"./c.md"}},
	} {
		if err := appendJSONLine(answers, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []Call{
		{Arm: armRipgrep, QID: "q1", Tool: "rg", Bytes: 100},
		{Arm: armRipgrep, QID: "q1", Tool: "cat", Bytes: 300},
		{Arm: armRipgrep, QID: "q2", Tool: "rg", Bytes: 50},
		{Arm: armRipgrep, QID: "q3", Tool: "rg", Bytes: 10, Error: true},
	} {
		c.Args = json.RawMessage("[]")
		if err := appendJSONLine(logf, c); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "report.md")
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	err := cmdScore([]string{"--dataset", dir, "--answers", answers, "--log", logf, "--out", out, "--label", "test"})
	os.Stdout = stdout
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rep := string(b)
	// q1 1, q2 1, q3 unanswered 0: mean 0.667; calls 2, 1, 1: 1.3; bytes 400, 50, 10: mean 153, median 50
	for _, want := range []string{
		"| ripgrep | 3 | 2 | 0.667 | 1.3 | 153 | 50 | 0 | 1 | – |",
		"| howto | ripgrep | 2 | 0.500 |",
		"| lookup | ripgrep | 1 | 1.000 |",
		"no answer (scored 0): q3",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	if !strings.HasPrefix(rep, "# Loop benchmark") {
		t.Errorf("a new report file starts without its header")
	}
}

// writeScoreQueries writes the three-question dataset the score tests use.
func writeScoreQueries(t *testing.T, dir string) {
	t.Helper()
	queries := `{"queries":[
	 {"id":"q1","kind":"howto","text":"one","relevant":{"a.md":3,"b.md":1}},
	 {"id":"q2","kind":"lookup","text":"two","relevant":{"c.md":2}},
	 {"id":"q3","kind":"howto","text":"three","relevant":{"d.md":1}}]}`
	if err := os.WriteFile(filepath.Join(dir, "queries.json"), []byte(queries), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scoreFixture writes the three-question dataset of TestScoreEndToEnd, the
// answers and the calls to dir, scores them and returns the report.
func scoreFixture(t *testing.T, answers []Answer, calls []Call) string {
	t.Helper()
	dir := t.TempDir()
	writeScoreQueries(t, dir)
	answersPath := filepath.Join(dir, "answers.jsonl")
	logPath := filepath.Join(dir, "calls.jsonl")
	if err := os.WriteFile(answersPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range answers {
		if err := appendJSONLine(answersPath, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range calls {
		c.Args = json.RawMessage("[]")
		if err := appendJSONLine(logPath, c); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "report.md")
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	err := cmdScore([]string{"--dataset", dir, "--qids", "q1,q2,q3", "--answers", answersPath, "--log", logPath, "--out", out, "--label", "test"})
	os.Stdout = stdout
	devnull.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// undated is a report without its dated "## " heading.
func undated(rep string) string {
	var keep []string
	for _, l := range strings.Split(rep, "\n") {
		if !strings.HasPrefix(l, "## ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func wantInReport(t *testing.T, rep string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(rep, w) {
			t.Errorf("report lacks %q:\n%s", w, rep)
		}
	}
}

// vault-rag: listings of 1200 and 1000 B and a failed one; q1 300 B, q2 200 B,
// q3 no calls: mean 166.67 B. ripgrep: no listing; 400, 50, 10 B: mean 153.33 B.
var conversationCalls = []Call{
	{Arm: armVaultRag, QID: "q1", Tool: "tools", Bytes: 1000, Setup: true},
	{Arm: armVaultRag, QID: "q1", Tool: "vault_search", Bytes: 300},
	{Arm: armVaultRag, QID: "q2", Tool: "tools", Bytes: 1200, Setup: true},
	{Arm: armVaultRag, QID: "q2", Tool: "tools", Bytes: 40, Setup: true, Error: true},
	{Arm: armVaultRag, QID: "q2", Tool: "vault_search", Bytes: 150},
	{Arm: armVaultRag, QID: "q2", Tool: "vault_read", Bytes: 50},
	{Arm: armRipgrep, QID: "q1", Tool: "rg", Bytes: 100},
	{Arm: armRipgrep, QID: "q1", Tool: "cat", Bytes: 300},
	{Arm: armRipgrep, QID: "q2", Tool: "rg", Bytes: 50},
	{Arm: armRipgrep, QID: "q3", Tool: "rg", Bytes: 10},
}

// TestScoreListingBytes: the listing's size is the largest setup line that
// did not fail; setup lines are not calls; a failed one and different sizes
// are reported.
func TestScoreListingBytes(t *testing.T) {
	rep := scoreFixture(t, nil, conversationCalls)
	wantInReport(t, rep,
		// calls 1, 2, 0 (listings not counted): 1.0; bytes 300, 200, 0: mean 167, median 200
		"| vault-rag | 3 | 0 | 0.000 | 1.0 | 167 | 200 | 0 | 0 | 2 × 1200 B |",
		"| vault-rag | 1200 |",
		"vault-rag: 2 tools listings of different sizes, 1000 to 1200 B: the largest counts",
		"vault-rag: 1 tools listing failed, not counted",
	)
	// the order of the setup lines does not matter
	rev := append([]Call{}, conversationCalls...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	wantInReport(t, scoreFixture(t, nil, rev), "| vault-rag | 1200 |")
}

// TestScoreConversation: a conversation of N questions costs the listing + N ×
// the unrounded mean bytes per question.
func TestScoreConversation(t *testing.T) {
	if got := conversationBytes(1200, 500.0/3, 10); !near(got, 1200+5000.0/3) {
		t.Errorf("conversationBytes(1200, 166.67, 10) = %v", got)
	}
	rep := scoreFixture(t, nil, conversationCalls)
	wantInReport(t, rep,
		"| arm | tools listing | 1 question | 3 questions | 10 questions |\n|---|---:|---:|---:|---:|\n",
		// 1200 + 166.67, + 500, + 1666.67 (not 10 × the rounded 167)
		"| vault-rag | 1200 | 1367 | 1700 | 2867 |\n",
		// 0 + 153.33, + 460, + 1533.33
		"| ripgrep | 0 | 153 | 460 | 1533 |\n",
	)
	if a, b := strings.Index(rep, "| ripgrep | 0 |"), strings.Index(rep, "| vault-rag | 1200 |"); a > b {
		t.Errorf("the conversation table's arms are not in name order")
	}
	if undated(scoreFixture(t, nil, conversationCalls)) != undated(rep) {
		t.Errorf("two scores of the same logs differ")
	}
}

// TestScoreNoListing: an arm whose log has no listing counts 0 B; only an arm
// other than ripgrep gets a note that its figures lack one.
func TestScoreNoListing(t *testing.T) {
	var calls []Call
	for _, c := range conversationCalls {
		if !c.Setup {
			calls = append(calls, c)
		}
	}
	rep := scoreFixture(t, nil, calls)
	wantInReport(t, rep,
		"| vault-rag | 3 | 0 | 0.000 | 1.0 | 167 | 200 | 0 | 0 | – |",
		"| vault-rag | 0 | 167 | 500 | 1667 |\n",
		"| ripgrep | 3 | 0 | 0.000 | 1.3 | 153 | 50 | 0 | 0 | – |",
		"| ripgrep | 0 | 153 | 460 | 1533 |\n",
		"vault-rag: no tools listing in the log: the conversation figures count it as 0 B",
	)
	if strings.Contains(rep, "ripgrep: no tools listing") {
		t.Errorf("the ripgrep arm is told it has no listing:\n%s", rep)
	}
	// a ripgrep log with a listing line counts it
	calls = append(calls, Call{Arm: armRipgrep, QID: "q1", Tool: "tools", Bytes: 90, Setup: true})
	wantInReport(t, scoreFixture(t, nil, calls), "| ripgrep | 90 | 243 | 550 | 1623 |\n")
}

// TestListToolsOutputSchema: the listing prints a tool's output schema, as
// tools/list sent it, after its input schema, and nothing for a tool without
// one.
func TestListToolsOutputSchema(t *testing.T) {
	s := server.NewMCPServer("fake", "1", server.WithInstructions("Search the notes."))
	noop := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	s.AddTool(mcp.NewTool("plain", mcp.WithDescription("No output schema."),
		mcp.WithString("query", mcp.Required())), noop)
	s.AddTool(mcp.NewTool("structured", mcp.WithDescription("With an output schema."),
		mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"hits":{"type":"array","x-kept":true}}}`))), noop)
	hs := httptest.NewServer(server.NewStreamableHTTPServer(s))
	defer hs.Close()
	out, err := listTools(context.Background(), hs.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	plain, structured, ok := strings.Cut(out, "\n## structured\n")
	if !ok || !strings.HasPrefix(out, "Instructions:\nSearch the notes.\n\nTools (2):\n\n## plain\n") {
		t.Fatalf("unexpected listing:\n%s", out)
	}
	if strings.Contains(plain, "Output schema:") {
		t.Errorf("a tool without an output schema shows one:\n%s", plain)
	}
	want := "Input schema:\n{\n  \"properties\": {},\n  \"required\": [],\n  \"type\": \"object\"\n}\nOutput schema:\n{\n  \"type\": \"object\",\n  \"properties\": {\n    \"hits\": {\n      \"type\": \"array\",\n      \"x-kept\": true\n    }\n  }\n}\n"
	if !strings.HasSuffix(structured, want) {
		t.Errorf("the structured tool's schemas:\n%s\nwant the suffix:\n%s", structured, want)
	}
	// `vr tools` prints the same and logs its size, output schema included, as a setup line
	dir := t.TempDir()
	logPath, printed := filepath.Join(dir, "calls.jsonl"), filepath.Join(dir, "stdout")
	f, err := os.Create(printed)
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = f
	err = cmdVR([]string{"--server", hs.URL + "/mcp", "--log", logPath, "--qid", "q1", "tools"})
	os.Stdout = stdout
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(printed); string(b) != out {
		t.Errorf("vr tools printed:\n%s\nwant:\n%s", b, out)
	}
	var c Call
	if b, err := os.ReadFile(logPath); err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatalf("the log: %v %q", err, b)
	}
	if !c.Setup || c.Error || c.Arm != armVaultRag || c.Bytes != len(out) {
		t.Errorf("logged %+v, want a vault-rag setup line of %d bytes", c, len(out))
	}
}
