package models

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/vault-rag/vault-rag/internal/modeltest"
)

// These tests run the real cross-encoder code path end to end on a real-size
// model: all-MiniLM-L6-v2, the cost stand-in for ms-marco-MiniLM-L-6-v2 (the
// same encoder, no relevance head). The day the real cross-encoder is
// installed, the same path runs it; only its numbers are new.

const standIn = "all-MiniLM-L6-v2-standin"

var standInOnce struct {
	sync.Once
	reg *Registry
	ce  *CrossEncoder
	err error
}

// realStandIn is the installed stand-in, loaded once; it skips (fails under
// VAULT_RAG_REQUIRE_MODELS=1) when it or ONNX Runtime is missing.
func realStandIn(t *testing.T) *CrossEncoder {
	t.Helper()
	requireRuntime(t)
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Lookup(standIn)
	if err != nil {
		t.Fatal(err)
	}
	if st := Check(testEnv().DataDir, s); !st.Installed {
		modeltest.Missing(t, "%s not installed in %s (%s); run `make setup`", standIn, testEnv().DataDir, st.Problem)
		return nil
	}
	standInOnce.Do(func() {
		standInOnce.reg, standInOnce.err = NewRegistry(testEnv().DataDir, testEnv().Runtime)
		if standInOnce.err == nil {
			standInOnce.ce, standInOnce.err = standInOnce.reg.CrossEncoder(context.Background(), standIn)
		}
	})
	if standInOnce.err != nil {
		t.Fatalf("load %s: %v", standIn, standInOnce.err)
	}
	return standInOnce.ce
}

func TestStandInIsLabelled(t *testing.T) {
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range m.Models {
		if s.StandInFor == "" {
			if s.Pooling == PoolCLS0 {
				t.Errorf("%s pools cls0 but stands in for nothing: its scores would pass for relevance", s.Name)
			}
			continue
		}
		n++
		real, err := m.Lookup(s.StandInFor)
		if err != nil || real.Role != "cross-encoder" || s.Role != RoleCostStandIn {
			t.Errorf("%s (%s) stands in for %q (%v): want a %s standing in for a cross-encoder", s.Name, s.Role, s.StandInFor, err, RoleCostStandIn)
		}
		if !strings.Contains(s.Description, "COST STAND-IN") || !strings.Contains(s.Description, "means nothing as relevance") {
			t.Errorf("%s: description %q does not say it is a cost stand-in whose scores mean nothing", s.Name, s.Description)
		}
		if s.Pooling != PoolCLS0 || s.Output != "last_hidden_state" {
			t.Errorf("%s: pooling %q output %q, want cls0 over last_hidden_state", s.Name, s.Pooling, s.Output)
		}
	}
	if n == 0 {
		t.Error("no cost stand-in in the manifest")
	}
}

// TestStandInPairs checks the model input the cross-encoder path builds:
// [CLS] query [SEP] passage [SEP], token_type_ids 0 then 1, the passage cut
// to the window and never the query, and the tokenizer's own 128-token
// truncation and padding (all-MiniLM-L6-v2 ships them) not applied.
func TestStandInPairs(t *testing.T) {
	ce := realStandIn(t)
	query := "why did writes stall during compaction"
	q := ce.b.ids(query)
	short := "Compaction blocked the write path for eleven seconds."
	long := strings.Repeat("the lease renewal storm filled the write-ahead log again and again ", 60) // ~700 tokens
	seqs := ce.pairs(query, []string{short, long})
	for i, s := range seqs {
		if len(s.ids) != len(s.types) {
			t.Fatalf("pair %d: %d ids, %d type ids", i, len(s.ids), len(s.types))
		}
		if s.ids[0] != ce.b.cls || s.ids[len(q)+1] != ce.b.sep || s.ids[len(s.ids)-1] != ce.b.sep {
			t.Errorf("pair %d is not [CLS] q [SEP] p [SEP]: %v...", i, s.ids[:min(len(s.ids), 12)])
		}
		for j, id := range q {
			if s.ids[1+j] != id {
				t.Fatalf("pair %d: query token %d is %d, want %d (the query must come whole)", i, j, s.ids[1+j], id)
			}
		}
		for j, ty := range s.types {
			want := int64(0)
			if j >= len(q)+2 {
				want = 1
			}
			if ty != want {
				t.Fatalf("pair %d: token_type_ids[%d] = %d, want %d", i, j, ty, want)
			}
		}
		for _, id := range s.ids {
			if id == 0 {
				t.Fatalf("pair %d holds [PAD]: the tokenizer's own padding leaked in", i)
			}
		}
	}
	if got, want := len(seqs[0].ids), len(q)+len(ce.b.ids(short))+3; got != want {
		t.Errorf("short pair has %d tokens, want %d (no truncation, no padding)", got, want)
	}
	if len(ce.b.ids(long)) <= 512 {
		t.Fatalf("the long passage has only %d tokens; the test needs more than the window", len(ce.b.ids(long)))
	}
	if got := len(seqs[1].ids); got != 512 {
		t.Errorf("long pair has %d tokens, want the window, 512 (passage cut, query whole)", got)
	}
	// A query past 64 tokens is cut to 64; the passage keeps the rest.
	longQuery := strings.Repeat("compaction ", 100)
	s := ce.pairs(longQuery, []string{short})[0]
	if got := len(s.ids) - len(ce.b.ids(short)) - 3; got != maxQueryTokens {
		t.Errorf("a 100-token query keeps %d tokens, want %d", got, maxQueryTokens)
	}
}

// TestStandInBatchEqualsAlone: scoring 30 passages of mixed lengths in one
// call gives what scoring each alone gives, whatever the batching and padding.
func TestStandInBatchEqualsAlone(t *testing.T) {
	ce := realStandIn(t)
	ctx := context.Background()
	query := "why did writes stall during compaction"
	var passages []string
	for i := range 30 {
		passages = append(passages, strings.Repeat("the compaction job held the write lock while the log grew ", 1+(i*7)%12))
	}
	batched, st, err := ce.ScoreStats(ctx, query, passages)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 30 || st.Batches < 1 || st.Padded < st.Tokens || st.Longest > 512 {
		t.Errorf("batch stats %+v", st)
	}
	if float64(st.Padded-st.Tokens) > maxPadding/(1-maxPadding)*float64(st.Tokens)+1 {
		t.Errorf("batch stats %+v: more padding than a %.0f%% bound per batch allows", st, 100*maxPadding)
	}
	worst := 0.0
	for i, p := range passages {
		alone, err := ce.Score(ctx, query, []string{p})
		if err != nil {
			t.Fatal(err)
		}
		d := math.Abs(float64(alone[0] - batched[i]))
		worst = max(worst, d)
		if d > 1e-4*math.Max(1, math.Abs(float64(alone[0]))) {
			t.Errorf("passage %d: batched %v, alone %v", i, batched[i], alone[0])
		}
	}
	t.Logf("worst |batched - alone| = %.3g over %d passages, %d batches, %d tokens, %d fed", worst, len(passages), st.Batches, st.Tokens, st.Padded)
	// The score is a real function of the pair, not a constant.
	distinct := map[float32]bool{}
	for _, v := range batched {
		distinct[v] = true
	}
	if len(distinct) < 10 {
		t.Errorf("only %d distinct scores over 30 different passages", len(distinct))
	}
}
