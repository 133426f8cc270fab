#!/usr/bin/env bash
# setup.sh: a wine that runs Windows builds of Go programs, for the tests that
# run vault-rag's Windows build on Linux (make wine-test). Idempotent; each step
# is skipped when its output is present.
#
#   1. Debian's wine64 (console runner only: no X, no recommends)
#   2. amx-permit.so, built from amx-permit.c with the host's C compiler, and
#      the wrapper data/wine/bin/wine64 (WINE) that preloads it: without it a
#      Windows program dies under wine on a CPU with AMX (amx-permit.c says why)
#   3. zig, a C compiler for Windows (scripts/cross.sh: PyPI ziglang, pinned)
#   4. bcryptprimitives.dll: Go 1.22 and later need ProcessPrng from it and
#      load it from System32 only; wine 8.0 has none. Built from
#      processprng.c. Test infrastructure, never shipped.
#   5. a wine prefix under data/wine/prefix, with that DLL in its system32
#   6. onnxruntime.dll for win-x64 and the C++ runtime it imports
#      (scripts/runtime-libs.sh: PyPI wheels, sha256 pinned)
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$WINE_ROOT"
mkdir -p "$WINE_DATA"

# --- 1. wine
if [ ! -x "$WINE_BIN" ]; then
  wine_log "installing Debian wine64 (no recommends)"
  if ! command -v apt-get >/dev/null; then
    wine_die "no $WINE_BIN and no apt-get: install wine 8 or later and set WINE_BIN/WINESERVER"
  fi
  export DEBIAN_FRONTEND=noninteractive
  (apt-get update -qq && apt-get install -y -qq --no-install-recommends wine64) >/dev/null \
    || wine_die "apt-get install wine64"
fi
wine_log "wine: $("$WINE_BIN" --version)"

# --- 2. amx-permit.so and the wrapper every later wine run goes through
amx_src=scripts/wine/amx-permit.c
if [ ! -s "$WINE_AMX_SHIM" ] || [ "$amx_src" -nt "$WINE_AMX_SHIM" ]; then
  cc=${CC:-cc}
  command -v "$cc" >/dev/null || cc="$(wine_zig) cc -target x86_64-linux-gnu"
  $cc -shared -fPIC -O2 -o "$WINE_AMX_SHIM.tmp" "$amx_src" || wine_die "building amx-permit.so with $cc"
  mv "$WINE_AMX_SHIM.tmp" "$WINE_AMX_SHIM"
  wine_log "amx-permit.so built with $cc"
fi
mkdir -p "$(dirname "$WINE")"
wrapper=$(printf '%s\n' '#!/bin/sh' \
  '# Written by scripts/wine/setup.sh: wine with amx-permit.so preloaded (scripts/wine/amx-permit.c).' \
  "LD_PRELOAD=\"$WINE_AMX_SHIM\${LD_PRELOAD:+:\$LD_PRELOAD}\" exec \"$WINE_BIN\" \"\$@\"")
if [ "$(cat "$WINE" 2>/dev/null)" != "$wrapper" ]; then
  printf '%s\n' "$wrapper" >"$WINE.tmp" && chmod +x "$WINE.tmp" && mv "$WINE.tmp" "$WINE"
  wine_log "wrapper $WINE written"
fi

# --- 3. zig (scripts/cross.sh installs it, pinned)
zig=$(wine_zig) || wine_die "installing zig (scripts/cross.sh zig)"

# --- 4. the ProcessPrng shim
shim=$WINE_DATA/bcryptprimitives.dll
src=scripts/wine/processprng.c
if [ ! -s "$shim" ] || [ "$src" -nt "$shim" ] || [ scripts/wine/bcryptprimitives.def -nt "$shim" ]; then
  wine_log "building bcryptprimitives.dll (first zig use for Windows builds its C library: minutes)"
  t0=$SECONDS
  tmp=$(mktemp -d)
  (cd "$tmp" && "$zig" cc -target x86_64-windows-gnu -shared -O2 -s \
      -o bcryptprimitives.dll "$WINE_ROOT/$src" "$WINE_ROOT/scripts/wine/bcryptprimitives.def" -ladvapi32) \
    || wine_die "building bcryptprimitives.dll"
  cp "$tmp/bcryptprimitives.dll" "$shim"
  rm -rf "$tmp"
  wine_log "bcryptprimitives.dll built in $((SECONDS - t0)) s"
fi

# --- 5. the prefix
sys32=$WINEPREFIX/drive_c/windows/system32
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  wine_log "initialising the wine prefix $WINEPREFIX"
  t0=$SECONDS
  # wineboot complains that the 32-bit rundll32 is missing: this wine is 64-bit only.
  wine_run 600 wineboot --init >/dev/null 2>&1 || wine_die "wineboot --init (prefix $WINEPREFIX)"
  "$WINESERVER" -w
  wine_log "prefix initialised in $((SECONDS - t0)) s"
fi
if ! cmp -s "$shim" "$sys32/bcryptprimitives.dll"; then
  cp "$shim" "$sys32/bcryptprimitives.dll"
  wine_log "bcryptprimitives.dll installed in $sys32"
fi

# --- 6. ONNX Runtime for win-x64, as the release ships it
if [ ! -s "$WIN_ORT_DLL" ]; then
  wine_log "fetching onnxruntime $ORT_VERSION for win-x64 (scripts/runtime-libs.sh)"
  bash scripts/runtime-libs.sh windows-x64 "$WIN_RUNTIME" >&2 || wine_die "scripts/runtime-libs.sh windows-x64"
fi
wine_log "ready: prefix $WINEPREFIX, onnxruntime.dll $WIN_ORT_DLL"
