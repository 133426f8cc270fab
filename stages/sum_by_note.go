package stages

import (
	"sort"

	"github.com/vault-rag/vault-rag/index"
)

// sumByNote scores each note by the sum of its chunks' scores (a note-level
// bm25: a note whose several sections match outranks one lucky short chunk),
// keeping its best chunk to stand for it. Ties go to the note whose best chunk
// came first in hits, so the order is total. At most limit notes.
func sumByNote(hits []index.Hit, limit int) []Item {
	type acc struct {
		item  Item
		first int
	}
	byNote := map[int64]*acc{}
	var order []*acc
	for i, h := range hits {
		a := byNote[h.NoteID]
		if a == nil {
			a = &acc{item: Item{NoteID: h.NoteID, ChunkID: h.ChunkID}, first: i}
			byNote[h.NoteID] = a
			order = append(order, a)
		}
		a.item.Score += h.Score
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].item.Score != order[j].item.Score {
			return order[i].item.Score > order[j].item.Score
		}
		return order[i].first < order[j].first
	})
	out := make([]Item, 0, min(limit, len(order)))
	for _, a := range order[:min(limit, len(order))] {
		out = append(out, a.item)
	}
	return out
}
