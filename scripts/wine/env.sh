# env.sh: sourced by the wine scripts. One place for where wine, its prefix,
# the zig C compiler for Windows and the Windows ONNX Runtime live.
# Everything under data/ is made by scripts/wine/setup.sh.

WINE_ROOT=${WINE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
WINE_DATA=${WINE_DATA:-$WINE_ROOT/data/wine}

# Debian's wine64 puts its runner and server under /usr/lib/wine; the `wine`
# package would only add launchers in /usr/bin for them. WINE_BIN is that
# runner; WINE, what every script and e2e launcher runs, is the wrapper
# setup.sh writes beside the prefix: it preloads amx-permit.so (amx-permit.c
# says why) and runs WINE_BIN, so a Windows program may use AMX on any x86-64
# Linux CPU. The wrapper holds absolute paths, so it works in the scrubbed
# environment a launcher such as e2e/mcpb-launch.mjs gives it.
export WINE_BIN=${WINE_BIN:-/usr/lib/wine/wine64}
export WINE=${WINE:-$WINE_DATA/bin/wine64}
WINE_AMX_SHIM=$WINE_DATA/amx-permit.so
export WINESERVER=${WINESERVER:-/usr/lib/wine/wineserver64}
export WINEPREFIX=${WINEPREFIX:-$WINE_DATA/prefix}
# No Mono or Gecko installer prompts, no debug chatter, no display: console only.
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}
export WINEDEBUG=${WINEDEBUG:--all}
unset DISPLAY WAYLAND_DISPLAY

# ONNX Runtime for win-x64 and the Visual C++ runtime it imports, as the
# release ships them (scripts/runtime-libs.sh: PyPI wheels, sha256-pinned).
ORT_VERSION=1.24.1
WIN_RUNTIME=$WINE_DATA/runtime
WIN_ORT_DLL=$WIN_RUNTIME/lib/onnxruntime.dll

wine_log() { printf 'wine: %s\n' "$*" >&2; }
wine_die() { printf 'wine: FAILED: %s\n' "$*" >&2; exit 1; }

# wine_zig prints the zig executable of the cross builds (scripts/cross.sh:
# PyPI ziglang, pinned), installing it the first time.
wine_zig() { bash "$WINE_ROOT/scripts/cross.sh" zig; }

# wine_go_env exports what `go build` needs to make a windows/amd64 binary
# with cgo (scripts/cross.sh: zig as the C compiler, sqlite3.h).
wine_go_env() {
  . "$WINE_ROOT/scripts/cross.sh"
  vr_cross_tools >/dev/null && vr_cross windows-x64
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
