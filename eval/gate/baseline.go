// Package gate is the regression gate over eval's runs, and the one place
// results are compared: the committed baselines (baselines/<dataset>.json)
// and DiffBaseline, which compares a run with its baseline and tells real
// changes from near-tie flips (BaselineDiff); CompareRanked, which does the
// same for a stored ranked list with its scores (RankedDiff, the pipeline's
// frozen fixtures); ComparePaired, the paired randomization test between two
// configurations (PairedComparison); and the quality check of the users'
// int8 embedder against the gate's fp32 original.
package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vault-rag/vault-rag/eval"
)

// FourDecimals is a figure of a baseline (a mean, a query's nDCG@10), written
// to JSON with four decimals, so a baseline diff shows a change at the fourth
// decimal and nothing below it (float noise).
type FourDecimals float64

// MarshalJSON implements json.Marshaler.
func (f FourDecimals) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(f), 'f', 4, 64)), nil
}

// Metrics are a configuration's mean measures, as committed.
type Metrics struct {
	Recall1  FourDecimals `json:"recall@1"`
	Recall3  FourDecimals `json:"recall@3"`
	Recall5  FourDecimals `json:"recall@5"`
	Recall10 FourDecimals `json:"recall@10"`
	MRR10    FourDecimals `json:"mrr@10"`
	NDCG10   FourDecimals `json:"ndcg@10"`
	// Answer1 and Bytes are answer@1 and the answer's size in bytes
	// (eval.Scores), on a dataset with passage judgements; absent on one
	// without.
	Answer1 *FourDecimals `json:"answer@1,omitempty"`
	Bytes   *FourDecimals `json:"bytes,omitempty"`
}

func metricsOf(s eval.Scores) Metrics {
	m := Metrics{Recall1: FourDecimals(s.Recall[1]), Recall3: FourDecimals(s.Recall[3]), Recall5: FourDecimals(s.Recall[5]),
		Recall10: FourDecimals(s.Recall[10]), MRR10: FourDecimals(s.MRR), NDCG10: FourDecimals(s.NDCG)}
	if s.Judged > 0 {
		a, b := FourDecimals(s.Answer), FourDecimals(s.Bytes)
		m.Answer1, m.Bytes = &a, &b
	}
	return m
}

// Baseline is baselines/<dataset>.json: every configuration's figures and
// per-query ranks, in a stable order.
type Baseline struct {
	Dataset string `json:"dataset"`
	// Embedder is the model the dataset was indexed with: the gate's
	// (models.Manifest.GateModel), whose scores agree across CPUs.
	Embedder string           `json:"embedder"`
	Queries  int              `json:"queries"`
	Notes    int              `json:"notes"`
	Chunks   int              `json:"chunks"`
	Stamp    string           `json:"index_stamp"`
	Configs  []BaselineConfig `json:"configs"`
}

// BaselineConfig is one configuration's committed figures.
type BaselineConfig struct {
	Name    string             `json:"name"`
	Status  string             `json:"status"` // "ok" or "skipped: <reason>"
	Metrics *Metrics           `json:"metrics,omitempty"`
	ByKind  map[string]Metrics `json:"by_kind,omitempty"`
	// Ranks maps a query id to the ranks (1..10) of its relevant notes in the
	// top 10, e.g. "p01": [2, 7]; [] when none made it.
	Ranks map[string][]int `json:"ranks,omitempty"`
	// Found maps a query id to its relevant notes in the top 10 and their
	// ranks: what lets the gate tell which notes a difference moved.
	Found map[string]map[string]int `json:"found,omitempty"`
	// NDCG maps a query id to its nDCG@10. With the ranks it is everything the
	// means are computed from (two relevant notes of different grades that
	// trade places keep their ranks but not their nDCG).
	NDCG map[string]FourDecimals `json:"ndcg,omitempty"`
	// NearTies maps a query id to the notes that took part in a near-tie in
	// that run (pipeline.NearTies), for the queries that had any: where
	// another CPU may order the query otherwise. The gate lets such a query
	// move, and reports it; it does not compare the lists themselves, which
	// drift at their edge.
	NearTies map[string][]string `json:"near_ties,omitempty"`
	// Answer maps a query id with passage judgements to its answer@1 (1 or
	// 0), and Bytes to its answer's size: both follow from the ranking and
	// the passages chosen, so a query whose ranks held and whose answer
	// moved is a change in the passages.
	Answer map[string]int `json:"answer,omitempty"`
	Bytes  map[string]int `json:"bytes,omitempty"`
}

