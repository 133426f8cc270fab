// Package postings is the keyword index's lists: for every term, the chunks
// holding it, with the term's count in each column and the chunk's length in
// tokens — exactly what FTS5's bm25 reads of a row — so a keyword search
// reads only its terms' lists instead of letting FTS5 score every matching
// row.
//
// It is split as Prometheus tsdb's index is: the write side (writer.go)
// encodes a list (Encoder) and keeps a build's lists (Writer), the read side
// (reader.go) walks an encoded list forward (Iterator). Where the lists are
// stored, and how a text becomes terms, is the caller's: the index keeps
// them in its kw_postings table and takes its terms from FTS5's tokenizer.
//
// A list is a run of blocks of at most blockSize postings, so a search can
// step over a block whose chunks it does not need (Iterator.Advance): each block
// is uvarint(postings), uvarint(its last id - the previous block's last id),
// uvarint(bytes of postings), then per posting uvarint(id - previous id),
// uvarint(count in title), uvarint(count in body), uvarint(chunk tokens).
package postings

// Posting is one chunk of a term's list.
type Posting struct {
	ID          int64
	Title, Body uint32 // the term's count in each column
	N           uint32 // the chunk's tokens, both columns
}

// Doc is one chunk's text as the tokenizer sees it: each term's count per
// column (title, body), and the tokens in all.
type Doc struct {
	Terms map[string][2]uint32
	N     uint32
}

const blockSize = 64
