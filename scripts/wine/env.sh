# env.sh: sourced by the wine scripts. One place for where wine, its prefix,
# the zig C compiler for Windows and the Windows ONNX Runtime live.
# Everything under data/ is made by scripts/wine/setup.sh.

WINE_ROOT=${WINE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
WINE_DATA=${WINE_DATA:-$WINE_ROOT/data/wine}

# Debian's wine64 puts its runner and server under /usr/lib/wine; the `wine`
# package would only add launchers in /usr/bin for them.
export WINE=${WINE:-/usr/lib/wine/wine64}
export WINESERVER=${WINESERVER:-/usr/lib/wine/wineserver64}
export WINEPREFIX=${WINEPREFIX:-$WINE_DATA/prefix}
# No Mono or Gecko installer prompts, no debug chatter, no display: console only.
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}
export WINEDEBUG=${WINEDEBUG:--all}
unset DISPLAY WAYLAND_DISPLAY

ZIG_VERSION=0.17.1
ZIG_DIR=$WINE_ROOT/data/tools/ziglang-$ZIG_VERSION

ORT_VERSION=1.24.1
# PyPI onnxruntime 1.24.1, cp312 win_amd64 wheel (its published sha256).
ORT_WHEEL=onnxruntime-1.24.1-cp312-cp312-win_amd64.whl
ORT_WHEEL_SHA256=df0af2f1cfcfff9094971c7eb1d1dfae7ccf81af197493c4dc4643e4342c0946
WIN_ORT_DLL=$WINE_DATA/onnxruntime-$ORT_VERSION/onnxruntime.dll

wine_log() { printf 'wine: %s\n' "$*" >&2; }
wine_die() { printf 'wine: FAILED: %s\n' "$*" >&2; exit 1; }

# wine_zig prints the zig executable.
wine_zig() { printf '%s\n' "$ZIG_DIR/ziglang/zig"; }

# wine_go_env exports what `go build` needs to make a windows/amd64 binary
# with cgo: zig as the C compiler, and sqlite3.h (which sqlite-vec includes and
# zig finds in no system folder) from the SQLite that mattn/go-sqlite3 builds.
wine_go_env() {
  local inc=$WINE_DATA/sqlite3-include sq
  sq=$(cd "$WINE_ROOT" && go list -m -f '{{.Dir}}' github.com/mattn/go-sqlite3) || return 1
  if ! cmp -s "$sq/sqlite3-binding.h" "$inc/sqlite3.h" 2>/dev/null; then
    mkdir -p "$inc"
    cp "$sq/sqlite3-binding.h" "$inc/sqlite3.h"
    chmod u+w "$inc/sqlite3.h"
  fi
  export GOOS=windows GOARCH=amd64 CGO_ENABLED=1
  export CC="$(wine_zig) cc -target x86_64-windows-gnu"
  export CGO_CFLAGS="-O2 -g -I$inc" CGO_LDFLAGS=
}

# winpath turns an absolute Linux path into the Windows path wine maps it to
# (drive Z: is the Linux root).
winpath() {
  local p
  p=$(realpath -m "$1")
  printf 'Z:%s\n' "${p//\//\\}"
}

# wine_run SECONDS PROGRAM ARGS... runs a Windows program, killed after SECONDS.
wine_run() {
  local secs=$1; shift
  timeout --kill-after=10 "$secs" "$WINE" "$@"
}
