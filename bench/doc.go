// Package bench measures what vault-rag costs: reindex times, query latency
// per configuration from the demo vault to 30,000 notes, rerank cost, the
// indexer's embedding throughput against the raw ONNX session, a first
// build's time to its first answer, the binary vector search's recall, and
// index size. A run is a list of sections (sections in bench.go), each a
// method of the run's runner; `vault-rag bench --only NAME` runs one alone.
package bench
