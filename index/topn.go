package index

import (
	"iter"
	"slices"
)

// scored is an item of a ranking: higher scores first, ties to the lower id
// (the total order of every search here).
type scored[S float32 | float64] struct {
	score S
	id    int64
}

func (a scored[S]) better(b scored[S]) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.id < b.id
}

// topN keeps the n best items offered (all of them when n < 0): a heap with
// the worst kept at the root.
type topN[S float32 | float64] struct {
	n     int
	items []scored[S]
}

func (h *topN[S]) offer(score S, id int64) {
	it := scored[S]{score, id}
	if h.n < 0 || len(h.items) < h.n {
		h.items = append(h.items, it)
		if h.n < 0 {
			return
		}
		for i := len(h.items) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if !h.items[p].better(h.items[i]) {
				break
			}
			h.items[p], h.items[i] = h.items[i], h.items[p]
			i = p
		}
		return
	}
	if h.n == 0 || !it.better(h.items[0]) {
		return
	}
	h.items[0] = it
	for i := 0; ; { // sift down
		l, r, w := 2*i+1, 2*i+2, i
		if l < len(h.items) && h.items[w].better(h.items[l]) {
			w = l
		}
		if r < len(h.items) && h.items[w].better(h.items[r]) {
			w = r
		}
		if w == i {
			break
		}
		h.items[i], h.items[w] = h.items[w], h.items[i]
		i = w
	}
}

// sorted returns the kept items, best first.
func (h *topN[S]) sorted() []scored[S] {
	slices.SortFunc(h.items, func(a, b scored[S]) int {
		switch {
		case a.better(b):
			return -1
		case b.better(a):
			return 1
		}
		return 0
	})
	return h.items
}

// firstPerNote gathers, from hits offered in rank order, each note's first
// hit, at most limit of them, and the first hit of a note it left out: a
// note search's answer, and what would have come next.
type firstPerNote struct {
	limit int
	seen  map[int64]bool
	hits  []Hit
	next  *Hit // the first hit of a note left out; nil while none is
}

// offer takes the next hit in rank order. It returns false once a note has
// been left out: nothing offered after that changes hits or next.
func (f *firstPerNote) offer(h Hit) bool {
	switch {
	case f.next != nil:
		return false
	case f.seen[h.NoteID]:
		return true
	case len(f.hits) == f.limit:
		f.next = &h
		return false
	}
	if f.seen == nil {
		f.seen = map[int64]bool{}
	}
	f.seen[h.NoteID] = true
	f.hits = append(f.hits, h)
	return true
}

// bestPerNote keeps each note's first hit, in hit order, at most limit, and
// returns the first hit of a note it left out (nil when there is none).
func bestPerNote(hits iter.Seq[Hit], limit int) ([]Hit, *Hit) {
	pick := firstPerNote{limit: limit}
	for h := range hits {
		if !pick.offer(h) {
			break
		}
	}
	return pick.hits, pick.next
}
