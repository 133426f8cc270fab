#!/usr/bin/env bash
# test.sh: vault-rag's Windows build run under wine (make wine-test). Steps, each
# logged as "wine-test: [N/7] ..." and named again if it fails:
#   1. amx      on a CPU with AMX: a Windows program's tile instruction dies
#               under plain wine and runs under WINE, the wrapper that preloads
#               amx-permit.so (amx-permit.c says why); skipped, with the reason,
#               on a CPU without AMX
#   2. ort      a Windows Go program loads onnxruntime.dll and prints its version
#   3. index    the index package's tests, built for Windows, run under wine
#               (WINE_INDEX_RUN picks tests, default all)
#   4. build    the windows-x64 release folder, dist/stage/windows-x64/vault-rag
#               (bin/vault-rag.exe, lib/onnxruntime.dll, configs/)
#   5. cli      reindex of a copy of the demo vault, search, status, with
#               Windows paths (Z:\... is the Linux root under wine)
#   6. mcp      an MCP session over stdio with the official TypeScript SDK, and
#               a full reindex by a second process while that server holds the
#               index open (e2e/wine-e2e.mjs)
#   7. bundle   the .mcpb's win32 entry launched under wine (e2e/mcpb-launch.mjs),
#               when the bundle has a Windows build (WINE_BUNDLE=0 skips it)
# WINE_STEPS lists the steps to run (default: all seven, by name).
# Needs scripts/wine/setup.sh first. Every wine run has a timeout; the wine
# server is stopped at the end whatever happens.
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$WINE_ROOT"
DATA=${DATA:-$WINE_ROOT/data}

STEP=start
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vault-rag-wine.XXXXXX")
finish() {
  local rc=$?
  "$WINESERVER" -k >/dev/null 2>&1 || true
  if [ $rc -ne 0 ] || [ -z "${DONE:-}" ]; then
    printf 'wine-test: FAILED in step %s (exit %s); work folder kept: %s\n' "$STEP" "$rc" "$WORK" >&2
  else
    rm -rf "$WORK"
    printf 'wine-test: all steps passed in %s s\n' "$SECONDS" >&2
  fi
}
trap finish EXIT
trap 'exit 143' TERM INT
STEPS=" ${WINE_STEPS:-amx ort index build cli mcp bundle} "
want_step() { [[ $STEPS == *" $1 "* ]]; }
step() { STEP=$1; printf 'wine-test: [%s] %s (at %s s)\n' "$1" "$2" "$SECONDS" >&2; }
fail() { printf 'wine-test: step %s: %s\n' "$STEP" "$*" >&2; exit 1; }
# jget FILE EXPR prints a value of a JSON file (EXPR indexes the parsed object d).
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null || echo "?"; }

[ -x "$WINE" ] && [ -s "$WINE_AMX_SHIM" ] && [ -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ] && [ -s "$WIN_ORT_DLL" ] \
  || { STEP=setup; fail "wine is not set up: run scripts/wine/setup.sh (make wine-setup)"; }
"$WINESERVER" -k >/dev/null 2>&1 || true # a server left by an earlier run would hold old state

# --- 1. AMX tiles
if want_step amx; then
  step 1/7 "amx: a Windows program's AMX tile instruction under wine"
  if ! grep -qw amx_tile /proc/cpuinfo; then
    echo "  skipped: this CPU has no AMX (no amx_tile in /proc/cpuinfo), so no kernel of ONNX Runtime uses it"
  else
    (cd "$WORK" && "$(wine_zig)" cc -target x86_64-windows-gnu -O2 -o amxprobe.exe "$WINE_ROOT/scripts/wine/amxprobe.c") \
      || fail "building amxprobe.exe"
    # Without the preload the probe must die: otherwise it proves nothing about the wrapper.
    # (wine's exit status after its debugger reports the fault is not reliable: the output says.)
    out=$(timeout --kill-after=10 120 "$WINE_BIN" "$WORK/amxprobe.exe" 2>&1 || true)
    if grep -q 'amx: tiles usable' <<<"$out"; then
      fail "amxprobe.exe ran under plain wine ($WINE_BIN) on a CPU with AMX: it no longer exercises the tile permission"
    fi
    grep -q 'illegal instruction' <<<"$out" || fail "amxprobe.exe under plain wine neither ran nor died of an illegal instruction: $(tail -3 <<<"$out")"
    out=$(wine_run 120 "$WORK/amxprobe.exe" 2>&1) \
      || fail "amxprobe.exe died under $WINE on a CPU with AMX: amx-permit.so did not get the tile permission: $(tail -3 <<<"$out")"
    grep -q 'amx: tiles usable' <<<"$out" || fail "amxprobe.exe printed '$out'"
    echo "  dies under plain wine, runs under $WINE: $(tr -d '\r' <<<"$out")"
  fi
