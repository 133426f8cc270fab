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

	"github.com/vault-rag/vault-rag/eval"
)

// FourDecimals is a figure of a baseline (a mean, a query's nDCG@10), written
// to JSON with four decimals, so a baseline diff shows a change at the fourth
// decimal and nothing below it (float noise).
type FourDecimals float64

// MarshalJSON implements json.Marshaler.
func (f FourDecimals) MarshalJSON() ([]byte, error) {
	return []byte(f.Fixed()), nil
}

// Fixed is f as a baseline writes it, with four decimals.
func (f FourDecimals) Fixed() string { return strconv.FormatFloat(float64(f), 'f', 4, 64) }

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
	Changes []Finding
	// Flips are differences explained by near-ties that both runs saw: the
	// result of another CPU's kernels, reported and allowed while they stay
	// rare (MaxFlipped).
	Flips []Finding
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

// DiffBaseline compares a committed baseline with a new run, one finding per
// difference. A query whose ranks or nDCG moved is a flip when the notes of a
// near-tie in the baseline's run are near-tied in this run too (a flip needs
// the pair within the tolerance on both machines), else a change. A mean
// that moved is a flip when every query of its configuration that moved is a
// flip, else a change. Everything else (the dataset, the index stamp, a
// status, a configuration run or not) must match exactly.
func DiffBaseline(old, cur Baseline) BaselineDiff {
	r := BaselineDiff{Compared: compared(old, cur)}
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
		r.Changes = append(r.Changes, Unencodable{Err: oldErr})
	}
	if curErr != nil {
		r.Changes = append(r.Changes, Unencodable{Run: true, Err: curErr})
	}
	r.Changes = append(r.Changes, diffHeader(old, cur)...)
	olds := map[string]BaselineConfig{}
	for _, c := range old.Configs {
		olds[c.Name] = c
	}
	ran := map[string]bool{}
	for _, c := range cur.Configs {
		ran[c.Name] = true
		o, ok := olds[c.Name]
		switch {
		case !ok:
			r.Changes = append(r.Changes, ConfigAdded{Config: c.Name, Status: c.Status})
		case o.Status != c.Status:
			r.Changes = append(r.Changes, StatusChanged{Config: c.Name, Old: o.Status, Cur: c.Status})
		default:
			r.addConfig(o, c)
		}
	}
	for _, c := range old.Configs {
		if !ran[c.Name] {
			r.Changes = append(r.Changes, ConfigNotRun{Config: c.Name})
		}
	}
	if len(r.Changes) == 0 && len(r.Flips) == 0 {
		r.Changes = append(r.Changes, FormatOnly{})
	}
	return r
}

// diffHeader compares what a baseline says of its dataset and index.
func diffHeader(old, cur Baseline) []Finding {
	var out []Finding
	if oldSize, curSize := (DatasetSize{old.Queries, old.Notes, old.Chunks}), (DatasetSize{cur.Queries, cur.Notes, cur.Chunks}); oldSize != curSize {
		out = append(out, DatasetChanged{Old: oldSize, Cur: curSize})
	}
	if old.Embedder != cur.Embedder {
		out = append(out, EmbedderChanged{Old: old.Embedder, Cur: cur.Embedder})
	}
	if old.Stamp != cur.Stamp {
		out = append(out, StampChanged{Old: old.Stamp, Cur: cur.Stamp})
	}
	return out
}

// addConfig compares one configuration that both runs ran with the same
// status, query by query and then mean by mean: its queries' moves are
// changes or flips, and its means' moves are flips when only flips moved its
// queries.
func (r *BaselineDiff) addConfig(o, c BaselineConfig) {
	var flips, real []Finding
	for _, id := range sortedKeys(o.Ranks, c.Ranks) {
		q, moved := diffQuery(c.Name, id, o, c)
		switch {
		case !moved:
		case q.Flip():
			flips = append(flips, q)
		default:
			real = append(real, q)
		}
	}
	r.Changes = append(r.Changes, real...)
	r.Flips = append(r.Flips, flips...)
	r.Flipped += len(flips)
	if byFlips := len(real) == 0 && len(flips) > 0; byFlips {
		r.Flips = append(r.Flips, diffMeans(o, c, true)...)
	} else {
		r.Changes = append(r.Changes, diffMeans(o, c, false)...)
	}
}

