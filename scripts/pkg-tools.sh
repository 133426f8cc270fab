#!/usr/bin/env bash
# pkg-tools.sh installs the tools that test the npm and PyPI packages, pinned,
# under data/tools/, each the first time it is asked for, and prints the path
# of the one named:
#
#   scripts/pkg-tools.sh verdaccio   a local npm registry (npm verdaccio)
#   scripts/pkg-tools.sh python      a Python with uv/uvx, pypiserver and twine
#                                    (PyPI), whose bin/ holds them
#
# Nothing here is needed to build the packages: only to publish them to
# throwaway local registries and install them from there as a user would
# (scripts/package-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-$PWD/data}

# 6.8.0: the newest verdaccio that runs on Node 20 (6.10 wants Node 22).
VERDACCIO_VERSION=6.8.0
UV_VERSION=0.13.8
PYPISERVER_VERSION=2.4.2
TWINE_VERSION=7.0.0

case "${1:-}" in
  verdaccio)
    dir=$DATA/tools/verdaccio-$VERDACCIO_VERSION
    bin=$dir/node_modules/.bin/verdaccio
    if [ ! -x "$bin" ]; then
      echo "pkg-tools: installing verdaccio $VERDACCIO_VERSION into $dir" >&2
      rm -rf "$dir.tmp"
      mkdir -p "$dir.tmp"
      npm install --prefix "$dir.tmp" --no-audit --no-fund --loglevel=error --save-exact \
        "verdaccio@$VERDACCIO_VERSION" >&2
      rm -rf "$dir"
      mv "$dir.tmp" "$dir"
    fi
    echo "$bin" ;;
  python)
    dir=$DATA/tools/pkgpy-uv$UV_VERSION-pypiserver$PYPISERVER_VERSION-twine$TWINE_VERSION
    if [ ! -x "$dir/bin/uvx" ] || [ ! -x "$dir/bin/twine" ] || [ ! -x "$dir/bin/pypi-server" ]; then
      echo "pkg-tools: installing uv $UV_VERSION, pypiserver $PYPISERVER_VERSION and twine $TWINE_VERSION into $dir" >&2
      rm -rf "$dir"
      python3 -m venv "$dir" >&2
      "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
        "uv==$UV_VERSION" "pypiserver==$PYPISERVER_VERSION" "twine==$TWINE_VERSION" >&2
    fi
    echo "$dir" ;;
  *)
    echo "usage: scripts/pkg-tools.sh verdaccio|python" >&2
    exit 2 ;;
esac
