#!/usr/bin/env bash
# setup.sh: a wine that runs Windows builds of Go programs, for the tests that
# run vault-rag's Windows build on Linux (make wine-test). Idempotent; each step
# is skipped when its output is present.
#
#   1. Debian's wine64 (console runner only: no X, no recommends)
#   2. zig, a C compiler for Windows (PyPI ziglang), into data/tools
#   3. bcryptprimitives.dll: Go 1.22 and later need ProcessPrng from it and
#      load it from System32 only; wine 8.0 has none. Built from
#      processprng.c. Test infrastructure, never shipped.
#   4. a wine prefix under data/wine/prefix, with that DLL in its system32
#   5. onnxruntime.dll for win-x64 from PyPI's onnxruntime wheel (sha256 pinned)
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$WINE_ROOT"
mkdir -p "$WINE_DATA"

# --- 1. wine
if [ ! -x "$WINE" ]; then
  wine_log "installing Debian wine64 (no recommends)"
  if ! command -v apt-get >/dev/null; then
    wine_die "no $WINE and no apt-get: install wine 8 or later and set WINE/WINESERVER"
  fi
  export DEBIAN_FRONTEND=noninteractive
  (apt-get update -qq && apt-get install -y -qq --no-install-recommends wine64) >/dev/null \
    || wine_die "apt-get install wine64"
fi
wine_log "wine: $("$WINE" --version)"

# --- 2. zig
if [ ! -x "$(wine_zig)" ]; then
  wine_log "installing zig $ZIG_VERSION (PyPI ziglang) into $ZIG_DIR"
  python3 -m pip install -q --disable-pip-version-check --target "$ZIG_DIR" "ziglang==$ZIG_VERSION" \
    || wine_die "pip install ziglang==$ZIG_VERSION"
fi

# --- 3. the ProcessPrng shim
shim=$WINE_DATA/bcryptprimitives.dll
src=scripts/wine/processprng.c
if [ ! -s "$shim" ] || [ "$src" -nt "$shim" ] || [ scripts/wine/bcryptprimitives.def -nt "$shim" ]; then
  wine_log "building bcryptprimitives.dll (first zig use for Windows builds its C library: minutes)"
  t0=$SECONDS
  tmp=$(mktemp -d)
  (cd "$tmp" && "$(wine_zig)" cc -target x86_64-windows-gnu -shared -O2 -s \
      -o bcryptprimitives.dll "$WINE_ROOT/$src" "$WINE_ROOT/scripts/wine/bcryptprimitives.def" -ladvapi32) \
    || wine_die "building bcryptprimitives.dll"
  cp "$tmp/bcryptprimitives.dll" "$shim"
  rm -rf "$tmp"
  wine_log "bcryptprimitives.dll built in $((SECONDS - t0)) s"
fi

# --- 4. the prefix
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

# --- 5. ONNX Runtime for win-x64
if [ ! -s "$WIN_ORT_DLL" ]; then
  wine_log "fetching onnxruntime $ORT_VERSION for win_amd64 (PyPI wheel)"
  tmp=$(mktemp -d)
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --platform win_amd64 --python-version 3.12 "onnxruntime==$ORT_VERSION" -d "$tmp" \
    || wine_die "pip download onnxruntime==$ORT_VERSION (win_amd64)"
  echo "$ORT_WHEEL_SHA256  $tmp/$ORT_WHEEL" | sha256sum -c --quiet \
    || wine_die "sha256 of $ORT_WHEEL does not match the pinned one"
  mkdir -p "$(dirname "$WIN_ORT_DLL")"
  unzip -q -o -j "$tmp/$ORT_WHEEL" onnxruntime/capi/onnxruntime.dll -d "$(dirname "$WIN_ORT_DLL")"
  rm -rf "$tmp"
fi
wine_log "ready: prefix $WINEPREFIX, onnxruntime.dll $WIN_ORT_DLL"
