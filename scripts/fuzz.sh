#!/usr/bin/env bash
# fuzz.sh runs each fuzz target briefly, one after another:
#   scripts/fuzz.sh FUZZTIME PKG:TARGET...
# A target whose run fails only because Go's fuzzing engine gave up waiting
# for a worker as the time ran out ("context deadline exceeded", no failing
# input written to testdata/fuzz/) is run once more: that is the engine
# stopping on a busy machine, not a finding. Any other failure, or a second
# such one, fails.
set -uo pipefail
cd "$(dirname "$0")/.."
fuzztime=$1
shift
for t in "$@"; do
  pkg=${t%%:*} name=${t#*:}
  for try in 1 2; do
    echo "fuzz: $name ($pkg, $fuzztime)"
    out=$(go test -tags=sqlite_fts5 -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "./$pkg/" 2>&1)
    code=$?
    printf '%s\n' "$out"
    [ $code -eq 0 ] && break
    if [ $try -eq 1 ] && grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
      echo "fuzz: $name: the engine timed out waiting for a worker as the time ran out (no failing input); once more"
      continue
    fi
    echo "fuzz: $name failed" >&2
    exit 1
  done
done
