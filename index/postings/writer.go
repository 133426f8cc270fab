package postings

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
)

// Encoder writes a list from postings in increasing id order.
type Encoder struct {
	buf   []byte
	block []Posting
	last  int64 // the last id of the last block written
	df    int
}

// Add appends a posting; its id must be above the last one's.
func (e *Encoder) Add(p Posting) error {
	if e.df > 0 && p.ID <= e.lastID() {
		return fmt.Errorf("keyword postings: chunk %d after chunk %d", p.ID, e.lastID())
	}
	e.block = append(e.block, p)
	e.df++
	if len(e.block) == blockSize {
		e.flush()
	}
	return nil
}

// DF is the list's postings so far: its term's document frequency.
func (e *Encoder) DF() int { return e.df }

func (e *Encoder) lastID() int64 {
	if len(e.block) > 0 {
		return e.block[len(e.block)-1].ID
	}
	return e.last
}

func (e *Encoder) flush() {
	if len(e.block) == 0 {
		return
	}
	var body []byte
	prev := e.last
	for _, p := range e.block {
		body = binary.AppendUvarint(body, uint64(p.ID-prev))
		body = binary.AppendUvarint(body, uint64(p.Title))
		body = binary.AppendUvarint(body, uint64(p.Body))
		body = binary.AppendUvarint(body, uint64(p.N))
		prev = p.ID
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(len(e.block)))
	e.buf = binary.AppendUvarint(e.buf, uint64(prev-e.last))
	e.buf = binary.AppendUvarint(e.buf, uint64(len(body)))
	e.buf = append(e.buf, body...)
	e.last, e.block = prev, e.block[:0]
}

// Bytes ends the list and returns it encoded.
func (e *Encoder) Bytes() []byte {
	e.flush()
	return e.buf
}

// Store is where a Writer's lists are kept, by term.
type Store interface {
	// Get returns a term's list as stored, nil when there is none.
	Get(term string) ([]byte, error)
	// Put stores a term's list and its document frequency.
	Put(term string, df int, data []byte) error
	// Delete drops a term's list.
	Delete(term string) error
}

// Writer keeps the lists through a build. A full build adds chunks in id
// order and keeps every list encoded in memory (≈ 3 bytes a posting); an
// incremental one notes the chunks it deletes and adds, and patches the
// lists of their terms at Flush.
type Writer struct {
	full bool
	// full build
	lists map[string]*Encoder
	// incremental build
	added   map[string][]Posting
	removed map[int64]bool
	touched map[string]bool
}

// NewWriter returns a writer for a full build (full: every chunk is new and
// comes in id order) or an incremental one.
func NewWriter(full bool) *Writer {
	return &Writer{full: full, lists: map[string]*Encoder{}, added: map[string][]Posting{}, removed: map[int64]bool{}, touched: map[string]bool{}}
}

// Add adds chunk id, whose text is doc, to its terms' lists.
func (w *Writer) Add(id int64, doc Doc) error {
	for term, c := range doc.Terms {
		p := Posting{ID: id, Title: c[0], Body: c[1], N: doc.N}
		if !w.full {
			w.added[term] = append(w.added[term], p)
			continue
		}
		l := w.lists[term]
		if l == nil {
			l = &Encoder{}
			w.lists[term] = l
		}
		if err := l.Add(p); err != nil {
			return err
		}
	}
	return nil
}

// Remove notes that an incremental build deletes chunk id, whose text was
// doc, so its terms' lists are patched.
func (w *Writer) Remove(id int64, doc Doc) {
	w.removed[id] = true
	for term := range doc.Terms {
		w.touched[term] = true
	}
}

// Flush writes the lists the build changed into s, in term order, and
// starts afresh.
func (w *Writer) Flush(s Store) error {
	if w.full {
		for _, t := range slices.Sorted(maps.Keys(w.lists)) {
			l := w.lists[t]
			if err := s.Put(t, l.df, l.Bytes()); err != nil {
				return err
			}
		}
		w.lists = map[string]*Encoder{}
		return nil
	}
	for t := range w.added {
		w.touched[t] = true
	}
	for _, t := range slices.Sorted(maps.Keys(w.touched)) {
		if err := w.patch(s, t); err != nil {
			return err
		}
	}
	w.added, w.removed, w.touched = map[string][]Posting{}, map[int64]bool{}, map[string]bool{}
	return nil
}

// patch rewrites term's stored list without the removed chunks and with the
// added ones, or deletes it when nothing is left.
func (w *Writer) patch(s Store, term string) error {
	data, err := s.Get(term)
	if err != nil {
		return err
	}
	old, err := Decode(data)
	if err != nil {
		return err
	}
	list := old[:0]
	for _, p := range old {
		if !w.removed[p.ID] {
			list = append(list, p)
		}
	}
	list = append(list, w.added[term]...)
	slices.SortFunc(list, func(a, b Posting) int { return cmp.Compare(a.ID, b.ID) })
	if len(list) == 0 {
		return s.Delete(term)
	}
	var enc Encoder
	for _, p := range list {
		if err := enc.Add(p); err != nil {
			return fmt.Errorf("%w (the list of %q)", err, term)
		}
	}
	return s.Put(term, enc.df, enc.Bytes())
}
