package eval

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// answersDataset is a dataset of two queries, as LoadAnswers checks ids
// against.
var answersDataset = &Dataset{Name: "tiny", Queries: []Query{
	{ID: "q1", Relevant: map[string]int{"a.md": 2}},
	{ID: "q2", Relevant: map[string]int{"b.md": 1}},
}}

func writeAnswers(t *testing.T, text string) string {
	t.Helper()
	path := AnswersPath(t.TempDir(), "tiny")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAnswersPath(t *testing.T) {
	if got, want := AnswersPath("/r", "demo"), filepath.Join("/r", "eval", "answers", "demo.json"); got != want {
		t.Errorf("AnswersPath = %s, want %s", got, want)
	}
}

func TestLoadAnswers(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		a, err := LoadAnswers(filepath.Join(t.TempDir(), "none.json"), answersDataset)
		if a != nil || err != nil {
			t.Errorf("a missing file: %v, %v; want nil, nil", a, err)
		}
	})
	t.Run("good file", func(t *testing.T) {
		path := writeAnswers(t, `{"queries": [
			{"id": "q1", "notes": {"a.md": ["The pager rotates weekly.", "Handover is on Monday."], "c.md": ["Also here."]}},
			{"id": "q2", "notes": {"b.md": ["Flush the cache."]}}
		]}`)
		a, err := LoadAnswers(path, answersDataset)
		if err != nil {
			t.Fatal(err)
		}
		want := Answers{
			"q1": {"a.md": {"The pager rotates weekly.", "Handover is on Monday."}, "c.md": {"Also here."}},
			"q2": {"b.md": {"Flush the cache."}},
		}
		if !reflect.DeepEqual(a, want) {
			t.Errorf("answers %v, want %v", a, want)
		}
	})
	t.Run("some queries judged", func(t *testing.T) {
		a, err := LoadAnswers(writeAnswers(t, `{"queries": [{"id": "q2", "notes": {"b.md": ["Flush the cache."]}}]}`), answersDataset)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := a["q1"]; ok || len(a) != 1 {
			t.Errorf("answers %v, want q2's only", a)
		}
	})
	t.Run("unknown query id", func(t *testing.T) {
		path := writeAnswers(t, `{"queries": [{"id": "q1", "notes": {}}, {"id": "q9", "notes": {"a.md": ["x"]}}]}`)
		a, err := LoadAnswers(path, answersDataset)
		if err == nil || a != nil {
			t.Fatalf("an unknown id: %v, %v; want an error", a, err)
		}
		if msg := err.Error(); !strings.Contains(msg, `"q9"`) || !strings.Contains(msg, "tiny") || !strings.Contains(msg, path) {
			t.Errorf("error %q should name the id, the dataset and the file", msg)
		}
	})
	t.Run("not JSON", func(t *testing.T) {
		path := writeAnswers(t, `{"queries": [`)
		if _, err := LoadAnswers(path, answersDataset); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("broken JSON: %v, want an error naming the file", err)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		// A folder where the file should be: not "missing", an error.
		path := AnswersPath(t.TempDir(), "tiny")
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		if a, err := LoadAnswers(path, answersDataset); err == nil {
			t.Errorf("a folder read as answers %v", a)
		}
	})
}

func TestHoldsAnswer(t *testing.T) {
	a := Answers{"q1": {
		"a.md": {"The pager rotates  weekly.", "Handover is on Monday."},
		"e.md": {"", "   "},
	}}
	cases := []struct {
		name, id, path, shown string
		want                  bool
	}{
		{"verbatim", "q1", "a.md", "Intro. The pager rotates  weekly. More.", true},
		{"the second sentence", "q1", "a.md", "handover is on monday.", true},
		{"case differs", "q1", "a.md", "THE PAGER ROTATES WEEKLY.", true},
		{"white space differs", "q1", "a.md", "the pager\n\trotates weekly.", true},
		{"split over lines of a passage", "q1", "a.md", "The pager\nrotates\nweekly. And then", true},
		{"part of the sentence", "q1", "a.md", "The pager rotates", false},
		{"another sentence", "q1", "a.md", "The pager is on call.", false},
		{"another note's answer", "q1", "b.md", "The pager rotates weekly.", false},
		{"another query", "q2", "a.md", "The pager rotates weekly.", false},
		{"empty judgements hold nothing", "q1", "e.md", "anything at all", false},
		{"nothing shown", "q1", "a.md", "", false},
	}
	for _, c := range cases {
		if got := a.HoldsAnswer(c.id, c.path, c.shown); got != c.want {
			t.Errorf("%s: HoldsAnswer(%q, %q, %q) = %v, want %v", c.name, c.id, c.path, c.shown, got, c.want)
		}
	}
	var none Answers
	if none.HoldsAnswer("q1", "a.md", "The pager rotates weekly.") {
		t.Error("nil answers hold an answer")
	}
}

func TestMeanAnswerOverJudged(t *testing.T) {
	approx := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
	all := []Scores{
		{Recall: map[int]float64{1: 1, 10: 1}, MRR: 1, NDCG: 1, Answer: 1, Bytes: 1000, Judged: 1},
		{Recall: map[int]float64{1: 0, 10: 1}, MRR: 0.5, NDCG: 0.5, Answer: 0, Bytes: 3000, Judged: 1},
		// Unjudged: its Answer and Bytes are not figures and must not count.
		{Recall: map[int]float64{1: 0, 10: 0}, MRR: 0, NDCG: 0, Answer: 1, Bytes: 99999, Judged: 0},
	}
	m := Mean(all)
	if m.Judged != 2 || !approx(m.Answer, 0.5) || !approx(m.Bytes, 2000) {
		t.Errorf("answer %v bytes %v judged %d, want 0.5, 2000 over 2 judged queries", m.Answer, m.Bytes, m.Judged)
	}
	// The ranking measures average over every query.
	if !approx(m.NDCG, 0.5) || !approx(m.MRR, 0.5) || !approx(m.Recall[10], 2.0/3) || !approx(m.Recall[1], 1.0/3) {
		t.Errorf("ndcg %v mrr %v recall %v, want means over all 3 queries", m.NDCG, m.MRR, m.Recall)
	}

	none := Mean(all[2:])
	if none.Judged != 0 || none.Answer != 0 || none.Bytes != 0 {
		t.Errorf("nothing judged: answer %v bytes %v judged %d, want zeros", none.Answer, none.Bytes, none.Judged)
	}
	if empty := Mean(nil); empty.Judged != 0 || empty.Answer != 0 || empty.Recall == nil {
		t.Errorf("no scores: %+v", empty)
	}
}
