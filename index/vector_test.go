package index

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models/bow"
)

// A note search is the exact KNN cut to each note's nearest chunk: its
// notes, the note it left out first, and how it ended.
func TestVectorNotes(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	d := open(t, dbPath)
	v := bow.Vector("zebras xylophone quokka")
	all, err := exactKNN(ctx, d, v, fixtureChunks)
	if err != nil {
		t.Fatal(err)
	}
	var firsts []Hit // each note's nearest chunk, in order
	seen := map[int64]bool{}
	for _, h := range all {
		if !seen[h.NoteID] {
			seen[h.NoteID] = true
			firsts = append(firsts, h)
		}
	}
	if len(firsts) != fixtureNotes {
		t.Fatalf("%d notes among every chunk, want %d", len(firsts), fixtureNotes)
	}
	for _, mode := range []VectorMode{VectorExact, VectorBinary} {
		t.Run(mode.String(), func(t *testing.T) {
			res, err := d.Vector(ctx, VectorQuery{Vector: v, Mode: mode, Limit: 2, Ladder: []int{fixtureChunks}})
			if err != nil {
				t.Fatal(err)
			}
			want := VectorResult{Hits: firsts[:2], Next: &firsts[2], Outcome: ScopeFilled, K: fixtureChunks, Chunks: fixtureChunks, Want: 2}
			if !reflect.DeepEqual(res, want) {
				t.Errorf("two notes: %+v, want %+v", res, want)
			}
			res, err = d.Vector(ctx, VectorQuery{Vector: v, Mode: mode, Limit: fixtureNotes + 1, Ladder: []int{2, fixtureChunks}})
			if err != nil {
				t.Fatal(err)
			}
			want = VectorResult{Hits: firsts, Outcome: ScopeDrained, K: fixtureChunks, Chunks: fixtureChunks, Want: fixtureNotes + 1}
			if !reflect.DeepEqual(res, want) {
				t.Errorf("more notes than the vault holds: %+v, want %+v", res, want)
			}
			res, err = d.Vector(ctx, VectorQuery{Vector: v, Mode: mode, Limit: fixtureNotes, Ladder: []int{1, 2}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != ScopeLadderEnd || res.K != 2 || len(res.Hits) == 0 || len(res.Hits) > 2 {
				t.Errorf("a ladder ending at 2 chunks: %+v, want ladder-end with at most 2 notes", res)
			}
		})
	}

	// A scope: only its notes, and Want is what it holds.
	res, err := d.Vector(ctx, VectorQuery{Vector: v, Mode: VectorExact, Limit: 5, Filter: Filter{Project: "apollo"}})
	if err != nil {
		t.Fatal(err)
	}
	paths := hitPaths(t, d, res.Hits)
	if res.Outcome != ScopeFilled || res.Want != 2 || len(paths) != 2 || paths[0] != "alpha.md" || paths[1] != "projects/gamma.md" || res.Next != nil {
		t.Errorf("apollo's notes: %+v (%v), want alpha.md, projects/gamma.md, filled", res, paths)
	}
	res, err = d.Vector(ctx, VectorQuery{Vector: v, Limit: 5, Filter: Filter{Type: "project", Status: "done"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (VectorResult{Outcome: ScopeDrained, Chunks: fixtureChunks}); !reflect.DeepEqual(res, want) {
		t.Errorf("a scope with no note: %+v, want %+v", res, want)
	}

	for name, q := range map[string]VectorQuery{
		"neither K nor Limit":   {Vector: v},
		"both K and Limit":      {Vector: v, K: 3, Limit: 3},
		"a chunk search scope":  {Vector: v, K: 3, Filter: Filter{Type: "project"}},
		"a chunk search ladder": {Vector: v, K: 3, Ladder: []int{3}},
		"no such mode":          {Vector: v, K: 3, Mode: VectorMode(7)},
	} {
		if _, err := d.Vector(ctx, q); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestRescored(t *testing.T) {
	for _, tc := range []struct {
		q       VectorQuery
		k, want int
	}{
		{VectorQuery{}, 160, 160 * DefaultOversample},
		{VectorQuery{}, 10, MinCandidates},
		{VectorQuery{Oversample: 1}, 10, MinCandidates},
		{VectorQuery{Oversample: 2}, 1000, 2000},
		{VectorQuery{Candidates: 80}, 10, 80},
		{VectorQuery{Candidates: 1}, 3, 3},
	} {
		if got := tc.q.Rescored(tc.k); got != tc.want {
			t.Errorf("%+v.Rescored(%d) = %d, want %d", tc.q, tc.k, got, tc.want)
		}
	}
}

// A scope outcome reads as its name, in text and in JSON, and back; the zero
// value (no note search) is omitted where the field is optional.
func TestScopeOutcomeText(t *testing.T) {
	type wire struct {
		Outcome ScopeOutcome `json:"outcome,omitempty"`
	}
	for o, want := range map[ScopeOutcome]string{ScopeFilled: `{"outcome":"filled"}`, ScopeDrained: `{"outcome":"drained"}`, ScopeLadderEnd: `{"outcome":"ladder-end"}`, 0: `{}`} {
		raw, err := json.Marshal(wire{o})
		if err != nil || string(raw) != want {
			t.Errorf("%d: %s (%v), want %s", int(o), raw, err, want)
		}
		var back wire
		if err := json.Unmarshal(raw, &back); err != nil || back.Outcome != o {
			t.Errorf("%s read back as %d (%v)", raw, int(back.Outcome), err)
		}
	}
	if got := ScopeOutcome(9).String(); got != "ScopeOutcome(9)" {
		t.Errorf("an unknown outcome reads %q", got)
	}
	var o ScopeOutcome
	if err := o.UnmarshalText([]byte("full")); err == nil {
		t.Error("an unknown name was read")
	}
}

// A note search drains once it has examined every chunk that has a vector:
// the chunks of a note searched by keyword only (too long to embed) are not
// waited for.
func TestVectorNotesKeywordOnly(t *testing.T) {
	ctx := context.Background()
	vaultDir := filepath.Join(t.TempDir(), "vault")
	vaulttest.WriteTree(t, vaultDir, map[string]string{
		"long.md":  "# Long\n\nzebras first\n\n## Second\n\nzebras again\n\n## Third\n\nzebras once more\n",
		"short.md": "# Short\n\nquokka zebras\n",
	}, testTime)
	dbPath := filepath.Join(t.TempDir(), "vault.db")
	if _, err := Build(ctx, newFake(), BuildOptions{VaultPath: vaultDir, DBPath: dbPath, MaxChunks: 2}); err != nil {
		t.Fatal(err)
	}
	d := open(t, dbPath)
	for _, mode := range []VectorMode{VectorExact, VectorBinary} {
		res, err := d.Vector(ctx, VectorQuery{Vector: bow.Vector("zebras"), Mode: mode, Limit: 5, Ladder: []int{1, 4}})
		if err != nil {
			t.Fatal(err)
		}
		if paths := hitPaths(t, d, res.Hits); res.Outcome != ScopeDrained || res.Chunks != 1 || res.K != 1 || len(paths) != 1 || paths[0] != "short.md" {
			t.Errorf("%s: %+v (%v), want short.md alone, drained after its one chunk", mode, res, paths)
		}
	}
}
