#!/usr/bin/env bash
# registry-validate.sh FILE... checks server.json files with the MCP
# Registry's own validation, offline.
#
# The registry's publisher CLI (`mcp-publisher validate`) sends the file to
# the registry's /v0/validate endpoint, which this machine cannot reach. That
# endpoint runs validators.ValidateServerJSON, an internal package of the
# registry's Go module (github.com/modelcontextprotocol/registry, pinned
# below), with the JSON schemas embedded beside it. So the module is fetched
# from the Go module proxy, copied under data/tools/, and a small main
# (scripts/registry-validate/main.go) is built inside that copy, where
# the internal package may be imported. Built once; it exits 1 on an error.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-$PWD/data}
REGISTRY_VERSION=v1.8.9
dir=$DATA/tools/mcp-registry-$REGISTRY_VERSION
bin=$dir/vault-rag-registry-validate
main=scripts/registry-validate/main.go
[ $# -gt 0 ] || { echo "usage: scripts/registry-validate.sh server.json..." >&2; exit 2; }

if [ ! -x "$bin" ] || ! cmp -s "$main" "$dir/src/cmd/vault-rag-registry-validate/main.go"; then
  echo "registry-validate: building the MCP Registry's validator ($REGISTRY_VERSION) into $dir" >&2
  src=$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "github.com/modelcontextprotocol/registry@$REGISTRY_VERSION" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  rm -rf "$dir"
  mkdir -p "$dir"
  cp -r "$src" "$dir/src"
  chmod -R u+w "$dir/src"
  mkdir -p "$dir/src/cmd/vault-rag-registry-validate"
  cp "$main" "$dir/src/cmd/vault-rag-registry-validate/main.go"
  (cd "$dir/src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -o "$bin.tmp" ./cmd/vault-rag-registry-validate/main.go)
  mv "$bin.tmp" "$bin"
fi
exec "$bin" "$@"
