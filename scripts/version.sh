#!/usr/bin/env bash
# version.sh turns a release VERSION (`git describe --tags --always --dirty`,
# e.g. v1.2.3, or 23ab166-dirty between tags) into the version each package
# format demands. Sourced, it defines vr_versions VERSION, which sets
#
#   VR_SEMVER   npm and the MCP bundle: v1.2.3 -> 1.2.3, v1.2.3-rc.1 -> 1.2.3-rc.1,
#               anything else 0.0.0-dev.gCOMMIT (a pre-release, each part
#               alphanumeric so none is a number with a leading zero)
#   VR_PEP440   PyPI: v1.2.3 -> 1.2.3; anything else X.Y.Z.dev0+LOCAL (a
#               development release with a local label, which local indexes
#               take and pypi.org refuses: publish tagged versions only)
#
# Run, it prints both for VERSION (default: this checkout's).

vr_versions() {
  local v=$1 local
  if [[ $v =~ ^v?([0-9]+\.[0-9]+\.[0-9]+)$ ]]; then
    VR_SEMVER=${BASH_REMATCH[1]} VR_PEP440=${BASH_REMATCH[1]}
    return 0
  fi
  if [[ $v =~ ^v?([0-9]+\.[0-9]+\.[0-9]+)[-+]([0-9A-Za-z.-]+)$ ]]; then
    VR_SEMVER=${BASH_REMATCH[1]}-${BASH_REMATCH[2]}
    local=${BASH_REMATCH[2]}
    VR_PEP440=${BASH_REMATCH[1]}.dev0+$(tr -c '0-9A-Za-z\n' '.' <<<"$local")
    return 0
  fi
  local=g$(tr -c '0-9A-Za-z\n' '.' <<<"$v")
  VR_SEMVER=0.0.0-dev.$local
  VR_PEP440=0.0.0.dev0+$local
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  vr_versions "${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
  printf 'VR_SEMVER=%s\nVR_PEP440=%s\n' "$VR_SEMVER" "$VR_PEP440"
fi