// diffQuery compares one query of a configuration both runs ran; moved says
// whether its ranks, its nDCG@10 or its answer moved.
func diffQuery(config, id string, o, c BaselineConfig) (q QueryMoved, moved bool) {
	// As written: a baseline read from disk holds four decimals, this run's
	// figures all of theirs.
	sameAnswer := o.Answer[id] == c.Answer[id] && o.Bytes[id] == c.Bytes[id]
	if fmt.Sprint(o.Ranks[id]) == fmt.Sprint(c.Ranks[id]) && o.NDCG[id].Fixed() == c.NDCG[id].Fixed() && sameAnswer {
		return q, false
	}
	q = QueryMoved{Config: config, Query: id, OldRanks: o.Ranks[id], CurRanks: c.Ranks[id], OldNDCG: o.NDCG[id], CurNDCG: c.NDCG[id],
		AnswerMoved: !sameAnswer, OldAnswer: o.Answer[id], CurAnswer: c.Answer[id], OldBytes: o.Bytes[id], CurBytes: c.Bytes[id],
		NearTied: NearTiedInBoth(o.NearTies[id], c.NearTies[id])}
	if len(q.NearTied) > 0 {
		q.Unexplained = unexplained(o.Found[id], c.Found[id], q.NearTied)
	}
	return q, true
}

// diffMeans compares a configuration's means, over all its queries and
// kind by kind; byFlips says near-tie flips are all that moved its queries.
func diffMeans(o, c BaselineConfig, byFlips bool) []Finding {
	out := diffMetrics(c.Name, "", o.Metrics, c.Metrics, byFlips)
	for _, k := range sortedKeys(o.ByKind, c.ByKind) {
		ok, ck := o.ByKind[k], c.ByKind[k]
		out = append(out, diffMetrics(c.Name, k, &ok, &ck, byFlips)...)
	}
	return out
}

// sortedKeys is the sorted union of two maps' keys.
func sortedKeys[V any](a, b map[string]V) []string {
	keys := append(slices.Collect(maps.Keys(a)), slices.Collect(maps.Keys(b))...)
	slices.Sort(keys)
	return slices.Compact(keys)
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

// unexplained is the first relevant note (by path) whose move the near-tied
// notes (common) cannot explain, nil when they explain every move: a
// near-tied note may move anywhere; another moves only as far as near-tied
// notes can pass it (one rank each), or across the top-10 cut from within
// that distance of it.
func unexplained(old, cur map[string]int, common []string) *NoteMoved {
	tied := map[string]bool{}
	for _, p := range common {
		tied[p] = true
	}
	n := len(common)
	for _, p := range sortedKeys(old, cur) {
		ro, rn := old[p], cur[p]
		switch {
		case ro == rn || tied[p]:
		case ro > 0 && rn > 0 && max(ro-rn, rn-ro) <= n:
		case (ro == 0 || rn == 0) && max(ro, rn) > 10-n:
		default:
			return &NoteMoved{Path: p, From: ro, To: rn, NearTied: n}
		}
	}
	return nil
}

// diffMetrics compares two sets of means, measure by measure, when there
// are both; kind is the query kind they are of, "" for all queries.
func diffMetrics(config, kind string, o, c *Metrics, byFlips bool) []Finding {
	if o == nil || c == nil {
		return nil
	}
	om, oerr := metricMap(*o)
	cm, cerr := metricMap(*c)
	if oerr != nil || cerr != nil {
		// A figure that is not a number: name it rather than compare it.
		return []Finding{MeasuresUnreadable{Config: config, Kind: kind, Old: *o, Cur: *c, Err: errors.Join(oerr, cerr), ByFlips: byFlips}}
	}
	var out []Finding
	for _, k := range slices.Sorted(maps.Keys(om)) {
		if om[k] != cm[k] {
			out = append(out, MeasureMoved{Config: config, Kind: kind, Measure: k, Old: om[k], Cur: cm[k], ByFlips: byFlips})
		}
	}
	return out
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
