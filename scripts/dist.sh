#!/usr/bin/env bash
# dist.sh builds the release archive for linux-x64,
# dist/vault-rag-VERSION-linux-x64.tar.gz, which runs where it is extracted
# with nothing else installed (no Go, cargo, npm or Maven):
#
#   vault-rag/bin/vault-rag                the binary
#   vault-rag/data/lib/libonnxruntime.so   ONNX Runtime, loaded at run time
#   vault-rag/configs/                     the configurations search and serve read
#   vault-rag/README.md, vault-rag/LICENSE
#
# The binary finds data/ and configs/ beside its bin/ (models.FindDataDir,
# configRoot), from any working folder. No model is in the archive: the
# first reindex (or serve) fetches the embedder its vault needs from Maven
# Central over HTTPS into vault-rag/data/models/, once, and each vault's
# index goes to vault-rag/data/indexes/ unless DB_PATH says otherwise.
#
# VERSION defaults to `git describe --tags --always --dirty`. Other
# platforms are refused in one line: only linux-x64 is built and tested.
set -euo pipefail
cd "$(dirname "$0")/.."

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64|Linux/amd64) ;;
  *) echo "dist: only linux-x64 is built and tested; this machine is $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac

DATA=${DATA:-$PWD/data}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
NAME=vault-rag-$VERSION-linux-x64
OUT=dist/$NAME.tar.gz
log() { printf 'dist: %s\n' "$*"; }

for f in "$DATA/lib/libonnxruntime.so" LICENSE README.md configs/shipping.yaml; do
  [ -e "$f" ] || { echo "dist: $f is missing (run \`make setup\` first; LICENSE and README.md come with the checkout)" >&2; exit 1; }
done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top=$stage/vault-rag
mkdir -p "$top/bin" "$top/data/lib"

# The flags of `make build` but -s -w, which drops the symbol tables a user
# never reads and only changes the link: every package comes from the build
# cache `make build` filled (-trimpath would rebuild all of them, sqlite's C
# included: six minutes on two cores). Go stamps the module's VCS version,
# which /health and the MCP handshake report.
CGO_ENABLED=1 CGO_LDFLAGS="-L$DATA/lib ${CGO_LDFLAGS:-}" \
  go build -tags=sqlite_fts5 -ldflags='-s -w' -o "$top/bin/vault-rag" ./cmd/vault-rag

# The binary may need only what every glibc system has: a library outside
# this list would have to be installed by the user. libstdc++ is among them:
# ONNX Runtime's own library needs it whatever the binary does.
allowed='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libgcc_s\.so\.1|libstdc\+\+\.so\.6|/lib64/ld-linux-x86-64\.so\.2|ld-linux-x86-64\.so\.2)$'
extra=$(ldd "$top/bin/vault-rag" | awk '{print $1}' | grep -Ev "$allowed" || true)
if [ -n "$extra" ]; then
  echo "dist: the binary links libraries a bare glibc system may lack: $(echo $extra)" >&2
  exit 1
fi

cp "$DATA/lib/libonnxruntime.so" "$top/data/lib/"
cp -r configs "$top/configs"
cp README.md LICENSE "$top/"

mkdir -p dist
# Sorted, owned by root and dated by the commit, so the same commit gives the
# same listing wherever it is built.
mtime=$(git log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
  -C "$stage" -czf "$OUT.tmp" vault-rag
mv "$OUT.tmp" "$OUT"
glibc=$(objdump -T "$top/bin/vault-rag" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1 || true)
log "$OUT ($(du -h "$OUT" | cut -f1), $(tar -tzf "$OUT" | wc -l) entries; the binary needs ${glibc:-glibc} or later)"
