package stages

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Fusion beyond plain reciprocal rank: per-list weights and depth for RRF, and
// convex combinations of normalised scores after Bruch, Gai and Ingber, "An
// Analysis of Fusion Functions for Hybrid Retrieval" (ACM TOIS 2023).

// validateWeights checks a list-name → weight map.
func validateWeights(key string, w map[string]float64) error {
	for name, v := range w {
		if name == "" {
			return settingErrorf(key, "%s: a list name is empty", key)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1000 {
			return settingErrorf(key, "%s: weight %v for %s is outside 0..1000", key, v, name)
		}
	}
	return nil
}

// listRefs names the lists of a weights setting, sorted.
func listRefs(setting string, w map[string]float64) []ListRef {
	var out []ListRef
	for _, name := range slices.Sorted(maps.Keys(w)) {
		out = append(out, ListRef{Setting: setting, List: name})
	}
	return out
}

// weightOf is a list's weight: its entry, else 1.
func weightOf(w map[string]float64, stage string) float64 {
	if v, ok := w[stage]; ok {
		return v
	}
	return 1
}

// fuseAcc accumulates one note across lists.
type fuseAcc struct {
	item               Item
	parts              []float64
	score              float64
	bestRank, bestList int
	count              int
}

// fuseScored combines per-list contributions into one ranking: contribute
// returns a note's share from list li at rank r (1-based) and whether it
// counts. Ties go as in Fuse: better best rank, more lists, earlier list,
// lower note id. Missing is added once per list a note is absent from.
func fuseScored(lists []List, limit int, contribute func(li, r int, it Item) (float64, bool), missing func(li int) float64) []Item {
	byNote := map[int64]*fuseAcc{}
	seenIn := map[int64][]bool{}
	for li, l := range lists {
		for r0, it := range l.Items {
			v, ok := contribute(li, r0+1, it)
			if !ok {
				continue
			}
			rank := r0 + 1
			a := byNote[it.NoteID]
			if a == nil {
				a = &fuseAcc{item: it, bestRank: rank, bestList: li}
				byNote[it.NoteID] = a
				seenIn[it.NoteID] = make([]bool, len(lists))
			} else if rank < a.bestRank {
				a.item, a.bestRank, a.bestList = it, rank, li
			}
			if seenIn[it.NoteID][li] {
				continue // a list names a note once; guard against a malformed one
			}
			seenIn[it.NoteID][li] = true
			a.parts = append(a.parts, v)
			a.count++
		}
	}
	all := make([]*fuseAcc, 0, len(byNote))
	for id, a := range byNote {
		if missing != nil {
			for li, in := range seenIn[id] {
				if !in {
					a.parts = append(a.parts, missing(li))
				}
			}
		}
		// Sum in a fixed order of the values, not of the lists, so equal
		// shares in different lists sum to exactly equal scores.
		sort.Float64s(a.parts)
		for i := len(a.parts) - 1; i >= 0; i-- {
			a.score += a.parts[i]
		}
		all = append(all, a)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.score != b.score:
			return a.score > b.score
		case a.bestRank != b.bestRank:
			return a.bestRank < b.bestRank
		case a.count != b.count:
			return a.count > b.count
		case a.bestList != b.bestList:
			return a.bestList < b.bestList
		}
		return a.item.NoteID < b.item.NoteID
	})
	out := make([]Item, 0, min(limit, len(all)))
	for _, a := range all[:min(limit, len(all))] {
		out = append(out, Item{NoteID: a.item.NoteID, ChunkID: a.item.ChunkID, Score: a.score})
	}
	return out
}

// FuseWeighted is reciprocal rank fusion with a weight per list (by stage
// name, default 1) and a depth: only a list's first depth notes count (0: all).
// A note scores Σ w/(k + rank).
func FuseWeighted(lists []List, k, limit int, weights map[string]float64, depth int) []Item {
	return fuseScored(lists, limit, func(li, r int, _ Item) (float64, bool) {
		if depth > 0 && r > depth {
			return 0, false
		}
		w := weightOf(weights, lists[li].Stage)
		if lists[li].Weighted {
			w *= lists[li].Weight
		}
		return w / float64(k+r), true
	}, nil)
}

// anyWeighted says whether a list carries its own weight.
func anyWeighted(lists []List) bool {
	for _, l := range lists {
		if l.Weighted {
			return true
		}
	}
	return false
}

