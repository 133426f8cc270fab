#!/usr/bin/env bash
# dist.sh builds release archives, each runnable where it is extracted with
# nothing else installed (no Go, cargo, npm or Maven):
#
#   scripts/dist.sh [PLATFORM...]     (default: linux-x64)
#
#   dist/vault-rag-VERSION-{linux-x64,linux-arm64,macos-arm64}.tar.gz
#   dist/vault-rag-VERSION-windows-x64.zip
#
# each holding one folder:
#
#   vault-rag/bin/vault-rag[.exe]     the binary
#   vault-rag/bin/*.dll               windows-x64: the Visual C++ runtime ONNX Runtime imports
#   vault-rag/lib/libonnxruntime.so   ONNX Runtime, loaded at run time (libonnxruntime.dylib
#                                     on macOS, onnxruntime.dll on Windows)
#   vault-rag/configs/                the configurations search and serve read
#   vault-rag/README.md, vault-rag/LICENSE
#
# The same folder is left unpacked in dist/stage/PLATFORM/vault-rag/ for the
# MCP bundle. The binary finds lib/ and configs/ beside its bin/; models and
# indexes go to the per-user data folder, never into the archive.
#
# linux-x64 is built with the system C compiler; the others are
# cross-compiled with zig (scripts/cross.sh, installed on first use). ONNX
# Runtime comes from registry packages, sha256-pinned
# (scripts/runtime-libs.sh). Each binary and library is checked for its
# platform's format, CPU and system-only links (scripts/binchk) before it is
# archived.
#
# VERSION defaults to `git describe --tags --always --dirty`. Archives are
# built on Linux x86_64 only (the pinned zig is that machine's).
set -euo pipefail
cd "$(dirname "$0")/.."

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64|Linux/amd64) ;;
  *) echo "dist: archives are built on Linux x86_64; this machine is $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac

DATA=${DATA:-$PWD/data}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
[ $# -gt 0 ] || set -- linux-x64
log() { printf 'dist: %s\n' "$*"; }

. scripts/cross.sh
for p in "$@"; do
  (vr_cross "$p") || exit 1
done
for f in LICENSE README.md configs/shipping.yaml; do
  [ -e "$f" ] || { echo "dist: $f is missing (it comes with the checkout)" >&2; exit 1; }
done

# zipdir MTIME OUT DIR TOP writes DIR/TOP into the zip OUT: entries sorted,
# every one dated MTIME, modes kept (Windows ignores them; unzip on a Unix
# keeps bin/ executable).
zipdir() {
  python3 - "$@" <<'PY'
import datetime, os, sys, zipfile
mtime, out, base, top = sys.argv[1:5]
stamp = datetime.datetime.fromisoformat(mtime).astimezone(datetime.timezone.utc).timetuple()[:6]
paths = []
for root, dirs, files in os.walk(os.path.join(base, top)):
    for name in dirs + files:
        paths.append(os.path.join(root, name))
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for path in sorted(paths, key=lambda p: os.path.relpath(p, base)):
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        st = os.lstat(path)
        if os.path.isdir(path):
            info = zipfile.ZipInfo(rel + "/", stamp)
            info.external_attr = (0o40755 << 16) | 0x10
            z.writestr(info, b"")
            continue
        info = zipfile.ZipInfo(rel, stamp)
        info.external_attr = ((0o100755 if st.st_mode & 0o111 else 0o100644) << 16)
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(path, "rb") as f:
            z.writestr(info, f.read(), compresslevel=9)
PY
}

mkdir -p dist
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
go build -o "$tools/binchk" ./scripts/binchk
mtime=$(git log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)

for p in "$@"; do
  started=$(date +%s)
  top=dist/stage/$p/vault-rag
  rm -rf "dist/stage/$p"
  mkdir -p "$top/bin" "$top/lib"
  (
    vr_cross "$p"
    if [ -n "$VR_ZIG_TARGET" ]; then
      vr_cross_tools
    else
      export CGO_LDFLAGS="-L$DATA/lib ${CGO_LDFLAGS:-}"
    fi
    # The flags of `make build` but -s -w, which drops the symbol tables a
    # user never reads and only changes the link: every package comes from
    # the build cache (-trimpath would rebuild all of them, sqlite's C
    # included: six minutes on two cores per platform). Go stamps the
    # module's VCS version, which /health and the MCP handshake report;
    # --version reports VERSION, which the packages are versioned by.
    go build -tags=sqlite_fts5 -ldflags="-s -w -X main.releaseVersion=$VERSION" -o "$top/bin/vault-rag$VR_EXE" ./cmd/vault-rag
  )
  exe=$top/bin/vault-rag
  [ "$p" = windows-x64 ] && exe=$exe.exe
  DATA=$DATA bash scripts/runtime-libs.sh "$p" "$top"
  cp -r configs "$top/configs"
  cp README.md LICENSE "$top/"

  # Nothing is archived that would not load on a bare install of its OS.
  case "$p" in
    linux-arm64) glibc=(-glibc "$VR_GLIBC_FLOOR") ;;
    *) glibc=() ;;
  esac
  with=$(cd "$top/bin" && ls *.dll 2>/dev/null | tr '\n' ',' || true)
  "$tools/binchk" "${glibc[@]}" "$p" "$exe"
  "$tools/binchk" -lib -with "$with" "$p" "$top/lib/"*onnxruntime*

  # Sorted, owned by root and dated by the commit, so the same commit gives
  # the same listing wherever it is built.
  name=vault-rag-$VERSION-$p
  case "$p" in
    windows-x64)
      out=dist/$name.zip
      zipdir "$mtime" "$out.tmp" "dist/stage/$p" vault-rag ;;
    *)
      out=dist/$name.tar.gz
      tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
        -C "dist/stage/$p" -czf "$out.tmp" vault-rag ;;
  esac
  mv "$out.tmp" "$out"
  log "$out ($(du -h "$out" | cut -f1), built in $(($(date +%s) - started)) s)"
done
