//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// maxCalls and maxCites are the protocol's limits per question.
const (
	maxCalls = 6
	maxCites = 5
)

// ndcgAt5 is nDCG@5 of a cited list against graded judgements, with linear
// gains (the grade): DCG = Σ grade_i / log2(i+1) over ranks i = 1..5 of the
// list as cited (entries past the fifth are ignored; a path cited again
// gains nothing the second time), over the same sum for the judgements'
// grades sorted best first. Paths are compared exactly, after cleanPath.
func ndcgAt5(cited []string, relevant map[string]int) float64 {
	if len(cited) > maxCites {
		cited = cited[:maxCites]
	}
	seen := map[string]bool{}
	dcg := 0.0
	for i, c := range cited {
		p := cleanPath(c)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		dcg += float64(relevant[p]) / math.Log2(float64(i+2))
	}
	var grades []int
	for _, g := range relevant {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	idcg := 0.0
	for i, g := range grades {
		if i >= maxCites {
			break
		}
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// qStats is one question's result in one arm.
type qStats struct {
	Q        *Query
	Answered bool
	Cited    []string
	NDCG     float64
	Calls    int // tool calls, the tools listing not counted
	Bytes    int // output bytes of those calls
	Failed   int // calls that failed or were refused
}

// armResult is one arm's results over the scored questions.
type armResult struct {
	Arm       string
	Questions []*qStats
	Listing   listing // the tools listings of the arm's log (setup lines, not calls)
	Notes     []string
}

// listing gathers the setup lines of one arm's log: the tools listing an MCP
// client reads once per conversation. Its size (Bytes) is the largest
// listing that did not fail, so it does not depend on the order of the log
// files or lines; 0 if there is none (the ripgrep arm has none: its commands
// are the client's own shell).
type listing struct {
	Runs   int // listings that did not fail
	Bytes  int // the largest of them
	Min    int // the smallest of them, to report listings of different sizes
	Failed int // listings that failed (an error message, not a listing)
}

func (l *listing) add(c Call) {
	if c.Error {
		l.Failed++
		return
	}
	if l.Runs == 0 || c.Bytes > l.Bytes {
		l.Bytes = c.Bytes
	}
	if l.Runs == 0 || c.Bytes < l.Min {
		l.Min = c.Bytes
	}
	l.Runs++
}

// conversationSizes are the numbers of questions of the conversation table.
var conversationSizes = []int{1, 3, 10}

// conversationBytes is the tool output a conversation of n questions puts
// before the model: the tools listing, paid once per conversation, plus n
// questions at the mean bytes per question.
func conversationBytes(listingBytes int, meanBytes float64, n int) float64 {
	return float64(listingBytes) + float64(n)*meanBytes
}

// summary are the figures of a set of questions.
type summary struct {
	N, Answered              int
	NDCG, Calls, BytesMean   float64
	BytesMedian              float64
	OverLimit, Failed, Empty int
}

func summarize(qs []*qStats) summary {
	s := summary{N: len(qs)}
	if len(qs) == 0 {
		return s
	}
	var bytes []int
	for _, q := range qs {
		if q.Answered {
			s.Answered++
		}
		s.NDCG += q.NDCG
		s.Calls += float64(q.Calls)
		s.BytesMean += float64(q.Bytes)
		bytes = append(bytes, q.Bytes)
		if q.Calls > maxCalls {
			s.OverLimit++
		}
		s.Failed += q.Failed
	}
	n := float64(len(qs))
	s.NDCG /= n
	s.Calls /= n
	s.BytesMean /= n
	s.BytesMedian = median(bytes)
	return s
}

func median(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int{}, xs...)
	sort.Ints(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return float64(s[m])
	}
	return float64(s[m-1]+s[m]) / 2
}

// expand resolves each value as a glob (a value matching nothing is kept, so
// that reading it reports the missing file).
func expand(vals []string) []string {
	var out []string
	for _, v := range vals {
		if m, err := filepath.Glob(v); err == nil && len(m) > 0 {
			out = append(out, m...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

// readJSONLines decodes each non-empty line of path with fn; a line that
// does not decode is reported, not fatal.
func readJSONLines(path string, fn func(line []byte) error) (bad []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := fn([]byte(line)); err != nil {
			bad = append(bad, fmt.Sprintf("%s:%d: %v", path, n, err))
		}
	}
	return bad, sc.Err()
}

// cmdScore joins answers and call logs with the dataset's judgements and
// prints, per arm, nDCG@5, tool calls and output bytes per question, overall
// and by kind; with --out it appends the same as a dated section.
func cmdScore(args []string) error {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	dataset := fs.String("dataset", "", "the dataset folder (queries.json)")
	var answerFiles, logFiles, qids, arms multi
	fs.Var(&answerFiles, "answers", "answers file(s): repeat the flag, or comma-separate, or a glob")
	fs.Var(&logFiles, "log", "call log file(s): repeat the flag, or comma-separate, or a glob")
	fs.Var(&qids, "qids", "the questions asked (default: every question an arm's answers or log name)")
	fs.Var(&arms, "arm", "score only these arms (default: every arm found)")
	out := fs.String("out", "", "append the report as a dated section to this markdown file (e.g. docs/loop-bench.md)")
	label := fs.String("label", "", "the section's title (what was run: binary, commit, assistants)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := need("dataset", *dataset, "answers", answerFiles.String()); err != nil {
		return err
	}
	if *out != "" && *label == "" {
		return usageErr("--out needs --label")
	}
	d, err := loadDataset(*dataset)
	if err != nil {
		return err
	}
	var problems []string
	// answers[arm][qid]
	answers := map[string]map[string]Answer{}
	for _, path := range expand(answerFiles) {
		bad, err := readJSONLines(path, func(line []byte) error {
			var a Answer
			if err := json.Unmarshal(line, &a); err != nil {
				return err
			}
			if a.QID == "" || a.Arm == "" {
				return fmt.Errorf("an answer needs qid and arm")
			}
			if answers[a.Arm] == nil {
				answers[a.Arm] = map[string]Answer{}
			}
			if _, dup := answers[a.Arm][a.QID]; dup {
				problems = append(problems, fmt.Sprintf("%s answered %s more than once: the last answer counts", a.Arm, a.QID))
			}
			answers[a.Arm][a.QID] = a
			return nil
		})
		if err != nil {
			return err
		}
		problems = append(problems, bad...)
	}
	// calls[arm][qid]
	calls := map[string]map[string][]Call{}
	setup := map[string]*listing{}
	for _, path := range expand(logFiles) {
		bad, err := readJSONLines(path, func(line []byte) error {
			var c Call
			if err := json.Unmarshal(line, &c); err != nil {
				return err
			}
			if c.Setup {
				if setup[c.Arm] == nil {
					setup[c.Arm] = &listing{}
				}
				setup[c.Arm].add(c)
				return nil
			}
			if calls[c.Arm] == nil {
				calls[c.Arm] = map[string][]Call{}
			}
			calls[c.Arm][c.QID] = append(calls[c.Arm][c.QID], c)
			return nil
		})
		if err != nil {
			return err
		}
		problems = append(problems, bad...)
	}

	armSet := map[string]bool{}
	for a := range answers {
		armSet[a] = true
	}
	for a := range calls {
		armSet[a] = true
	}
	var armNames []string
	for a := range armSet {
		if len(arms) == 0 || contains(arms, a) {
			armNames = append(armNames, a)
		}
	}
	sort.Strings(armNames)
	if len(armNames) == 0 {
		return fmt.Errorf("no answers or calls found")
	}

	var results []*armResult
	for _, arm := range armNames {
		r := &armResult{Arm: arm}
		if l := setup[arm]; l != nil {
			r.Listing = *l
		}
		switch l := r.Listing; {
		case l.Runs > 1 && l.Min != l.Bytes:
			r.Notes = append(r.Notes, fmt.Sprintf("%d tools listings of different sizes, %d to %d B: the largest counts", l.Runs, l.Min, l.Bytes))
		case l.Runs == 0 && arm != armRipgrep:
			r.Notes = append(r.Notes, "no tools listing in the log: the conversation figures count it as 0 B")
		}
		if r.Listing.Failed > 0 {
			r.Notes = append(r.Notes, plural(r.Listing.Failed, "tools listing")+" failed, not counted")
		}
		asked := []string(qids)
		if len(asked) == 0 {
			asked = namedQuestions(d, answers[arm], calls[arm])
		}
		qs, err := d.pick(asked)
		if err != nil {
			return err
		}
		for qid := range answers[arm] {
			if !contains(asked, qid) {
				r.Notes = append(r.Notes, fmt.Sprintf("answer to %s, not among the questions scored, ignored", qid))
			}
		}
		for qid := range calls[arm] {
			if !contains(asked, qid) {
				r.Notes = append(r.Notes, fmt.Sprintf("%d calls logged under %s, not among the questions scored, ignored", len(calls[arm][qid]), qid))
			}
		}
		var missing, over, tooMany []string
		for _, q := range qs {
			st := &qStats{Q: q}
			if a, ok := answers[arm][q.ID]; ok {
				st.Answered = true
				st.Cited = a.Citations
				st.NDCG = ndcgAt5(a.Citations, q.Relevant)
				if len(a.Citations) > maxCites {
					tooMany = append(tooMany, q.ID)
				}
			} else {
				missing = append(missing, q.ID)
			}
			for _, c := range calls[arm][q.ID] {
				st.Calls++
				st.Bytes += c.Bytes
				if c.Error || c.Refused {
					st.Failed++
				}
			}
			if st.Calls > maxCalls {
				over = append(over, fmt.Sprintf("%s (%d)", q.ID, st.Calls))
			}
			r.Questions = append(r.Questions, st)
		}
		if len(missing) > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("no answer (scored 0): %s", strings.Join(missing, ", ")))
		}
		if len(over) > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("more than %d calls: %s", maxCalls, strings.Join(over, ", ")))
		}
		if len(tooMany) > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("more than %d citations (only the first %d scored): %s", maxCites, maxCites, strings.Join(tooMany, ", ")))
		}
		sort.Strings(r.Notes)
		results = append(results, r)
	}

	report := renderReport(d, results, problems, *label, time.Now())
	fmt.Print(report)
	if *out != "" {
		if err := appendReport(*out, report); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "appended to %s\n", *out)
	}
	return nil
}