fi

# --- 2. ONNX Runtime loads
if want_step ort; then
  step 2/7 "ort: a Windows Go program loads onnxruntime.dll $ORT_VERSION"
  (wine_go_env && go build -o "$WORK/ortversion.exe" ./scripts/wine/ortversion) || fail "building ortversion.exe"
  out=$(wine_run 120 "$WORK/ortversion.exe" "$(winpath "$WIN_ORT_DLL")" 2>"$WORK/ort.err") \
    || fail "ortversion.exe: $(tail -5 "$WORK/ort.err")"
  [ "$out" = "onnxruntime $ORT_VERSION" ] || fail "ortversion.exe printed '$out', want 'onnxruntime $ORT_VERSION'"
  echo "  $out"
fi

# --- 3. the index package's tests
if want_step index; then
  step 3/7 "index: the index package's tests for Windows under wine"
  t0=$SECONDS
  # With Go's file deletion taught wine's answer (deleteat-overlay.sh): without
  # it every t.TempDir cleanup fails under wine 8.0.
  bash scripts/wine/deleteat-overlay.sh "$WORK/overlay" || fail "deleteat-overlay.sh"
  (wine_go_env && go test -c -tags=sqlite_fts5 -overlay "$WORK/overlay/overlay.json" -o "$WORK/index.test.exe" ./index/) \
    || fail "building index.test.exe"
  echo "  built in $((SECONDS - t0)) s"
  # TestDefaultPath makes a folder symlink with os.Symlink: wine 8.0 makes a
  # Unix symlink that Windows calls then see as a plain folder, so
  # filepath.EvalSymlinks cannot resolve it as Windows does.
  WINE_INDEX_SKIP=${WINE_INDEX_SKIP-^TestDefaultPath\$}
  t0=$SECONDS
  # The tests read testdata/ from the package folder, as go test runs them.
  if ! (cd index && ONNXRUNTIME_LIB=$(winpath "$WIN_ORT_DLL") VAULT_RAG_DATA=$(winpath "$DATA") \
      wine_run "${WINE_INDEX_TIMEOUT:-1500}" "$WORK/index.test.exe" -test.count=1 -test.timeout=20m \
        ${WINE_INDEX_RUN:+-test.run "$WINE_INDEX_RUN"} -test.skip "$WINE_INDEX_SKIP" ${WINE_INDEX_V:+-test.v} >"$WORK/index.out" 2>&1); then
    tail -60 "$WORK/index.out" >&2
    fail "index.test.exe failed (full output: $WORK/index.out)"
  fi
  tail -3 "$WORK/index.out" | sed 's/^/  /'
  echo "  ran in $((SECONDS - t0)) s"
fi

# --- 4. vault-rag.exe
if want_step build || want_step cli || want_step mcp; then
  step 4/7 "build: the windows-x64 release folder (scripts/dist.sh windows-x64)"
  t0=$SECONDS
  DATA=$DATA bash scripts/dist.sh windows-x64 >&2 || fail "scripts/dist.sh windows-x64"
  STAGE=$WINE_ROOT/dist/stage/windows-x64/vault-rag
  EXE=$STAGE/bin/vault-rag.exe
  [ -f "$EXE" ] && [ -f "$STAGE/lib/onnxruntime.dll" ] || fail "dist/stage/windows-x64 lacks bin/vault-rag.exe or lib/onnxruntime.dll"
  echo "  built in $((SECONDS - t0)) s"
fi