// BaselineOf turns a run into its committed form.
func BaselineOf(r *eval.DatasetRun) Baseline {
	b := Baseline{Dataset: r.Dataset.Name, Embedder: r.Embedder, Queries: len(r.Dataset.Queries), Notes: r.Notes, Chunks: r.Chunks, Stamp: r.Stamp}
	for _, c := range r.Configs {
		bc := BaselineConfig{Name: c.Name, Status: "ok"}
		if c.Skipped != "" {
			bc.Status = "skipped: " + c.Skipped
		} else {
			m := metricsOf(c.Mean)
			bc.Metrics = &m
			if len(c.ByKind) > 0 {
				bc.ByKind = map[string]Metrics{}
				for k, s := range c.ByKind {
					bc.ByKind[k] = metricsOf(s)
				}
			}
			bc.Ranks = map[string][]int{}
			bc.NDCG = map[string]FourDecimals{}
			for _, q := range c.Queries {
				bc.Ranks[q.ID] = append([]int{}, q.RelevantRanks...)
				bc.NDCG[q.ID] = FourDecimals(q.Score.NDCG)
				if q.Score.Judged > 0 {
					if bc.Answer == nil {
						bc.Answer, bc.Bytes = map[string]int{}, map[string]int{}
					}
					bc.Answer[q.ID], bc.Bytes[q.ID] = int(q.Score.Answer), int(q.Score.Bytes)
				}
				if len(q.RelevantFound) > 0 {
					if bc.Found == nil {
						bc.Found = map[string]map[string]int{}
					}
					bc.Found[q.ID] = q.RelevantFound
				}
				if len(q.NearTies) > 0 {
					if bc.NearTies == nil {
						bc.NearTies = map[string][]string{}
					}
					bc.NearTies[q.ID] = q.NearTies
				}
			}
		}
		b.Configs = append(b.Configs, bc)
	}
	sort.Slice(b.Configs, func(i, j int) bool { return b.Configs[i].Name < b.Configs[j].Name })
	return b
}

// Encode writes a baseline as indented JSON (map keys sorted by encoding/json).
func (b Baseline) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// BaselinePath is where a dataset's baseline lives.
func BaselinePath(root, dataset string) string {
	return filepath.Join(root, "baselines", dataset+".json")
}

// WriteBaseline writes a baseline file.
func WriteBaseline(path string, b Baseline) error {
	raw, err := b.Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}

