package stages_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/stages"
)

func TestExpandTemplates(t *testing.T) {
	tests := []struct {
		query    string
		marker   string // a phrase only its template has
		contains string // the subject as the template restates it
	}{
		{"why did writes get slow at night?", "root cause", "why: did writes get slow at night."},
		{"Why is the WAL slow", "root cause", "why: is the wal slow."},
		{"how do I rotate the pager", "The steps", "How to do it: do i rotate the pager."},
		{"HOW to drain a node?", "The steps", "How to do it: to drain a node."},
		{"what is lease_ttl_ms", "Reference:", "Reference: is lease_ttl_ms."},
		{"which flag sets the fsync interval", "Reference:", "Reference: flag sets the fsync interval."},
		{"who owns the pager rotation", "Reference:", "Reference: owns the pager rotation."},
		{"when was retention changed", "Reference:", "Reference: was retention changed."},
		{"where are the runbooks", "Reference:", "Reference: are the runbooks."},
		{"compaction backlog", "Notes on", "Notes on compaction backlog:"},
		{"Whyever not", "Notes on", "Notes on whyever not:"}, // a question word only as a whole word
		{"FERR-4102", "Notes on", "Notes on ferr-4102:"},     // no question word
		{"why", "root cause", "What happened and why: ."},    // nothing after the question word
	}
	markers := []string{"root cause", "The steps", "Reference:", "Notes on"}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := stages.Expand(tc.query)
			if !strings.HasPrefix(got, tc.query+"\n\n") {
				t.Errorf("expansion does not start with the query:\n%s", got)
			}
			if !strings.Contains(got, tc.marker) {
				t.Errorf("want the %q template:\n%s", tc.marker, got)
			}
			for _, m := range markers {
				if m != tc.marker && strings.Contains(got, m) {
					t.Errorf("holds another template's %q:\n%s", m, got)
				}
			}
			if !strings.Contains(got, tc.contains) {
				t.Errorf("want %q in:\n%s", tc.contains, got)
			}
			for i := 0; i < 10; i++ {
				if again := stages.Expand(tc.query); again != got {
					t.Fatalf("not deterministic:\n%s\nthen\n%s", got, again)
				}
			}
		})
	}
}

func TestExpandFoldsWhiteSpace(t *testing.T) {
	got := stages.Expand("  how   do\tI \n rotate  keys?  ")
	if !strings.HasPrefix(got, "how do I rotate keys?\n\n") {
		t.Errorf("query not folded:\n%s", got)
	}
	if want := stages.Expand("how do I rotate keys?"); got != want {
		t.Errorf("white space changed the expansion:\n%s\nvs\n%s", got, want)
	}
}

func TestHydeRun(t *testing.T) {
	env := stagetest.Env(t, map[string]string{
		"work/compaction.md": "# Compaction\n\ncompaction stalled because the disk was full\n",
		"work/pager.md":      "# Pager\n\nthe pager rotation is weekly\n",
		"home/bread.md":      "# Bread\n\nthe dough rose overnight\n",
	})
	h := &stages.Hyde{}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	st := stages.NewState(stages.Query{Text: "why did compaction stall"})
	if err := h.Run(context.Background(), env, st); err != nil {
		t.Fatal(err)
	}
	if len(st.Lists) != 1 || st.Lists[0].Stage != "hyde" || len(st.Ranking) == 0 {
		t.Fatalf("hyde produced lists %+v", st.Lists)
	}
	id := noteIDs(t, stagetest.DB(t, env))
	if st.Ranking[0].NoteID != id["work/compaction.md"] {
		t.Errorf("top note %d, want the compaction note %d", st.Ranking[0].NoteID, id["work/compaction.md"])
	}

	scoped := stages.NewState(stages.Query{Text: "why did compaction stall", Filter: index.Filter{PathPrefix: "home/"}})
	if err := h.Run(context.Background(), env, scoped); err != nil {
		t.Fatal(err)
	}
	if got := scoped.Ranking; len(got) != 1 || got[0].NoteID != id["home/bread.md"] {
		t.Errorf("scoped hyde %+v, want only the home note", got)
	}
	if step := scoped.Steps[0]; step.Outcome != index.ScopeFilled || !strings.HasPrefix(step.Info, index.ScopeFilled.String()+":") {
		t.Errorf("scoped hyde outcome %q, info %q, want filled", step.Outcome, step.Info)
	}
}

func TestLadderDefaults(t *testing.T) {
	tests := []struct {
		limit int
		want  []int
	}{
		{40, []int{160, 640, 2560, index.MaxKNN}},
		{1, []int{4, 16, 64, index.MaxKNN}},
		{64, []int{256, 1024, index.MaxKNN}},
		{100, []int{400, 1600, index.MaxKNN}}, // 64×100 passes MaxKNN: the ladder stops there
		{1024, []int{index.MaxKNN}},
		{10000, []int{index.MaxKNN}},
	}
	for _, tc := range tests {
		v := &stages.Vector{Limit: tc.limit}
		if err := v.Validate(); err != nil {
			t.Errorf("vector limit %d: %v", tc.limit, err)
			continue
		}
		if !reflect.DeepEqual(v.Ladder, tc.want) {
			t.Errorf("vector limit %d: ladder %v, want %v", tc.limit, v.Ladder, tc.want)
		}
		h := &stages.Hyde{Limit: tc.limit}
		if err := h.Validate(); err != nil {
			t.Errorf("hyde limit %d: %v", tc.limit, err)
		}
	}
	for _, bad := range [][]int{{10, 10}, {20, 10}, {0, 5}, {-1}} {
		v := &stages.Vector{Ladder: bad}
		if err := v.Validate(); err == nil {
			t.Errorf("ladder %v accepted; it must rise from above zero", bad)
		}
	}
	v := &stages.Vector{Ladder: []int{10, 20}}
	if err := v.Validate(); err != nil || !reflect.DeepEqual(v.Ladder, []int{10, 20}) {
		t.Errorf("custom ladder: %v %v", v.Ladder, err)
	}
}