// namedQuestions are the dataset's questions an arm's answers or calls name,
// in queries.json order.
func namedQuestions(d *Dataset, answers map[string]Answer, calls map[string][]Call) []string {
	var out []string
	for _, q := range d.Queries {
		_, a := answers[q.ID]
		_, c := calls[q.ID]
		if a || c {
			out = append(out, q.ID)
		}
	}
	return out
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func renderReport(d *Dataset, results []*armResult, problems []string, label string, now time.Time) string {
	var b strings.Builder
	title := label
	if title == "" {
		title = "loop benchmark"
	}
	fmt.Fprintf(&b, "## %s: %s, %s\n\n", title, d.Name, now.UTC().Format("2006-01-02 15:04 UTC"))
	for _, r := range results {
		ids := make([]string, len(r.Questions))
		for i, q := range r.Questions {
			ids[i] = q.Q.ID
		}
		fmt.Fprintf(&b, "- %s: %d questions (%s)\n", r.Arm, len(ids), strings.Join(ids, ", "))
	}
	b.WriteString("\nnDCG@5 (linear gains) of the cited notes; calls are tool calls per question (the vault-rag tools listing not counted); bytes are tool output bytes per question.\n\n")
	b.WriteString("| arm | questions | answered | nDCG@5 | calls/q | bytes/q mean | bytes/q median | over 6 calls | failed calls | tools listing |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		s := summarize(r.Questions)
		listing := "–"
		if r.Listing.Runs > 0 {
			listing = fmt.Sprintf("%d × %d B", r.Listing.Runs, r.Listing.Bytes)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.3f | %.1f | %.0f | %.0f | %d | %d | %s |\n",
			r.Arm, s.N, s.Answered, s.NDCG, s.Calls, s.BytesMean, s.BytesMedian, s.OverLimit, s.Failed, listing)
	}
	b.WriteString("\nPer conversation, in bytes of tool output: a client reads the tools listing once per conversation, whether or not a question is about notes, " +
		"so N questions cost the listing + N × the mean bytes/q (unrounded). " +
		"The listing is the largest one in the arm's log; an arm without one counts 0 (the ripgrep arm: rg, sed, cat and ls are the client's own shell).\n\n")
	b.WriteString("| arm | tools listing |")
	for _, n := range conversationSizes {
		fmt.Fprintf(&b, " %s |", plural(n, "question"))
	}
	b.WriteString("\n|---|---:|" + strings.Repeat("---:|", len(conversationSizes)) + "\n")
	for _, r := range results {
		s := summarize(r.Questions)
		fmt.Fprintf(&b, "| %s | %d |", r.Arm, r.Listing.Bytes)
		for _, n := range conversationSizes {
			fmt.Fprintf(&b, " %.0f |", conversationBytes(r.Listing.Bytes, s.BytesMean, n))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nBy kind:\n\n| kind | arm | n | nDCG@5 | calls/q | bytes/q mean | bytes/q median |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, k := range d.kinds() {
		for _, r := range results {
			var qs []*qStats
			for _, q := range r.Questions {
				if q.Q.Kind == k {
					qs = append(qs, q)
				}
			}
			if len(qs) == 0 {
				continue
			}
			s := summarize(qs)
			fmt.Fprintf(&b, "| %s | %s | %d | %.3f | %.1f | %.0f | %.0f |\n", k, r.Arm, s.N, s.NDCG, s.Calls, s.BytesMean, s.BytesMedian)
		}
	}
	b.WriteString("\n<details><summary>Per question</summary>\n\n| qid | kind | arm | nDCG@5 | calls | bytes | cited |\n|---|---|---|---:|---:|---:|---|\n")
	type row struct {
		r *armResult
		q *qStats
	}
	var rows []row
	for _, r := range results {
		for _, q := range r.Questions {
			rows = append(rows, row{r, q})
		}
	}
	order := map[string]int{}
	for i, q := range d.Queries {
		order[q.ID] = i
	}
	sort.SliceStable(rows, func(i, j int) bool { return order[rows[i].q.Q.ID] < order[rows[j].q.Q.ID] })
	for _, rw := range rows {
		cited := "(no answer)"
		if rw.q.Answered {
			var parts []string
			for _, c := range rw.q.Cited {
				mark := ""
				if g := rw.q.Q.Relevant[cleanPath(c)]; g > 0 {
					mark = fmt.Sprintf(" [%d]", g)
				}
				parts = append(parts, "`"+strings.ReplaceAll(c, "|", `\|`)+"`"+mark)
			}
			cited = strings.Join(parts, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.3f | %d | %d | %s |\n", rw.q.Q.ID, rw.q.Q.Kind, rw.r.Arm, rw.q.NDCG, rw.q.Calls, rw.q.Bytes, cited)
	}
	b.WriteString("\n</details>\n")
	var notes []string
	for _, r := range results {
		for _, n := range r.Notes {
			notes = append(notes, r.Arm+": "+n)
		}
	}
	notes = append(notes, problems...)
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

const reportHeader = "# Loop benchmark\n\nAssistants answer held-out questions about a vault with vault-rag's MCP tools only, or with rg, sed, cat and ls only; the protocol is bench/loop/README.md. Each section below was appended by `loopbench score`.\n\n"

func appendReport(path, report string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if os.IsNotExist(statErr) {
		if _, err := f.WriteString(reportHeader); err != nil {
			return err
		}
	}
	_, err = f.WriteString(report)
	return err
}
