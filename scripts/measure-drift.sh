#!/usr/bin/env bash
# measure-drift.sh — how far ONNX Runtime's scores move between instruction sets.
#
# Embeds the same passages (the demo vault's first paragraphs) and queries twice
# per embedder: natively, and under valgrind, whose virtual CPU has no AVX-512
# (nor VNNI or AMX), so ONNX Runtime's kernel dispatch takes its AVX2 paths.
# Prints the largest |Δ cosine| per embedder. pipeline.ScoreTolerance is set
# from this figure (see its doc comment). Needs `make setup` and valgrind; takes
# a while (valgrind runs the models about 100x slower: ~15 minutes per model
# for 12 passages on a quiet 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=1 CGO_LDFLAGS="-L$PWD/data/lib ${CGO_LDFLAGS:-}"
export VAULT_RAG_DATA="${VAULT_RAG_DATA:-$PWD/data}"
PASSAGES="${PASSAGES:-12}"
# One intra-op thread on both sides: valgrind runs threads one at a time, and
# spinning ONNX Runtime workers only slow it (results do not depend on it:
# measured equal for 1 and 2 threads).
export VAULT_RAG_THREADS=1
command -v valgrind >/dev/null || { echo "measure-drift: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
go build -tags=sqlite_fts5 -o "$tmp/drift" ./scripts/drift
queries=("why did writes get slow in the middle of the night" "FERR-4102" "feeding a sourdough starter" "how do I rotate the pager")
echo "native CPU: $(grep -m1 -o 'avx512f' /proc/cpuinfo || echo 'no AVX-512')"
for model in ${MODELS:-bge-small-en-v1.5 bge-small-en-v1.5-q}; do
	"$tmp/drift" -passages "$PASSAGES" -model "$model" "${queries[@]}" >"$tmp/native"
	valgrind --tool=none -q "$tmp/drift" -passages "$PASSAGES" -model "$model" "${queries[@]}" >"$tmp/emulated"
	paste -d' ' "$tmp/native" "$tmp/emulated" | awk -v m="$model" '
		{ d = $3 - $6; if (d < 0) d = -d; if (d > max) max = d; n++ }
		END { printf "%s: %d scores, largest |native - AVX2| = %.3g\n", m, n, max }'
done
