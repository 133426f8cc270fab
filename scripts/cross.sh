#!/usr/bin/env bash
# cross.sh maps a release platform to the Go and C toolchain settings that
# build vault-rag for it from a Linux x86_64 machine. The C compiler is zig
# (PyPI `ziglang`, pinned below by version and wheel sha256), installed into
# data/tools/ the first time a target asks for it and never by setup.
#
#   scripts/cross.sh env PLATFORM    print `export K=V` lines for PLATFORM
#   scripts/cross.sh zig             install zig if missing, print its path
#
# Sourced, it defines vr_cross PLATFORM (the mapping alone: nothing is
# installed or checked) and vr_cross_tools (installs zig, the compiler
# wrappers and the sqlite3.h include folder).
#
# PLATFORM is one of linux-x64, linux-arm64, macos-arm64, windows-x64.
# linux-x64 is the machine's own: the system C compiler, nothing cross.

VR_ZIG_VERSION=0.17.1
# ziglang-0.17.1-py3-none-manylinux_2_12_x86_64.manylinux2010_x86_64.musllinux_1_1_x86_64.whl
VR_ZIG_SHA256=ea6cc5d87b033cf0aedfbc8f9549a908cae6c50ac31f1698188fa48a74524b54
# The oldest glibc a linux-arm64 binary asks for: 2.28 is Debian 10, Ubuntu
# 20.04 has 2.31, RHEL 8 2.28.
VR_GLIBC_FLOOR=2.28
# The oldest macOS the macOS binary asks for: 11 is the first with Apple
# silicon.
VR_MACOS_MIN=11.0

_vr_cross_root() { (cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd); }

# vr_cross PLATFORM sets GOOS, GOARCH, VR_ZIG_TARGET ("" for the native
# platform), VR_EXE (".exe" or "") and, for a cross platform, CC, CXX,
# CGO_CFLAGS and CGO_LDFLAGS, with the tools under VR_TOOLS (default
# data/tools). Returns 1, with one line on stderr, for an unknown platform.
vr_cross() {
  local root tools
  root=$(_vr_cross_root)
  tools=${VR_TOOLS:-$root/data/tools}
  VR_EXE= VR_ZIG_TARGET=
  case "$1" in
    linux-x64)   GOOS=linux   GOARCH=amd64 ;;
    linux-arm64) GOOS=linux   GOARCH=arm64 VR_ZIG_TARGET=aarch64-linux-gnu.$VR_GLIBC_FLOOR ;;
    macos-arm64) GOOS=darwin  GOARCH=arm64 VR_ZIG_TARGET=aarch64-macos.$VR_MACOS_MIN ;;
    windows-x64) GOOS=windows GOARCH=amd64 VR_ZIG_TARGET=x86_64-windows-gnu VR_EXE=.exe ;;
    *) echo "cross: unknown platform '$1' (known: linux-x64 linux-arm64 macos-arm64 windows-x64)" >&2; return 1 ;;
  esac
  export GOOS GOARCH CGO_ENABLED=1
  if [ -z "$VR_ZIG_TARGET" ]; then
    return 0
  fi
  VR_ZIG_DIR=$tools/zig-$VR_ZIG_VERSION
  export CC="$VR_ZIG_DIR/bin/cc-$VR_ZIG_TARGET"
  export CXX="$VR_ZIG_DIR/bin/c++-$VR_ZIG_TARGET"
  # sqlite-vec includes sqlite3.h; zig searches no system folder, so it gets
  # the header of the SQLite that mattn/go-sqlite3 compiles in.
  export CGO_CFLAGS="-O2 -g -I$VR_ZIG_DIR/sqlite3-include"
  export CGO_LDFLAGS=""
  if [ "$GOOS" = darwin ]; then
    CGO_LDFLAGS="-F$VR_ZIG_DIR/macos-stubs/Frameworks -L$VR_ZIG_DIR/macos-stubs/lib"
  fi
}

# vr_cross_tools installs what vr_cross's settings point at, if missing: zig
# (pip, hash-checked), a cc and c++ wrapper per target, and sqlite3.h.
vr_cross_tools() {
  local root dir tmp t sq
  root=$(_vr_cross_root)
  dir=${VR_TOOLS:-$root/data/tools}/zig-$VR_ZIG_VERSION
  if [ ! -x "$dir/ziglang/zig" ]; then
    echo "cross: installing zig $VR_ZIG_VERSION (PyPI ziglang, about 100 MB) into $dir" >&2
    case "$(uname -s)/$(uname -m)" in
      Linux/x86_64) ;;
      *) echo "cross: the pinned zig wheel is for Linux x86_64; this machine is $(uname -s) $(uname -m)" >&2; return 1 ;;
    esac
    tmp=$(mktemp -d)
    printf 'ziglang==%s --hash=sha256:%s\n' "$VR_ZIG_VERSION" "$VR_ZIG_SHA256" >"$tmp/req.txt"
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
      --only-binary=:all: --target "$tmp/zig" -r "$tmp/req.txt" >&2 || { rm -rf "$tmp"; return 1; }
    mkdir -p "$(dirname "$dir")"
    rm -rf "$dir"
    mv "$tmp/zig" "$dir"
    rm -rf "$tmp"
  fi
  mkdir -p "$dir/bin"
  for t in aarch64-linux-gnu.$VR_GLIBC_FLOOR aarch64-macos.$VR_MACOS_MIN x86_64-windows-gnu; do
    _vr_wrapper "$dir" cc "$t"
    _vr_wrapper "$dir" c++ "$t"
  done
  _vr_macos_stubs "$dir/macos-stubs" || return 1
  sq=$(cd "$root" && go list -m -f '{{.Dir}}' github.com/mattn/go-sqlite3) || return 1
  if ! cmp -s "$sq/sqlite3-binding.h" "$dir/sqlite3-include/sqlite3.h" 2>/dev/null; then
    mkdir -p "$dir/sqlite3-include"
    cp "$sq/sqlite3-binding.h" "$dir/sqlite3-include/sqlite3.h"
    cp "$sq/sqlite3-binding.h" "$sq/sqlite3ext.h" "$dir/sqlite3-include/"
    chmod u+w "$dir/sqlite3-include/"*
  fi
}

