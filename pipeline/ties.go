package pipeline

import (
	"context"
	"math"
	"sort"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/stages"
)

// ScoreTolerance is the default largest difference in a model-derived score
// (a cosine, a reranker logit) that is taken for floating-point noise between
// two CPUs; a model's manifest entry may set its own (models.Spec
// ScoreTolerance), and Tolerance picks the largest a configuration meets.
//
// ONNX Runtime picks its kernels by instruction set (AVX2, AVX-512, VNNI,
// AMX), and two kernel families sum in different orders, so one text embeds
// to vectors that differ in their last bits. Measured on 2026-11-30 (README,
// "Reproducible"): fp32 bge-small-en-v1.5 moved at most 1.0e-6 between two
// real machines (AMD EPYC and Intel Xeon with AVX-512 and AMX, the old and new
// frozen fixtures); the int8 bge-small-en-v1.5-q moved 5.5e-4 between this
// Intel (VNNI/AMX kernels) and the AVX2 kernels (scripts/measure-drift.sh,
// under valgrind), its quantized integer kernels differing by more than
// rounding. Each model's tolerance is a margin over its measured drift: 30x
// for fp32 (3e-5), about 4x for int8 (2e-3, where a wider one would call most
// of a list a near-tie).
const ScoreTolerance = 3e-5

// Tolerance is the largest score tolerance among the models a configuration
// needs (pipeline.Needs, with the index's embedder), the default where the
// manifest sets none: a list is as noisy as its noisiest model.
func Tolerance(cfg *Config, m models.Manifest, indexEmbedder string) float64 {
	tol := ScoreTolerance
	for _, name := range Needs(cfg, indexEmbedder) {
		if spec, err := m.Lookup(name); err == nil && spec.ScoreTolerance > tol {
			tol = spec.ScoreTolerance
		}
	}
	return tol
}

// NearTie is two notes that one stage put next to each other (or the last
// note of its list and the best one it left out) with scores closer than the
// tolerance: another CPU may order them the other way, and every stage after
// it inherits that order.
type NearTie struct {
	Stage string  `json:"stage"`
	Rank  int     `json:"rank"` // the better of the two positions, from 1
	A     int64   `json:"a"`
	B     int64   `json:"b"`
	Gap   float64 `json:"gap"`
}

// NearTies lists the near-ties of every step whose scores are not exact
// (stages.Step.SameOnEveryCPU: bm25, rank fusion and boosts over them come out the same
// on every CPU and are skipped; a near-tie among them is real, not noise).
// Exactly equal scores are not near-ties: they come from equal inputs, are
// equal on every CPU, and are broken the same way everywhere.
func NearTies(steps []stages.Step, tol float64) []NearTie {
	var out []NearTie
	for _, s := range steps {
		out = append(out, NearTies(s.Side, tol)...)
		if s.SameOnEveryCPU {
			continue
		}
		for i := 1; i < len(s.Items); i++ {
			a, b := s.Items[i-1], s.Items[i]
			if gap := math.Abs(a.Score - b.Score); gap > 0 && gap < tol {
				out = append(out, NearTie{Stage: s.Stage, Rank: i, A: a.NoteID, B: b.NoteID, Gap: gap})
			}
		}
		if n := len(s.Items); n > 0 && s.Cut != nil {
			last := s.Items[n-1]
			if gap := math.Abs(last.Score - s.Cut.Score); gap > 0 && gap < tol {
				out = append(out, NearTie{Stage: s.Stage, Rank: n, A: last.NoteID, B: s.Cut.NoteID, Gap: gap})
			}
		}
	}
	return out
}

// TiedNotes is the set of notes taking part in any of the near-ties.
func TiedNotes(ties []NearTie) map[int64]bool {
	out := map[int64]bool{}
	for _, t := range ties {
		out[t.A], out[t.B] = true, true
	}
	return out
}

// TiedPaths names the notes of near-ties, sorted.
func TiedPaths(ctx context.Context, db *index.DB, ties []NearTie) ([]string, error) {
	var ids []int64
	for id := range TiedNotes(ties) {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	notes, err := db.Notes(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, notes[id].Path)
	}
	sort.Strings(out)
	return out, nil
}
