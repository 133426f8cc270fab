// Package index is everything that touches SQLite: the schema of the one index
// file, the writer that builds it from a vault, and the read side that
// searches it.
//
// The writer is Build: a full build (build_full.go) streams the vault into a
// new file and copies it into the live one in one transaction with SQLite's
// backup (swap.go: no file a reader holds open is renamed over, which Windows
// forbids); an incremental build (build_incremental.go) changes the existing
// file in one transaction, re-embedding only chunks whose text changed. Both
// parse and chunk notes the same way (prepare.go), embed in length-sorted
// batches (embed.go) kept in an embedding cache beside the index (cache.go),
// and write through the same statements (writer.go). One build of an index
// runs at a time, across processes: each holds an OS file lock beside the
// index for its whole run (lock.go), and RunningBuild tells a reader who
// builds.
//
// The read side is DB: Open checks the file before handing it out (open.go);
// its lookups of notes, chunks and links (read.go) return the rows of rows.go
// and narrow by the Filter of filter.go; the keyword search (keyword.go), run
// on the index's own postings (package postings, kw_writer.go, bm25.go) or by FTS5; and the
// vector search (vector.go), exact with sqlite-vec or by binary codes
// rescored with the float vectors (quant.go), with the filter ladder of a
// scoped search.
package index
