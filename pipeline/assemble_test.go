package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/stagetest"
	"github.com/vault-rag/vault-rag/pipeline"
)

// pagerVault has one note that answers "when is the pager handover", under
// a heading path two levels deep, and a few others that mention the pager.
var pagerVault = map[string]string{
	"ops/pager.md": "---\ndate: 2024-01-10\n---\n# Pager\n\nThe pager covers production. See [[alerts]].\n\n" +
		"## Rotation\n\nThe rotation is weekly.\n\n### Handover\n\nThe handover happens on Monday at ten. Bring the pager notebook.\n\n" +
		"## Escalation\n\nEscalate after thirty minutes.\n",
	"ops/alerts.md":    "# Alerts\n\nAlerts go to the pager first, then to the channel.\n",
	"ops/oncall.md":    "# On-call\n\nWhoever holds the pager answers the alerts.\n\n## Pay\n\nThe pager pays a weekly bonus.\n",
	"ops/runbook.md":   "# Runbook\n\nRestart the pager bridge when alerts stop.\n",
	"notes/journal.md": "# Journal\n\nRead [[pager]] today.\n",
	"home/bread.md":    "# Bread\n\nThe dough rose overnight.\n",
}

func TestAssemblePassages(t *testing.T) {
	env := stagetest.Env(t, pagerVault)
	res, _, err := pipeline.Run(context.Background(), env, config(t, "keyword"), pipeline.Request{Text: "when is the pager handover", Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) == 0 || res.Notes[0].Path != "ops/pager.md" {
		t.Fatalf("notes %v, want ops/pager.md first", paths(res))
	}
	top := res.Notes[0]
	if len(top.Passages) == 0 {
		t.Fatal("the top note has no passage")
	}
	p := top.Passages[0]
	if got := strings.Join(p.HeadingPath, " › "); got != "Rotation › Handover" {
		t.Errorf("heading path %q, want Rotation › Handover", got)
	}
	if !strings.Contains(p.Text, "The handover happens on Monday at ten.") {
		t.Errorf("passage %q lacks the answer sentence", p.Text)
	}
	if len(p.Text) > pipeline.PassageBytes {
		t.Errorf("the first passage is %d bytes, over %d", len(p.Text), pipeline.PassageBytes)
	}
	if strings.Join(top.Match.Terms, " ") != "pager handover" || len(top.Match.Missing) != 0 {
		t.Errorf("match terms %q missing %q, want pager and handover held", top.Match.Terms, top.Match.Missing)
	}
	if len(top.Match.Ranks) != 1 || top.Match.Ranks[0].Stage != "keyword" || top.Match.Ranks[0].Rank != 1 {
		t.Errorf("match ranks %+v, want keyword rank 1", top.Match.Ranks)
	}
	// Every note at the default detail: the budget of its rank.
	for i, n := range res.Notes {
		budget, least, count := pipeline.PassageBytes, 1, 2
		switch {
		case i >= pipeline.PassageNotes:
			// A brief passage only when it holds a word of the query.
			budget, least, count = pipeline.BriefBytes, 0, 1
		case i > 0:
			budget, count = pipeline.NextBytes, 1
		}
		if len(n.Passages) < least || len(n.Passages) > count {
			t.Errorf("%s (rank %d): %d passages, want %d..%d", n.Path, n.Rank, len(n.Passages), least, count)
		}
		for _, p := range n.Passages {
			if len(p.Text) > budget {
				t.Errorf("%s (rank %d): a passage of %d bytes, over %d", n.Path, n.Rank, len(p.Text), budget)
			}
		}
	}
}

func TestAssembleDetail(t *testing.T) {
	env := stagetest.Env(t, pagerVault)
	run := func(req pipeline.Request) *pipeline.Result {
		t.Helper()
		req.Now = testNow
		res, _, err := pipeline.Run(context.Background(), env, config(t, "keyword"), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	section := run(pipeline.Request{Text: "when is the pager handover", Detail: pipeline.DetailSection})
	if len(section.Notes) == 0 || len(section.Notes[0].Passages) != 1 {
		t.Fatalf("section detail: %+v", section.Notes)
	}
	if got, want := section.Notes[0].Passages[0].Text, "The handover happens on Monday at ten. Bring the pager notebook."; got != want {
		t.Errorf("section detail: %q, want the whole Handover section %q", got, want)
	}
	brief := run(pipeline.Request{Text: "when is the pager handover", Detail: pipeline.DetailBrief})
	for _, n := range brief.Notes {
		if len(n.Passages) != 1 || len(n.Passages[0].Text) > pipeline.BriefBytes {
			t.Errorf("brief detail: %s has %+v", n.Path, n.Passages)
		}
	}

	_, _, err := pipeline.Run(context.Background(), env, config(t, "keyword"), pipeline.Request{Text: "pager", Now: testNow, Detail: "everything"})
	if !errors.Is(err, pipeline.ErrBadQuery) || !strings.Contains(err.Error(), `"everything"`) {
		t.Errorf("an unknown detail: %v, want ErrBadQuery naming it", err)
	}
}

func TestAssemblePassageNotes(t *testing.T) {
	env := stagetest.Env(t, pagerVault)
	for _, limit := range []int{0, 1, 2} {
		res, _, err := pipeline.Run(context.Background(), env, config(t, "keyword"), pipeline.Request{Text: "pager alerts", Now: testNow, PassageNotes: limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) < 3 {
			t.Fatalf("notes %v, want 3 or more", paths(res))
		}
		for i, n := range res.Notes {
			want := limit == 0 || i < limit
			if got := len(n.Passages) > 0; got != want {
				t.Errorf("passage notes %d: %s (rank %d) has passages %v, want %v", limit, n.Path, n.Rank, got, want)
			}
			if got := len(n.Match.Terms)+len(n.Match.Missing) > 0; got != want {
				t.Errorf("passage notes %d: %s (rank %d) has a match %v, want %v", limit, n.Path, n.Rank, got, want)
			}
		}
	}
}

func TestAssembleRelatedOnRequest(t *testing.T) {
	env := stagetest.Env(t, pagerVault)
	for _, related := range []bool{false, true} {
		res, _, err := pipeline.Run(context.Background(), env, config(t, "keyword"), pipeline.Request{Text: "when is the pager handover", Now: testNow, Related: related})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) < 2 || res.Notes[0].Path != "ops/pager.md" {
			t.Fatalf("notes %v, want ops/pager.md first", paths(res))
		}
		for _, n := range res.Notes[1:] {
			if len(n.Related) != 0 {
				t.Errorf("related %v: %s (rank %d) carries related notes", related, n.Path, n.Rank)
			}
		}
		got := map[string]string{}
		for _, r := range res.Notes[0].Related {
			got[r.Path] = r.Direction
		}
		if !related {
			if len(got) != 0 {
				t.Errorf("related notes %v without asking", got)
			}
			continue
		}
		if got["ops/alerts.md"] != "links to" || got["notes/journal.md"] != "linked from" || len(got) != 2 {
			t.Errorf("related notes %v, want alerts.md (links to) and journal.md (linked from)", got)
		}
	}
}
