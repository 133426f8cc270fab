package postings

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

// memStore is a Store in a map.
type memStore map[string]struct {
	df   int
	data []byte
}

func (s memStore) Get(term string) ([]byte, error) { return s[term].data, nil }

func (s memStore) Put(term string, df int, data []byte) error {
	s[term] = struct {
		df   int
		data []byte
	}{df, append([]byte(nil), data...)}
	return nil
}

func (s memStore) Delete(term string) error {
	delete(s, term)
	return nil
}

// randomDoc is a chunk's text as a few terms of a small vocabulary.
func randomDoc(rng *rand.Rand) Doc {
	d := Doc{Terms: map[string][2]uint32{}}
	for range 1 + rng.Intn(6) {
		c := d.Terms[fmt.Sprintf("t%d", rng.Intn(12))]
		c[rng.Intn(2)]++
		d.Terms[fmt.Sprintf("t%d", rng.Intn(12))] = c
	}
	for _, c := range d.Terms {
		d.N += c[0] + c[1]
	}
	return d
}

// fullBuild is the store a full build of docs (by id) writes.
func fullBuild(t *testing.T, docs map[int64]Doc, ids []int64) memStore {
	t.Helper()
	w, s := NewWriter(true), memStore{}
	for _, id := range ids {
		if d, ok := docs[id]; ok {
			if err := w.Add(id, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// An incremental build's patched lists are, byte for byte, the lists a full
// build of the same chunks writes; a term left in no chunk loses its list.
func TestIncrementalPatchesAsFullBuilds(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var ids []int64
	docs := map[int64]Doc{}
	for id := int64(1); id <= 400; id++ {
		ids = append(ids, id)
		if rng.Intn(4) > 0 {
			docs[id] = randomDoc(rng)
		}
	}
	docs[7] = Doc{Terms: map[string][2]uint32{"only7": {1, 0}}, N: 1}
	store := fullBuild(t, docs, ids)
	for round := range 3 {
		w := NewWriter(false)
		for _, id := range ids {
			d, ok := docs[id]
			if !ok {
				continue
			}
			switch rng.Intn(5) {
			case 0: // deleted
				w.Remove(id, d)
				delete(docs, id)
			case 1: // changed: deleted, then added again
				w.Remove(id, d)
				docs[id] = randomDoc(rng)
				if err := w.Add(id, docs[id]); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, id := range ids {
			if _, ok := docs[id]; !ok && rng.Intn(3) == 0 {
				docs[id] = randomDoc(rng)
				if err := w.Add(id, docs[id]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if round == 0 {
			if _, ok := docs[7]; ok {
				w.Remove(7, docs[7])
				delete(docs, 7)
			}
		}
		if err := w.Flush(store); err != nil {
			t.Fatal(err)
		}
		want := fullBuild(t, docs, ids)
		if !reflect.DeepEqual(store, want) {
			t.Fatalf("round %d: the patched lists (%d terms) differ from a full build's (%d terms)", round, len(store), len(want))
		}
		if _, ok := store["only7"]; ok {
			t.Fatalf("round %d: a term in no chunk kept its list", round)
		}
	}
}

// A damaged stored list stops the flush with ErrDamaged.
func TestPatchDamagedList(t *testing.T) {
	store := memStore{}
	store.Put("t1", 1, []byte{0x80})
	w := NewWriter(false)
	if err := w.Add(3, Doc{Terms: map[string][2]uint32{"t1": {0, 1}}, N: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(store); err != ErrDamaged {
		t.Fatalf("flush over a damaged list: %v, want ErrDamaged", err)
	}
}
