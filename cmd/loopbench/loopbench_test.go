//go:build unix

package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	queries := `{"queries":[
	 {"id":"q1","kind":"howto","text":"one","relevant":{"a.md":3,"b.md":1}},
	 {"id":"q2","kind":"lookup","text":"two","relevant":{"c.md":2}},
	 {"id":"q3","kind":"howto","text":"three","relevant":{"d.md":1}}]}`
	if err := os.WriteFile(filepath.Join(dir, "queries.json"), []byte(queries), 0o644); err != nil {
		t.Fatal(err)
	}
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