# --- 5. the CLI on a copy of the demo vault, all paths in Windows form
if want_step cli || want_step mcp; then
  step 5/7 "cli: reindex, search, status on a copy of the demo vault"
  cp -r vault "$WORK/vault"
  mkdir -p "$WORK/data"
  # The models are read in place (wine follows the symlink); the index goes to the work folder.
  ln -s "$DATA/models" "$WORK/data/models"
  export VAULT_PATH=$(winpath "$WORK/vault") DB_PATH=$(winpath "$WORK/index/vault.db")
  export VAULT_RAG_DATA=$(winpath "$WORK/data") ONNXRUNTIME_LIB=$(winpath "$STAGE/lib/onnxruntime.dll")
  export VAULT_RAG_EMBEDDER=bge-small-en-v1.5-q
  unset VAULT_RAG_TOKEN VAULT_RAG_TRANSPORT VAULT_RAG_ADDR VAULT_RAG_CONFIG
  mkdir -p "$WORK/index"
  echo "  VAULT_PATH=$VAULT_PATH DB_PATH=$DB_PATH"
  t0=$SECONDS
  wine_run 600 "$EXE" reindex --json >"$WORK/reindex.json" 2>"$WORK/reindex.err" \
    || fail "reindex: $(tail -20 "$WORK/reindex.err")"
  notes=$(jget "$WORK/reindex.json" 'd["notes"]') chunks=$(jget "$WORK/reindex.json" 'd["chunks"]')
  # Every note of the vault but those the report says it skipped (lint reports, templates/).
  want=$(cd "$WORK/vault" && find . -name '*.md' | sed 's|^\./||' | python3 -c '
import json, sys
skipped = [s["path"] for s in json.load(open(sys.argv[1]))["skipped"]]
print(sum(1 for p in sys.stdin.read().splitlines() if not any(p == s or (s.endswith("/") and p.startswith(s)) for s in skipped)))
' "$WORK/reindex.json")
  [ "$notes" = "$want" ] && [ "$chunks" -gt "$want" ] 2>/dev/null \
    || fail "reindex indexed $notes notes and $chunks chunks; the vault has $want notes: $(head -c 400 "$WORK/reindex.json")"
  echo "  reindex: $notes notes, $chunks chunks in $((SECONDS - t0)) s"
  wine_run 300 "$EXE" search "why did writes get slow in the middle of the night" >"$WORK/search.out" 2>"$WORK/search.err" \
    || fail "search: $(tail -20 "$WORK/search.err")"
  grep -q '\.md' "$WORK/search.out" || fail "search found no note: $(head -20 "$WORK/search.out")"
  grep -q '\\' "$WORK/search.out" && fail "search printed a backslash path: $(grep -m3 '\\' "$WORK/search.out")"
  sed -n 1,4p "$WORK/search.out" | sed 's/^/  search: /'
  wine_run 300 "$EXE" status --json >"$WORK/status.json" 2>"$WORK/status.err" \
    || fail "status: $(tail -20 "$WORK/status.err")"
  [ "$(jget "$WORK/status.json" 'd["notes"]')" = "$want" ] && [ "$(jget "$WORK/status.json" 'd["chunks"]')" = "$chunks" ] \
    && [ "$(jget "$WORK/status.json" 'd["index_exists"] and not d.get("index_problem")')" = True ] \
    || fail "status does not report a sound index of $want notes and $chunks chunks: $(head -c 600 "$WORK/status.json")"
  echo "  status: $(jget "$WORK/status.json" '{k: d.get(k) for k in ("index", "notes", "chunks", "embedder", "warnings")}')"
fi

# --- 6. the SDK session and a full reindex while serving
if want_step mcp; then
  step 6/7 "mcp: SDK session over stdio, and a full reindex while the server holds the index"
  [ -d e2e/node_modules/@modelcontextprotocol/sdk ] || (cd e2e && npm ci --no-audit --no-fund >/dev/null) || fail "npm ci in e2e/"
  VAULT_RAG_EXE=$EXE timeout --kill-after=10 1000 node e2e/wine-e2e.mjs || fail "e2e/wine-e2e.mjs (lines 'not ok' above)"
  "$WINESERVER" -k >/dev/null 2>&1 || true
fi

# --- 7. the bundle's win32 entry
if want_step bundle; then
  step 7/7 "bundle: the .mcpb's win32 entry under wine"
  if [ "${WINE_BUNDLE:-1}" = 0 ]; then
    echo "  skipped (WINE_BUNDLE=0)"
  elif [ ! -f e2e/mcpb-launch.mjs ]; then
    fail "e2e/mcpb-launch.mjs is missing"
  else
    # The bundle is packed from the release folders of dist/stage/, here the
    # windows-x64 one of step 3 alone; its %LOCALAPPDATA% is the prefix's.
    local_data="$WINEPREFIX/drive_c/users/$(id -un)/AppData/Local/vault-rag"
    rm -rf "$local_data"
    timeout --kill-after=10 1200 make --no-print-directory mcpb-test MCPB_TEST_FLAGS="--platform win32 --wrap $WINE \
        --windows-paths --data-folder $local_data --pass-env WINEPREFIX --pass-env WINEDLLOVERRIDES \
        --pass-env WINEDEBUG --pass-env WINESERVER" \
      || fail "make mcpb-test (the bundle's win32 entry under wine)"
    rm -rf "$local_data"
  fi
fi
DONE=1
