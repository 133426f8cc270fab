package postings

import (
	"math/rand"
	"reflect"
	"testing"
)

// An iterator's Advance lands where a walk would, over lists of one to many blocks.
func TestIteratorAdvance(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for _, n := range []int{1, 63, 64, 65, 1000} {
		var enc Encoder
		var want []Posting
		id := int64(0)
		for i := 0; i < n; i++ {
			id += 1 + rng.Int63n(1<<uint(rng.Intn(20)))
			p := Posting{ID: id, Title: uint32(rng.Intn(3)), Body: uint32(rng.Intn(40)), N: uint32(rng.Intn(900))}
			if err := enc.Add(p); err != nil {
				t.Fatal(err)
			}
			want = append(want, p)
		}
		if err := enc.Add(Posting{ID: id}); err == nil {
			t.Fatal("a chunk out of order was accepted")
		}
		data := enc.Bytes()
		got, err := Decode(data)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%d postings: decoded %d (%v)", n, len(got), err)
		}
		c := NewIterator(data)
		i := 0
		for target := int64(0); target <= id+10; target += 1 + rng.Int63n(1<<uint(rng.Intn(22))) {
			c.Advance(target)
			for i < len(want) && want[i].ID < target {
				i++
			}
			if i == len(want) {
				if c.At().ID != EndOfList || c.Err() != nil {
					t.Fatalf("%d postings: Advance(%d) found %d past the end (%v)", n, target, c.At().ID, c.Err())
				}
				break
			}
			if c.At() != want[i] {
				t.Fatalf("%d postings: Advance(%d) = %+v, want %+v", n, target, c.At(), want[i])
			}
		}
		// A cut list is an error, or (cut between blocks) a shorter list;
		// never a panic.
		for cut := 1; cut < len(data); cut += 1 + len(data)/7 {
			ps, err := Decode(data[:cut])
			if err == nil && len(ps) >= n {
				t.Errorf("%d postings cut at %d of %d bytes: %d decoded without error", n, cut, len(data), len(ps))
			}
			if err != nil && err != ErrDamaged {
				t.Errorf("%d postings cut at %d of %d bytes: %v, want ErrDamaged", n, cut, len(data), err)
			}
		}
	}
}
