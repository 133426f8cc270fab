#!/usr/bin/env bash
# runtime-libs.sh puts the native libraries a release archive ships into its
# staging folder, each from a registry package and checked against a pinned
# sha256:
#
#   scripts/runtime-libs.sh PLATFORM STAGE
#
#   STAGE/lib/libonnxruntime.so      linux-x64, linux-arm64: npm onnxruntime-node
#   STAGE/lib/libonnxruntime.dylib   macos-arm64: PyPI onnxruntime, macOS arm64 wheel
#   STAGE/lib/onnxruntime.dll        windows-x64: PyPI onnxruntime, win_amd64 wheel
#   STAGE/bin/msvcp140.dll, msvcp140_1.dll, vcruntime140.dll, vcruntime140_1.dll
#                                    windows-x64: the Visual C++ runtime that
#                                    onnxruntime.dll imports (PyPI msvc-runtime,
#                                    Microsoft's redistributable files)
#
# Windows looks for a loaded DLL's own imports in the program's folder, not
# the DLL's: the C++ runtime goes beside vault-rag.exe so a machine without
# the Visual C++ Redistributable still loads ONNX Runtime from lib/.
#
# The packages are cached in data/cache/release/ (RELEASE_CACHE). Each
# package file is pinned too (pip --require-hashes; npm's own integrity check
# plus the sha256 below), and each extracted library again.
set -euo pipefail
cd "$(dirname "$0")/.."

ORT_VERSION=1.24.1
NPM_ORT=onnxruntime-node-$ORT_VERSION.tgz
NPM_ORT_SHA256=57181cf6e6e711b155c5b942d591fd63ded0b5de5c4922d51fd994e7f6ac2772
WHEEL_WIN=onnxruntime-$ORT_VERSION-cp312-cp312-win_amd64.whl
WHEEL_WIN_SHA256=df0af2f1cfcfff9094971c7eb1d1dfae7ccf81af197493c4dc4643e4342c0946
WHEEL_MAC=onnxruntime-$ORT_VERSION-cp312-cp312-macosx_14_0_arm64.whl
WHEEL_MAC_SHA256=7307aab9e2e879c0171f37e0eb2808a5b4aec7ba899bb17c5f0cedfc301a8ac2
MSVC_VERSION=14.51.36231
WHEEL_MSVC=msvc_runtime-$MSVC_VERSION-cp312-cp312-win_amd64.whl
WHEEL_MSVC_SHA256=89f70d1a37bb64164cdb09d02dd82d6b1400e1310be2995b4ed5a9f23efe2222

# The libraries themselves: platform, package, member, file name, sha256.
LIBS="
linux-x64   $NPM_ORT    package/bin/napi-v6/linux/x64/libonnxruntime.so.1                 lib/libonnxruntime.so    53ef1ac028dd1b05554b8da28d9159eb3876f99868193d2aaa6e67f0243c23d4
linux-arm64 $NPM_ORT    package/bin/napi-v6/linux/arm64/libonnxruntime.so.1               lib/libonnxruntime.so    7954e8bdedb497f830c6a679e818d98399b7f4d81ade1126c3e0be74d28111ab
macos-arm64 $WHEEL_MAC  onnxruntime/capi/libonnxruntime.$ORT_VERSION.dylib                lib/libonnxruntime.dylib 644ea9751a5e7e56dff293d2a7c3d78f18f8b404e85bade791c0d40a3b950553
windows-x64 $WHEEL_WIN  onnxruntime/capi/onnxruntime.dll                                  lib/onnxruntime.dll      782a0d8f65d4e3b0b08cfe5217dbbdd6100a65dc6757868a385704b731ef774f
windows-x64 $WHEEL_MSVC msvc_runtime-$MSVC_VERSION.data/data/Scripts/msvcp140.dll         bin/msvcp140.dll         7c26614e1d733892c2deac7e245ce115504b1d80592dd0a01b08e3e5a55f89ca
windows-x64 $WHEEL_MSVC msvc_runtime-$MSVC_VERSION.data/data/Scripts/msvcp140_1.dll       bin/msvcp140_1.dll       206c931bf90fdad8816de3b5e2ef80b2bcaa9406c89ecc05fe6fddffe251e982
windows-x64 $WHEEL_MSVC msvc_runtime-$MSVC_VERSION.data/data/Scripts/vcruntime140.dll     bin/vcruntime140.dll     d1f4225df2cd877dbf130d5668a021dce3f94118455ff5ec952061c30afc9ce7
windows-x64 $WHEEL_MSVC msvc_runtime-$MSVC_VERSION.data/data/Scripts/vcruntime140_1.dll   bin/vcruntime140_1.dll   a7146c08f89fe5b04541ab507cdb59ff7b44534d4ba3c668a426c6450a03434e
"

