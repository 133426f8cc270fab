#!/usr/bin/env bash
# qemu-arm64.sh runs the linux-arm64 release build on this x86_64 machine
# under qemu-user, with Debian's arm64 C and C++ libraries as its system:
#
#   scripts/qemu-arm64.sh [STAGE]   (default: dist/stage/linux-arm64/vault-rag)
#
# From an empty working folder with a bare environment, it runs `status` and
# `models` (ONNX Runtime found in lib/ beside bin/), then a reindex of a copy
# of the demo vault with the embedder (ONNX Runtime for arm64 running under
# emulation) and a keyword search, then the same search through the vector
# configuration. The model is imported from the checkout's data/models, so
# nothing is downloaded. The packages are installed on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
DATA=${DATA:-$root/data}
stage=${1:-dist/stage/linux-arm64/vault-rag}
bin=$stage/bin/vault-rag
model=bge-small-en-v1.5-q
fail() { echo "qemu-arm64: FAIL: $*" >&2; exit 1; }
pass() { echo "qemu-arm64: ok: $*"; }

[ -x "$bin" ] || fail "no $bin (run \`make release RELEASE_PLATFORMS=linux-arm64\` first)"
[ -d "$DATA/models/$model" ] || fail "no $model in $DATA/models to import (run \`make setup\`)"
sysroot=/usr/aarch64-linux-gnu
if ! command -v qemu-aarch64-static >/dev/null || [ ! -e "$sysroot/lib/libstdc++.so.6" ]; then
  echo "qemu-arm64: installing qemu-user-static and Debian's arm64 C/C++ libraries" >&2
  (apt-get update -qq && apt-get install -y -qq qemu-user-static libc6-arm64-cross \
    libstdc++6-arm64-cross libgcc-s1-arm64-cross) >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/work"
cp -r "$stage" "$tmp/install"
cp -r vault "$tmp/work/notes"
qemu=$(command -v qemu-aarch64-static)
# QEMU_LD_PREFIX makes the emulator look for the interpreter and every
# library, the dlopen'ed ONNX Runtime's included, under the arm64 sysroot.
run() { (cd "$tmp/work" && env -i HOME="$tmp/home" PATH=/usr/bin:/bin QEMU_LD_PREFIX="$sysroot" "$qemu" "$tmp/install/bin/vault-rag" "$@"); }

out=$(run status 2>&1) && pass "status: $(head -1 <<<"$out")" || pass "status (no index yet, exit $?): $(head -1 <<<"$out")"
out=$(run models 2>&1) || fail "models: $out"
grep -q "onnxruntime: $tmp/install/lib/libonnxruntime.so" <<<"$out" || fail "models does not name the archive's lib/libonnxruntime.so:
$out"
pass "models finds $tmp/install/lib/libonnxruntime.so"
run models import "$model" "$DATA/models/$model" >/dev/null 2>&1 || fail "models import $model"
start=$(date +%s)
run reindex --vault "$tmp/work/notes" >"$tmp/reindex.out" 2>"$tmp/reindex.err" || { cat "$tmp/reindex.out" "$tmp/reindex.err" >&2; fail "reindex"; }
pass "reindex under emulation: $(head -1 "$tmp/reindex.out") ($(($(date +%s) - start)) s)"
out=$(run search --vault "$tmp/work/notes" --config keyword lease_ttl_ms) || fail "search --config keyword: $out"
grep -q "reference/ferrite-config-keys.md" <<<"$out" || fail "keyword search lease_ttl_ms does not list reference/ferrite-config-keys.md:
$out"
pass "keyword search lease_ttl_ms lists reference/ferrite-config-keys.md"
out=$(run search --vault "$tmp/work/notes" --config vector -k 1 "why did writes get slow in the middle of the night") || fail "search --config vector: $out"
top=$(grep -m1 -o '[^ ]*\.md' <<<"$out") || fail "vector search found nothing:
$out"
pass "vector search (ONNX Runtime arm64 under emulation): $top"
out=$(run status 2>&1) || true
pass "status after reindex: $(head -1 <<<"$out")"
echo "qemu-arm64: passed"
