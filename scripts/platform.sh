#!/usr/bin/env bash
# platform.sh maps a machine (`uname -s`, `uname -m`) to the native files
# setup.sh fetches for it. Sourced, it defines vr_platform; run, it prints the
# choice for this machine, or for the OS and ARCH given:
#   scripts/platform.sh                 # this machine
#   scripts/platform.sh Darwin arm64    # what a Mac with Apple silicon gets
# On a platform with no source it prints one line to stderr and exits 1.
#
# The names below are the published ones at the pinned versions:
#   ONNX Runtime 1.24.1 release archives: onnxruntime-linux-x64, -linux-aarch64,
#     -osx-arm64 (.tgz; the library in lib/). 1.24 ships no macOS x86_64 build.
#   npm onnxruntime-node@1.24.1: bin/napi-v6/{linux/x64,linux/arm64,darwin/arm64}/
#     (libonnxruntime.so.1 on Linux, libonnxruntime.1.24.1.dylib on macOS).

VR_ORT_VERSION=${VR_ORT_VERSION:-1.24.1}

# vr_platform OS ARCH sets, for the platform named:
#   VR_PLATFORM     a short name (linux-x64, linux-arm64, macos-arm64, windows-x64)
#   VR_ORT_LIB      the file name vault-rag loads (libonnxruntime.so / .dylib, onnxruntime.dll)
#   VR_ORT_ARCHIVE  the ONNX Runtime release archive ("" when none exists)
#   VR_ORT_MEMBER   the library's path inside that archive
#   VR_ORT_NPM      the library's path inside the onnxruntime-node npm package ("" when none)
# and returns 1, with one line on stderr, for a platform with no source.
vr_platform() {
  local os=$1 arch=$2 v=$VR_ORT_VERSION
  VR_PLATFORM= VR_ORT_LIB= VR_ORT_ARCHIVE= VR_ORT_MEMBER= VR_ORT_NPM=
  case "$os/$arch" in
    Linux/x86_64|Linux/amd64)
      VR_PLATFORM=linux-x64 VR_ORT_LIB=libonnxruntime.so
      VR_ORT_ARCHIVE=onnxruntime-linux-x64-$v.tgz VR_ORT_MEMBER=onnxruntime-linux-x64-$v/lib/libonnxruntime.so.$v
      VR_ORT_NPM=package/bin/napi-v6/linux/x64/libonnxruntime.so.1 ;;
    Linux/aarch64|Linux/arm64)
      VR_PLATFORM=linux-arm64 VR_ORT_LIB=libonnxruntime.so
      VR_ORT_ARCHIVE=onnxruntime-linux-aarch64-$v.tgz VR_ORT_MEMBER=onnxruntime-linux-aarch64-$v/lib/libonnxruntime.so.$v
      VR_ORT_NPM=package/bin/napi-v6/linux/arm64/libonnxruntime.so.1 ;;
    Darwin/arm64|Darwin/aarch64)
      VR_PLATFORM=macos-arm64 VR_ORT_LIB=libonnxruntime.dylib
      VR_ORT_ARCHIVE=onnxruntime-osx-arm64-$v.tgz VR_ORT_MEMBER=onnxruntime-osx-arm64-$v/lib/libonnxruntime.$v.dylib
      VR_ORT_NPM=package/bin/napi-v6/darwin/arm64/libonnxruntime.$v.dylib ;;
    MINGW*/x86_64|MSYS*/x86_64|CYGWIN*/x86_64|Windows_NT/x86_64|Windows_NT/AMD64)
      # Git Bash, MSYS2 and Cygwin name Windows this way. Release archives
      # carry the DLL of PyPI's onnxruntime win_amd64 wheel (the npm
      # package's is the DirectML build, which needs DirectML.dll and
      # Direct3D 12).
      VR_PLATFORM=windows-x64 VR_ORT_LIB=onnxruntime.dll
      VR_ORT_ARCHIVE=onnxruntime-win-x64-$v.zip VR_ORT_MEMBER=onnxruntime-win-x64-$v/lib/onnxruntime.dll ;;
    Darwin/x86_64)
      echo "setup: macOS on Intel (Darwin x86_64) has no ONNX Runtime $v build (Microsoft stopped shipping macOS x86_64 binaries at 1.24, and onnxruntime-node has none): set ONNXRUNTIME_LIB to a libonnxruntime.dylib $v you built, or use an Apple silicon Mac or Linux" >&2
      return 1 ;;
    *)
      echo "setup: no ONNX Runtime builds for $os $arch (supported: Linux x86_64 and aarch64, macOS arm64, Windows x86_64)" >&2
      return 1 ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  vr_platform "${1:-$(uname -s)}" "${2:-$(uname -m)}"
  for k in VR_PLATFORM VR_ORT_LIB VR_ORT_ARCHIVE VR_ORT_MEMBER VR_ORT_NPM; do
    printf '%s=%s\n' "$k" "${!k}"
  done
fi