// Normalisations of a list's scores for a convex combination.
const (
	NormMinMax = "minmax" // (s − min) / (max − min); absent notes 0
	NormZScore = "zscore" // (s − mean) / sd; absent notes the list's lowest z
	NormRank   = "rank"   // 1 − (rank − 1)/n over the list's n notes; absent 0
)

// normalize maps a list's scores (best first) onto a common scale and returns
// the values and the value an absent note gets. A list whose scores are all
// equal maps every note to 1 (min-max, rank) or 0 (z-score): they are equally
// good, and no division by zero decides otherwise.
func normalize(items []Item, norm string) ([]float64, float64) {
	n := len(items)
	out := make([]float64, n)
	if n == 0 {
		return out, 0
	}
	switch norm {
	case NormRank:
		for i := range items {
			out[i] = 1 - float64(i)/float64(n)
		}
		return out, 0
	case NormZScore:
		mean := 0.0
		for _, it := range items {
			mean += it.Score
		}
		mean /= float64(n)
		v := 0.0
		for _, it := range items {
			v += (it.Score - mean) * (it.Score - mean)
		}
		sd := math.Sqrt(v / float64(n))
		low := 0.0
		for i, it := range items {
			if sd > 0 {
				out[i] = (it.Score - mean) / sd
			}
			if i == 0 || out[i] < low {
				low = out[i]
			}
		}
		return out, low
	default: // min-max
		lo, hi := items[0].Score, items[0].Score
		for _, it := range items {
			lo, hi = math.Min(lo, it.Score), math.Max(hi, it.Score)
		}
		for i, it := range items {
			if hi > lo {
				out[i] = (it.Score - lo) / (hi - lo)
			} else {
				out[i] = 1
			}
		}
		return out, 0
	}
}

// fuseConvex is a convex combination Σ w_list · norm(score) over the lists'
// first depth notes (0: all); a note absent from a list gets that list's
// absent value (see normalize). Weights are by stage name, default 1; they
// need not sum to 1 (only their ratio orders the notes).
func fuseConvex(lists []List, limit int, norm string, weights map[string]float64, depth int) []Item {
	vals := make([][]float64, len(lists))
	absent := make([]float64, len(lists))
	for li, l := range lists {
		items := l.Items
		if depth > 0 && len(items) > depth {
			items = items[:depth]
		}
		vals[li], absent[li] = normalize(items, norm)
	}
	return fuseScored(lists, limit, func(li, r int, _ Item) (float64, bool) {
		if r > len(vals[li]) {
			return 0, false
		}
		return weightOf(weights, lists[li].Stage) * vals[li][r-1], true
	}, func(li int) float64 {
		return weightOf(weights, lists[li].Stage) * absent[li]
	})
}

// codeLike reports whether a query holds a code-like token: an identifier
// with an underscore (lease_ttl_ms), a dot between word characters
// (file.mtime), a leading dash (--icon-size), letters and digits joined by a
// hyphen (FERR-4102), camelCase starting lower-case (addRibbonIcon; not
// TypeScript), or call syntax
// (on('file-open')). Such a token is what the keyword branch finds exactly
// and an embedding blurs.
func codeLike(text string) bool {
	for _, tok := range strings.Fields(text) {
		tok = strings.Trim(tok, "\"'`,;:!?")
		if tok == "" {
			continue
		}
		if rest := strings.TrimLeft(tok, "-"); len(rest) < len(tok) && rest != "" && unicode.IsLetter([]rune(rest)[0]) {
			return true
		}
		if strings.ContainsAny(tok, "_()") {
			return true
		}
		rs := []rune(tok)
		letters, digits := false, false
		for i, r := range rs {
			switch {
			case unicode.IsLetter(r):
				letters = true
			case unicode.IsDigit(r):
				digits = true
			}
			if i > 0 && i+1 < len(rs) {
				p, nx := rs[i-1], rs[i+1]
				if r == '.' && (unicode.IsLetter(p) || unicode.IsDigit(p)) && unicode.IsLetter(nx) {
					return true
				}
				if unicode.IsUpper(r) && unicode.IsLower(p) && unicode.IsLower(rs[0]) {
					return true
				}
			}
		}
		if letters && digits && strings.Contains(tok, "-") {
			return true
		}
	}
	return false
}
