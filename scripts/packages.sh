#!/usr/bin/env bash
# packages.sh makes the npm packages and PyPI wheels from the release folders
# scripts/dist.sh staged, and the MCP Registry listing when the bundle is
# there too (packaging/build.py does the work):
#
#   scripts/packages.sh [PLATFORM...]    (default: every platform staged in dist/stage/)
#
#   dist/npm/vault-rag-SEMVER.tgz                     the launcher
#   dist/npm/vault-rag-{linux-x64,...}-SEMVER.tgz     one per platform
#   dist/pypi/vault_rag-PEP440-py3-none-TAG.whl       one per platform
#   dist/server.json                                  with dist/vault-rag-VERSION.mcpb
#
# Each from dist/stage/PLATFORM/vault-rag/, the very folder the archive was
# made of. The wheels are checked with twine, server.json with the registry's
# own validation (scripts/registry-validate.sh), and the three against each
# other (the registry's ownership marks: mcpName in the npm launcher,
# mcp-name in the wheels' description; the bundle's sha256).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-$PWD/data}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
STAGE=${STAGE:-dist/stage}
log() { printf 'packages: %s\n' "$*"; }
. scripts/version.sh
vr_versions "$VERSION"

if [ $# -eq 0 ]; then
  for p in linux-x64 linux-arm64 macos-arm64 windows-x64; do
    [ -d "$STAGE/$p/vault-rag" ] && set -- "$@" "$p"
  done
  [ $# -gt 0 ] || { echo "packages: nothing staged in $STAGE/ (make dist or make release first)" >&2; exit 1; }
fi

tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
go build -o "$tools/binchk" ./scripts/binchk

rm -rf dist/npm dist/pypi dist/server.json
python3 packaging/build.py npm --stage "$STAGE" --out dist/npm --version "$VR_SEMVER" --binchk "$tools/binchk" "$@"
python3 packaging/build.py wheels --stage "$STAGE" --out dist/pypi --version "$VR_PEP440" --binchk "$tools/binchk" "$@"
"$(bash scripts/pkg-tools.sh python)/bin/twine" check --strict dist/pypi/*.whl

mcpb=dist/vault-rag-$VERSION.mcpb
if [ -f "$mcpb" ]; then
  python3 packaging/build.py server-json --out dist/server.json --semver "$VR_SEMVER" --pep440 "$VR_PEP440" --tag "$VERSION" --mcpb "$mcpb"
  DATA=$DATA bash scripts/registry-validate.sh dist/server.json
  python3 packaging/build.py check-listing --server-json dist/server.json --npm dist/npm --pypi dist/pypi --mcpb "$mcpb"
else
  log "no $mcpb (make mcpb): no server.json"
fi
log "platforms: $*; npm $VR_SEMVER, PyPI $VR_PEP440"