// ReadBaseline reads a committed baseline.
func ReadBaseline(path string) (Baseline, error) {
	var b Baseline
	raw, err := os.ReadFile(path)
	if err != nil {
		return b, err
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return b, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// BaselineDiff is what the gate found comparing a run with its committed
// baseline (DiffBaseline); RankedDiff is its counterpart for one ranked list.
type BaselineDiff struct {
	// Changes are real differences: the gate fails on any.
	Changes []string
	// Flips are differences explained by near-ties that both runs saw: the
	// result of another CPU's kernels, reported and allowed while they stay
	// rare (MaxFlipped).
	Flips []string
	// Compared counts the per-query results (configuration × query) both
	// runs hold; Flipped those among them that moved and were let through
	// as near-tie flips.
	Compared, Flipped int
}

// MaxFlippedShare is the largest share of compared results that a gate (the
// pipeline's frozen fixture, eval --check) lets near-tie flips explain. The
// gate embedder's scores drift across CPUs by about 1e-6, 30 times less than
// its tolerance (pipeline.ScoreTolerance), so a real flip is rare: a run in
// which more than 1 % of results moved "by near-ties" has changed, and an
// allowance that grew to explain it would stop being a gate.
const MaxFlippedShare = 0.01

// MaxFlipped is how many of the compared results near-tie flips may explain:
// MaxFlippedShare of them, rounded down.
func MaxFlipped(compared int) int { return int(MaxFlippedShare * float64(compared)) }

// NearTiedInBoth is the near-tie rule: the notes that took part in a near-tie
// in both runs being compared (pipeline.NearTies of each), sorted. Only they
// may explain a move, since a flip needs the pair within the tolerance on
// both machines; DiffBaseline and CompareRanked's callers both ask it.
func NearTiedInBoth(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range a {
		in[s] = true
	}
	var out []string
	for _, s := range b {
		if in[s] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// TooManyFlipped says whether near-tie flips explained more results than
// MaxFlipped allows.
func (r BaselineDiff) TooManyFlipped() bool { return r.Flipped > MaxFlipped(r.Compared) }

// Failed says whether the gate fails: a real change, or too many flips.
func (r BaselineDiff) Failed() bool { return len(r.Changes) > 0 || r.TooManyFlipped() }

// withoutNearTies is a baseline with the near-tie sets dropped: they describe
// a run's margins, not its results, and differ at their edges between CPUs.
func withoutNearTies(b Baseline) Baseline {
	b.Configs = append([]BaselineConfig(nil), b.Configs...)
	for i := range b.Configs {
		b.Configs[i].NearTies = nil
	}
	return b
}

// DiffBaseline compares a committed baseline with a new run, one readable line per
// difference. A query whose ranks or nDCG moved is a flip when the notes of a
// near-tie in the baseline's run are near-tied in this run too (a flip needs
// the pair within the tolerance on both machines), else a change. A mean
// that moved is a flip when every query of its configuration that moved is a
// flip, else a change. Everything else (the dataset, the index stamp, a
// status, a configuration run or not) must match exactly.
func DiffBaseline(old, cur Baseline) BaselineDiff {
	var r BaselineDiff
	r.Compared = compared(old, cur)
	change := func(format string, args ...any) { r.Changes = append(r.Changes, fmt.Sprintf(format, args...)) }
	// Equal files are equal results. A baseline that cannot be encoded (a
	// figure that is not a number has no JSON) is no evidence of that: two
	// failed encodings must not read as a match, so the comparison goes on
	// field by field, and the gate fails on the encoding itself.
	oldRaw, oldErr := withoutNearTies(old).Encode()
	curRaw, curErr := withoutNearTies(cur).Encode()
	if oldErr == nil && curErr == nil && bytes.Equal(oldRaw, curRaw) {
		return r
	}
	if oldErr != nil {
		change("the baseline cannot be written: %v", oldErr)
	}
	if curErr != nil {
		change("this run's baseline cannot be written: %v", curErr)
	}
	if old.Queries != cur.Queries || old.Notes != cur.Notes || old.Chunks != cur.Chunks {
		change("dataset: queries %d → %d, notes %d → %d, chunks %d → %d", old.Queries, cur.Queries, old.Notes, cur.Notes, old.Chunks, cur.Chunks)
	}
	if old.Embedder != cur.Embedder {
		change("embedder: %s → %s (the gate records with %s)", old.Embedder, cur.Embedder, old.Embedder)
	}
	if old.Stamp != cur.Stamp {
		change("index stamp: %s → %s (the vault, the embedder or the schema changed)", eval.ShortStamp(old.Stamp), eval.ShortStamp(cur.Stamp))
	}
	olds := map[string]BaselineConfig{}
	for _, c := range old.Configs {
		olds[c.Name] = c
	}
	curs := map[string]bool{}
	for _, c := range cur.Configs {
		curs[c.Name] = true
		o, ok := olds[c.Name]
		if !ok {
			change("%s: new configuration (%s), not in the baseline", c.Name, c.Status)
			continue
		}
		if o.Status != c.Status {
			change("%s: status %q → %q", c.Name, o.Status, c.Status)
			continue
		}
		var flips, real []string
		ids := map[string]bool{}
		for id := range o.Ranks {
			ids[id] = true
		}
		for id := range c.Ranks {
			ids[id] = true
		}
		for _, id := range slices.Sorted(maps.Keys(ids)) {
			// As written: a baseline read from disk holds four decimals, this
			// run's figures all of theirs.
			sameAnswer := o.Answer[id] == c.Answer[id] && o.Bytes[id] == c.Bytes[id]
			if fmt.Sprint(o.Ranks[id]) == fmt.Sprint(c.Ranks[id]) && fixed(o.NDCG[id]) == fixed(c.NDCG[id]) && sameAnswer {
				continue
			}
			line := fmt.Sprintf("%s: query %s: relevant ranks %v → %v, nDCG@10 %s → %s", c.Name, id, o.Ranks[id], c.Ranks[id], fixed(o.NDCG[id]), fixed(c.NDCG[id]))
			if !sameAnswer {
				line += fmt.Sprintf(", answer@1 %d → %d, bytes %d → %d", o.Answer[id], c.Answer[id], o.Bytes[id], c.Bytes[id])
			}
			common := NearTiedInBoth(o.NearTies[id], c.NearTies[id])
			switch why := unexplained(o.Found[id], c.Found[id], common); {
			case len(common) == 0:
				real = append(real, line+" (no near-tie in both runs explains it)")
			case why != "":
				real = append(real, fmt.Sprintf("%s (%s)", line, why))
			default:
				flips = append(flips, fmt.Sprintf("%s (near-tie among %s in both runs)", line, strings.Join(common, ", ")))
			}
		}
		var means []string
		add := func(format string, args ...any) { means = append(means, fmt.Sprintf(format, args...)) }
		if o.Metrics != nil && c.Metrics != nil {
			diffMetrics(c.Name, "", *o.Metrics, *c.Metrics, add)
		}
		kinds := map[string]bool{}
		for k := range o.ByKind {
			kinds[k] = true
		}
		for k := range c.ByKind {
			kinds[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(kinds)) {
			diffMetrics(c.Name, " ["+k+"]", o.ByKind[k], c.ByKind[k], add)
		}
		r.Changes = append(r.Changes, real...)
		r.Flips = append(r.Flips, flips...)
		r.Flipped += len(flips)
		for _, m := range means {
			if len(real) == 0 && len(flips) > 0 {
				r.Flips = append(r.Flips, m+" (moved only by the near-tie flips above)")
			} else {
				r.Changes = append(r.Changes, m)
			}
		}
	}
	for _, c := range old.Configs {
		if !curs[c.Name] {
			change("%s: in the baseline but not run", c.Name)
		}
	}
	if len(r.Changes) == 0 && len(r.Flips) == 0 {
		change("the baseline file differs from what this run would write (formatting or order)")
	}
	return r
}

// compared counts the per-query results of the configurations both
// baselines ran with the same status.
func compared(old, cur Baseline) int {
	olds := map[string]BaselineConfig{}
	for _, c := range old.Configs {
		olds[c.Name] = c
	}
	n := 0
	for _, c := range cur.Configs {
		o, ok := olds[c.Name]
		if !ok || o.Status != c.Status {
			continue
		}
		for id := range c.Ranks {
			if _, ok := o.Ranks[id]; ok {
				n++
			}
		}
	}
	return n
}

// unexplained names the first relevant note whose move the near-tied notes
// (common) cannot explain, "" when they explain every move: a near-tied note
// may move anywhere; another moves only as far as near-tied notes can pass it
// (one rank each), or across the top-10 cut from within that distance of it.
func unexplained(old, cur map[string]int, common []string) string {
	tied := map[string]bool{}
	for _, p := range common {
		tied[p] = true
	}
	n := len(common)
	paths := map[string]bool{}
	for p := range old {
		paths[p] = true
	}
	for p := range cur {
		paths[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		ro, rn := old[p], cur[p]
		switch {
		case ro == rn || tied[p]:
		case ro > 0 && rn > 0 && max(ro-rn, rn-ro) <= n:
		case (ro == 0 || rn == 0) && max(ro, rn) > 10-n:
		default:
			return fmt.Sprintf("%s moved from rank %d to %d, further than %d near-tied notes can push it; 0 is outside the top 10", p, ro, rn, n)
		}
	}
	return ""
}

func fixed(f FourDecimals) string {
	b, _ := f.MarshalJSON()
	return string(b)
}

func diffMetrics(name, kind string, o, c Metrics, add func(string, ...any)) {
	om, oerr := metricMap(o)
	cm, cerr := metricMap(c)
	if oerr != nil || cerr != nil {
		// A figure that is not a number: name it rather than compare it.
		add("%s%s: measures %+v → %+v (%v)", name, kind, o, c, errors.Join(oerr, cerr))
		return
	}
	keys := map[string]bool{}
	for k := range om {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if om[k] != cm[k] {
			add("%s%s: %s %s → %s", name, kind, k, om[k], cm[k])
		}
	}
}

// metricMap is m as written in a baseline, measure by measure.
func metricMap(m Metrics) (map[string]json.Number, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]json.Number
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