# _vr_macos_stubs DIR writes the link-time stubs (.tbd text files) of the
# three macOS libraries Go's standard library links beyond libSystem, which
# zig has: CoreFoundation and Security (crypto/x509's system roots) and
# libresolv (net's DNS). Each lists the symbols Go itself imports from it
# (its //go:cgo_import_dynamic lines), read from this Go's source, so a new
# Go's symbols are never missing. The binary then names the real libraries,
# on every Mac, by their install paths.
_vr_macos_stubs() {
  local out=$1 goroot lib path name syms
  goroot=$(go env GOROOT) || return 1
  rm -rf "$out.tmp"
  for lib in CoreFoundation Security resolv; do
    case $lib in
      resolv) path=/usr/lib/libresolv.9.dylib name=$out.tmp/lib/libresolv.tbd ;;
      *) path=/System/Library/Frameworks/$lib.framework/Versions/A/$lib name=$out.tmp/Frameworks/$lib.framework/$lib.tbd ;;
    esac
    syms=$(grep -rh --include='*.go' '^//go:cgo_import_dynamic' "$goroot/src" |
      awk -v p="\"$path\"" '$4 == p {print "_" $3}' | sort -u | paste -sd, -)
    [ -n "$syms" ] || { echo "cross: Go imports nothing from $path: the stub would be empty" >&2; return 1; }
    mkdir -p "$(dirname "$name")"
    cat >"$name" <<EOF
--- !tapi-tbd
tbd-version:     4
targets:         [ arm64-macos, arm64e-macos ]
install-name:    '$path'
current-version: 1
exports:
  - targets:         [ arm64-macos, arm64e-macos ]
    symbols:         [ ${syms//,/, } ]
...
EOF
  done
  rm -rf "$out"
  mv "$out.tmp" "$out"
}

# _vr_wrapper DIR cc|c++ TARGET writes DIR/bin/cc-TARGET: zig's compiler for
# TARGET, given what the Go linker passes minus the flags zig's linkers
# reject. Go puts one word per argument in CC, so a wrapper is simpler than
# quoting a command line.
_vr_wrapper() {
  local dir=$1 kind=$2 target=$3 f
  f=$dir/bin/$kind-$target
  cat >"$f.tmp" <<EOF
#!/usr/bin/env bash
# Written by scripts/cross.sh: zig $kind for $target.
zig=\$(cd "\$(dirname "\$0")/.." && pwd)/ziglang/zig
args=()
for a in "\$@"; do
  case "\$a" in
    # Go asks the Windows and macOS linkers for things zig's lld and Mach-O
    # linkers do by themselves or do not know.
    -mthreads|-Wl,--no-insert-timestamp|-Wl,-headerpad,*|-Wl,-x|-Wl,-S) ;;
    *) args+=("\$a") ;;
  esac
done
# Go probes the compiler with stdin compiled to /dev/null or nowhere (-###),
# for which zig writes a stray -.o (-.obj) into the working folder: probe in
# a scratch one.
stdin= out= prev=
for a in "\${args[@]}"; do
  [ "\$a" = - ] && stdin=1
  [ "\$prev" = -o ] && out=\$a
  prev=\$a
done
if [ -n "\$stdin" ] && { [ -z "\$out" ] || [ "\$out" = /dev/null ]; }; then
  scratch=\$(mktemp -d)
  trap 'rm -rf "\$scratch"' EXIT
  (cd "\$scratch" && "\$zig" $kind -target $target "\${args[@]}")
  exit
fi
exec "\$zig" $kind -target $target "\${args[@]}"
EOF
  chmod +x "$f.tmp"
  mv "$f.tmp" "$f"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    env)
      vr_cross "${2:-}"
      for k in GOOS GOARCH CGO_ENABLED CC CXX CGO_CFLAGS CGO_LDFLAGS VR_EXE; do
        [ -n "${!k+x}" ] && printf 'export %s=%q\n' "$k" "${!k}"
      done ;;
    zig)
      vr_cross_tools
      echo "${VR_TOOLS:-$(_vr_cross_root)/data/tools}/zig-$VR_ZIG_VERSION/ziglang/zig" ;;
    *) echo "usage: scripts/cross.sh env PLATFORM | zig" >&2; exit 2 ;;
  esac
fi
