#!/usr/bin/env bash
# The six briefs of one round of the loop benchmark: for each vault (blue-book, obsidian-dev-docs,
# obsidian-help-zh, named vault1..3 in every path an assistant sees) and each arm, ROUND/vaultN-ARM.brief.md,
# with its call log and answers file beside it; ROUND/vaultN.qids holds the sampled question ids.
#
#   bench/loop/briefs.sh ROUND_DIR [PORTS]      PORTS: the vault-rag servers of vault1,2,3 (default 18801,18802,18803)
#
# Environment: LOOPBENCH (default bin/loopbench of this checkout), DATASETS (default /work/shared/datasets),
# NOTES (the neutral symlinks vault1..3 to each dataset's vault/; default /work/loop/notes), N (questions, default 12).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
LB=${LOOPBENCH:-$here/bin/loopbench}
DATASETS=${DATASETS:-/work/shared/datasets}
NOTES=${NOTES:-/work/loop/notes}
N=${N:-12}
round=${1:?usage: briefs.sh ROUND_DIR [PORTS]}
IFS=, read -r -a ports <<< "${2:-18801,18802,18803}"
names=(blue-book obsidian-dev-docs obsidian-help-zh)
mkdir -p "$round"
round=$(cd "$round" && pwd)
for i in 0 1 2; do
	v=vault$((i + 1)) ds=$DATASETS/${names[$i]}
	if [ ! -d "$NOTES/$v" ]; then
		mkdir -p "$NOTES" && ln -s "$ds/vault" "$NOTES/$v"
	fi
	q=$("$LB" sample --dataset "$ds" --n "$N" 2>/dev/null)
	echo "$q" > "$round/$v.qids"
	"$LB" brief --arm vault-rag --dataset "$ds" --qids "$q" --server "http://127.0.0.1:${ports[$i]}/mcp" \
		--log "$round/$v-vault-rag.calls.jsonl" --answers "$round/$v-vault-rag.answers.jsonl" > "$round/$v-vault-rag.brief.md"
	"$LB" brief --arm ripgrep --dataset "$ds" --qids "$q" --vault "$NOTES/$v" \
		--log "$round/$v-ripgrep.calls.jsonl" --answers "$round/$v-ripgrep.answers.jsonl" > "$round/$v-ripgrep.brief.md"
	echo "$v (${names[$i]}, port ${ports[$i]}): $q"
done
echo "briefs in $round; score each vault with:"
for i in 0 1 2; do
	v=vault$((i + 1))
	echo "  $LB score --dataset $DATASETS/${names[$i]} --qids \$(cat $round/$v.qids) --answers '$round/$v-*.answers.jsonl' --log '$round/$v-*.calls.jsonl' --out docs/loop-bench.md --label LABEL"
done