platform=${1:-} stage=${2:-}
[ -n "$platform" ] && [ -n "$stage" ] || { echo "usage: scripts/runtime-libs.sh PLATFORM STAGE" >&2; exit 2; }
grep -q "^$platform " <<<"$LIBS" || { echo "runtime-libs: unknown platform '$platform' (known: linux-x64 linux-arm64 macos-arm64 windows-x64)" >&2; exit 1; }
cache=${RELEASE_CACHE:-$PWD/data/cache/release}
mkdir -p "$cache"
log() { printf 'runtime-libs: %s\n' "$*" >&2; }

sha() { sha256sum "$1" | cut -d' ' -f1; }

# fetch PACKAGE: the package file in the cache, downloaded and checked if
# missing or wrong.
fetch() {
  local pkg=$1 want tmp
  case "$pkg" in
    "$NPM_ORT") want=$NPM_ORT_SHA256 ;;
    "$WHEEL_WIN") want=$WHEEL_WIN_SHA256 ;;
    "$WHEEL_MAC") want=$WHEEL_MAC_SHA256 ;;
    "$WHEEL_MSVC") want=$WHEEL_MSVC_SHA256 ;;
  esac
  if [ -f "$cache/$pkg" ] && [ "$(sha "$cache/$pkg")" = "$want" ]; then
    return 0
  fi
  tmp=$(mktemp -d)
  case "$pkg" in
    *.tgz)
      log "fetching npm onnxruntime-node@$ORT_VERSION"
      (cd "$tmp" && npm pack --silent "onnxruntime-node@$ORT_VERSION" >/dev/null) ;;
    *.whl)
      local name=${pkg%%-*} version plat
      version=${pkg#*-}; version=${version%%-*}
      plat=${pkg##*-}; plat=${plat%.whl}
      name=${name//_/-}
      log "fetching PyPI $name==$version ($plat)"
      printf '%s==%s --hash=sha256:%s\n' "$name" "$version" "$want" >"$tmp/req.txt"
      python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --platform "$plat" --python-version 3.12 --implementation cp --abi cp312 \
        --require-hashes -r "$tmp/req.txt" -d "$tmp" >&2 ;;
  esac
  [ -f "$tmp/$pkg" ] || { echo "runtime-libs: $pkg did not arrive" >&2; ls "$tmp" >&2; rm -rf "$tmp"; exit 1; }
  local got
  got=$(sha "$tmp/$pkg")
  if [ "$got" != "$want" ]; then
    echo "runtime-libs: $pkg has sha256 $got, pinned $want" >&2
    rm -rf "$tmp"
    exit 1
  fi
  mv "$tmp/$pkg" "$cache/$pkg"
  rm -rf "$tmp"
}

while read -r p pkg member dest want; do
  [ "$p" = "$platform" ] || continue
  fetch "$pkg"
  mkdir -p "$stage/$(dirname "$dest")"
  case "$pkg" in
    *.tgz) tar -xzOf "$cache/$pkg" "$member" >"$stage/$dest.tmp" ;;
    *.whl) unzip -p "$cache/$pkg" "$member" >"$stage/$dest.tmp" ;;
  esac
  got=$(sha "$stage/$dest.tmp")
  if [ "$got" != "$want" ]; then
    echo "runtime-libs: $member from $pkg has sha256 $got, pinned $want" >&2
    rm -f "$stage/$dest.tmp"
    exit 1
  fi
  chmod 0755 "$stage/$dest.tmp"
  mv "$stage/$dest.tmp" "$stage/$dest"
  log "$platform: $dest ($member of $pkg, sha256 ok)"
done <<<"$LIBS"
