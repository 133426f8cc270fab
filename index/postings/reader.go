package postings

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrDamaged is a list that does not decode.
var ErrDamaged = errors.New("a keyword posting list is damaged")

// EndOfList is the id of a finished iterator's posting: after every chunk.
const EndOfList = math.MaxInt64

// Iterator walks an encoded list, forward only, as Prometheus tsdb's
// Postings and Lucene's DocIdSetIterator do: At is the current posting, Next
// and Advance move on, Err says whether the list was damaged. It is positioned
// on the first posting from the start (NewIterator), and at the end its
// posting's id is EndOfList, so a merge taking the least current id over
// several lists needs no test for a finished one (Lucene's NO_MORE_DOCS).
type Iterator struct {
	data      []byte // from the current block's postings on
	cur       Posting
	left      int    // postings left in the current block
	blockLast int64  // the current block's last id
	after     []byte // the list after the current block
	done      bool
	fault     error
}

// NewIterator returns an iterator on the first posting of an encoded list.
func NewIterator(data []byte) *Iterator {
	c := &Iterator{data: data}
	c.Next()
	return c
}

// At is the current posting; its id is EndOfList once the list is done.
func (c *Iterator) At() Posting { return c.cur }

// Err is ErrDamaged when reading the list found it damaged.
func (c *Iterator) Err() error { return c.fault }

// finish ends the walk: what is left of the list is not read.
func (c *Iterator) finish() {
	c.done, c.cur = true, Posting{ID: EndOfList}
}

func (c *Iterator) fail() {
	c.finish()
	c.fault = ErrDamaged
}

func (c *Iterator) uvarint() uint64 {
	x, k := binary.Uvarint(c.data)
	if k <= 0 {
		c.fail()
		return 0
	}
	c.data = c.data[k:]
	return x
}

// header reads a block header; false at the end of the list.
func (c *Iterator) header() (size int, ok bool) {
	if len(c.data) == 0 {
		c.finish()
		return 0, false
	}
	n, dLast, bytes := c.uvarint(), c.uvarint(), c.uvarint()
	if c.done || n == 0 || bytes > uint64(len(c.data)) {
		c.fail()
		return 0, false
	}
	c.left, c.blockLast, c.after = int(n), c.blockLast+int64(dLast), c.data[bytes:]
	return int(bytes), true
}

// Next moves to the next posting.
func (c *Iterator) Next() {
	if c.done {
		return
	}
	if c.left == 0 {
		if _, ok := c.header(); !ok {
			return
		}
	}
	dID, title, body, n := c.uvarint(), c.uvarint(), c.uvarint(), c.uvarint()
	if c.done {
		return
	}
	c.left--
	c.cur = Posting{ID: c.cur.ID + int64(dID), Title: uint32(title), Body: uint32(body), N: uint32(n)}
}

// Advance moves to the first posting with an id of at least id, stepping over
// whole blocks that end before it; an iterator there already stays.
func (c *Iterator) Advance(id int64) {
	for !c.done && c.cur.ID < id {
		if c.left > 0 && c.blockLast < id { // the rest of this block is before id
			c.data, c.cur.ID, c.left = c.after, c.blockLast, 0
		}
		if c.left == 0 {
			if _, ok := c.header(); !ok {
				return
			}
			if c.blockLast < id {
				c.data, c.cur.ID, c.left = c.after, c.blockLast, 0
				continue
			}
		}
		c.Next()
	}
}

// Decode returns an encoded list's postings.
func Decode(data []byte) ([]Posting, error) {
	var out []Posting
	for c := NewIterator(data); ; c.Next() {
		if c.done {
			return out, c.Err()
		}
		out = append(out, c.At())
	}
}
