#!/usr/bin/env bash
# package-test.sh installs vault-rag as users of npx and uvx do, from local
# registries, and runs it (make package-test; the packages come from
# scripts/packages.sh, run first):
#
#   1. unit tests: the npm launcher (node --test) and the wheel builder and
#      Python launcher (unittest), no network;
#   2. publish dist/npm/*.tgz to a throwaway verdaccio and dist/pypi/*.whl to
#      a throwaway pypiserver (twine upload), both on loopback, pinned
#      (scripts/pkg-tools.sh);
#   3. from an empty HOME, npm cache and uv cache:
#        npx -y vault-rag@SEMVER --version and uvx vault-rag@PEP440 --version;
#        `connect cursor --json` through each, then an MCP session (the
#        official TypeScript SDK, e2e/package-launch.mjs) started from exactly
#        the entry connect wrote, which must search the demo vault;
#   4. platform choice: `npm install --os=darwin --cpu=arm64` and
#      `--os=win32 --cpu=x64` install the right platform package, holding a
#      Mach-O or PE binary with its ONNX Runtime beside it (scripts/binchk);
#      `pip download --platform TAG --only-binary=:all:` picks the wheel of
#      each platform, and refuses one whose OS is older than the tag's floor;
#      without its optional dependency the launcher says what to do;
#   5. Windows under wine (when scripts/wine/setup.sh has set it up): the
#      win_amd64 wheel unpacked, its binary run from the package folder, ONNX
#      Runtime found beside it: reindex and search the demo vault.
#
# The embedder is seeded into each empty HOME's data folder from data/models
# (a fetch on first use is what scripts/dist-test.sh checks). The last line is
# "package-test: N passed, M failed"; exit 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DATA=${DATA:-$PWD/data}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
. scripts/version.sh
vr_versions "$VERSION"
started=$SECONDS
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
notok() { failed=$((failed + 1)); echo "not ok - $*"; }
# check NAME COMMAND...: ok when COMMAND succeeds.
check() { local name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }
finish() {
  echo "package-test: took $((SECONDS - started)) s"
  echo "package-test: $passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
}
die() { notok "$*"; finish; }

ls dist/npm/*.tgz dist/pypi/*.whl >/dev/null 2>&1 || die "no dist/npm/*.tgz or dist/pypi/*.whl: run scripts/packages.sh (make packages) first"
launcher_tgz=dist/npm/vault-rag-$VR_SEMVER.tgz
[ -f "$launcher_tgz" ] || die "no $launcher_tgz: the packages in dist/ are of another version than $VERSION (make packages)"
[ -d e2e/node_modules/@modelcontextprotocol/sdk ] || (cd e2e && npm ci --no-audit --no-fund >/dev/null) || die "npm ci in e2e/"
VERDACCIO=$(bash scripts/pkg-tools.sh verdaccio) || die "installing verdaccio"
PY=$(bash scripts/pkg-tools.sh python) || die "installing uv, pypiserver and twine"
BINCHK_DIR=$(mktemp -d)
go build -o "$BINCHK_DIR/binchk" ./scripts/binchk || die "building scripts/binchk"
BINCHK=$BINCHK_DIR/binchk

WORK=$(mktemp -d /tmp/vault-rag-package-test.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$WORK" "$BINCHK_DIR"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() { # URL PID: until URL answers, or the server died, or 60 s
  local i
  for i in $(seq 1 600); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

echo "# 1. unit tests"
# unit NAME COMMAND...: COMMAND's output is shown only when it fails.
unit() {
  local name=$1; shift
  if "$@" >"$WORK/unit.log" 2>&1; then
    ok "$name: $(grep -E '^# pass|^Ran ' "$WORK/unit.log" | head -1)"
  else
    notok "$name"; tail -40 "$WORK/unit.log" | sed 's/^/    /'
  fi
}
unit "the npm launcher's unit tests (node --test packaging/npm/test)" node --test packaging/npm/test/
unit "the wheel builder's and Python launcher's unit tests (unittest)" python3 -m unittest discover -s packaging/pypi/tests

echo "# 2. local registries"
NPM_PORT=$(free_port)
NPM_URL=http://127.0.0.1:$NPM_PORT/
mkdir -p "$WORK/verdaccio"
cat >"$WORK/verdaccio/config.yaml" <<EOF
storage: $WORK/verdaccio/storage
max_body_size: 200mb
auth:
  htpasswd:
    file: $WORK/verdaccio/htpasswd
    max_users: 10
# No uplinks: only what is published here can be installed, so a package
# that needed anything from the public registry would fail to install.
packages:
  '**':
    access: \$all
    publish: \$authenticated
log: {type: stdout, format: pretty, level: warn}
EOF
"$VERDACCIO" --config "$WORK/verdaccio/config.yaml" --listen "127.0.0.1:$NPM_PORT" >"$WORK/verdaccio.log" 2>&1 &
pids+=($!)
wait_http "${NPM_URL}-/ping" "${pids[-1]}" || die "verdaccio did not start: $(tail -20 "$WORK/verdaccio.log")"
token=$(curl -fsS -X PUT -H 'content-type: application/json' \
  -d '{"name":"ci","password":"ci-password"}' "${NPM_URL}-/user/org.couchdb.user:ci" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])') || die "adding a verdaccio user"
PUBLISH_RC=$WORK/publish.npmrc
printf '//127.0.0.1:%s/:_authToken=%s\n' "$NPM_PORT" "$token" >"$PUBLISH_RC"
for tgz in dist/npm/*.tgz; do
  [ "$tgz" = "$launcher_tgz" ] && continue
  npm publish --userconfig "$PUBLISH_RC" --registry "$NPM_URL" --tag latest "$tgz" >"$WORK/publish.log" 2>&1 ||
    die "npm publish $tgz: $(tail -5 "$WORK/publish.log")"
done
npm publish --userconfig "$PUBLISH_RC" --registry "$NPM_URL" --tag latest "$launcher_tgz" >"$WORK/publish.log" 2>&1 ||
  die "npm publish $launcher_tgz: $(tail -5 "$WORK/publish.log")"
ok "published $(ls dist/npm/*.tgz | wc -l) npm packages to verdaccio at $NPM_URL"

PYPI_PORT=$(free_port)
PYPI_URL=http://127.0.0.1:$PYPI_PORT
mkdir -p "$WORK/pypi"
"$PY/bin/pypi-server" run -i 127.0.0.1 -p "$PYPI_PORT" -a . -P . "$WORK/pypi" >"$WORK/pypiserver.log" 2>&1 &
pids+=($!)
wait_http "$PYPI_URL/simple/" "${pids[-1]}" || die "pypiserver did not start: $(tail -20 "$WORK/pypiserver.log")"
"$PY/bin/twine" upload --disable-progress-bar --non-interactive --repository-url "$PYPI_URL/" -u ci -p ci dist/pypi/*.whl >"$WORK/twine.log" 2>&1 ||
  die "twine upload: $(tail -5 "$WORK/twine.log")"
ok "uploaded $(ls dist/pypi/*.whl | wc -l) wheels to pypiserver at $PYPI_URL with twine"

# A user's machine: an empty HOME, npm cache and uv cache; the registries
# are the local ones; the embedder is seeded into the per-user data folder.
user() { # NAME: sets HOME and the caches for a fresh user
  export HOME=$WORK/$1
  mkdir -p "$HOME/.local/share/vault-rag/models"
  cp -r "$DATA/models/bge-small-en-v1.5-q" "$HOME/.local/share/vault-rag/models/"
  unset VAULT_RAG_DATA VAULT_PATH DB_PATH ONNXRUNTIME_LIB VAULT_RAG_ROOT XDG_DATA_HOME XDG_CONFIG_HOME
  export npm_config_cache=$HOME/.npm npm_config_userconfig=$HOME/.npmrc npm_config_registry=$NPM_URL
  export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
  export UV_CACHE_DIR=$HOME/.cache/uv UV_INDEX_URL=$PYPI_URL/simple/ UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1
  export UV_TOOL_DIR=$HOME/.local/share/uv/tools
}
cp -r vault "$WORK/vault"
UVX=$PY/bin/uvx
# The registries' settings, which a client's environment would need too.
REG_ENV=(--env "npm_config_registry=$NPM_URL" --env "npm_config_cache=$WORK/npx-user/.npm"
  --env "UV_INDEX_URL=$PYPI_URL/simple/" --env "UV_CACHE_DIR=$WORK/uvx-user/.cache/uv" --env UV_PYTHON_DOWNLOADS=never)

# session NAME: an MCP session started from the entry `connect` wrote through
# NAME (npx or uvx), as a desktop client would start it.
session() {
  if node e2e/package-launch.mjs --entry "$WORK/$1-entry.json" --name "$1" --home "$HOME" "${REG_ENV[@]}" >"$WORK/$1-session.log" 2>&1; then
    ok "an MCP session through the $1 entry connect wrote: $(grep -c '^ok' "$WORK/$1-session.log") checks"
  else
    notok "an MCP session through the $1 entry connect wrote:"; sed 's/^/    /' "$WORK/$1-session.log" | tail -30
  fi
  grep '^#' "$WORK/$1-session.log" | sed 's/^/  /' | grep -v 'env:'
}

echo "# 3. npx"
user npx-user
t0=$SECONDS
out=$(cd "$HOME" && npx -y "vault-rag@$VR_SEMVER" --version 2>&1)
check "npx -y vault-rag@$VR_SEMVER --version from an empty cache ($((SECONDS - t0)) s): $out" \
  grep -q "vault-rag $VERSION (npm package vault-rag@$VR_SEMVER, run by npx) linux/amd64" <<<"$out"
platform_dir=$(ls -d "$HOME"/.npm/_npx/*/node_modules/@vault-rag/linux-x64 2>/dev/null | head -1)
check "npx installed only the linux-x64 platform package" \
  test -n "$platform_dir" -a -z "$(ls -d "$HOME"/.npm/_npx/*/node_modules/@vault-rag/{darwin-arm64,win32-x64,linux-arm64} 2>/dev/null)"
check "npx: the platform package's binary is executable and its ONNX Runtime beside it" \
  test -x "$platform_dir/bin/vault-rag" -a -f "$platform_dir/lib/libonnxruntime.so"
(cd "$HOME" && npx -y "vault-rag@$VR_SEMVER" connect cursor --json --vault "$WORK/vault") >"$WORK/npx-entry.json" 2>"$WORK/npx-connect.err"
check "npx vault-rag connect cursor --json names npx by its absolute path, with the exact version" python3 - "$WORK/npx-entry.json" "$VR_SEMVER" <<'PY'
import json, os, sys
e = json.load(open(sys.argv[1]))["mcpServers"]["vault-rag"]
ok = os.path.isabs(e["command"]) and os.path.basename(e["command"]) == "npx" and e["args"] == ["-y", "vault-rag@" + sys.argv[2], "serve", "--transport", "stdio"]
print("  entry:", json.dumps(e)); sys.exit(0 if ok else 1)
PY
session npx

echo "# 3. uvx"
user uvx-user
t0=$SECONDS
out=$(cd "$HOME" && "$UVX" "vault-rag@$VR_PEP440" --version 2>&1)
check "uvx vault-rag@$VR_PEP440 --version from an empty cache ($((SECONDS - t0)) s): $(tail -1 <<<"$out")" \
  grep -q "vault-rag $VERSION (PyPI package vault-rag@$VR_PEP440, run by uvx) linux/amd64" <<<"$out"
(cd "$HOME" && "$UVX" "vault-rag@$VR_PEP440" connect cursor --json --vault "$WORK/vault") >"$WORK/uvx-entry.json" 2>"$WORK/uvx-connect.err"
check "uvx vault-rag connect cursor --json names uvx by its absolute path, with the exact version" python3 - "$WORK/uvx-entry.json" "$VR_PEP440" "$UVX" <<'PY'
import json, os, sys
e = json.load(open(sys.argv[1]))["mcpServers"]["vault-rag"]
ok = os.path.realpath(e["command"]) == os.path.realpath(sys.argv[3]) and e["args"] == ["vault-rag@" + sys.argv[2], "serve", "--transport", "stdio"]
print("  entry:", json.dumps(e)); sys.exit(0 if ok else 1)
PY
session uvx
pyexe=$(ls "$UV_CACHE_DIR"/archive-v*/*/lib/python3*/site-packages/vault_rag/bin/vault-rag 2>/dev/null | head -1)
check "uvx: the binary stays in the package folder, ONNX Runtime beside it (not in a scripts folder)" \
  test -x "$pyexe" -a -f "$(dirname "$pyexe")/../lib/libonnxruntime.so"

echo "# 4. platform choice"
user choice-user
for spec in darwin:arm64:darwin-arm64:macos-arm64:libonnxruntime.dylib:vault-rag win32:x64:win32-x64:windows-x64:onnxruntime.dll:vault-rag.exe; do
  IFS=: read -r os cpu pkg platform lib exe <<<"$spec"
  [ -f "dist/npm/vault-rag-$pkg-$VR_SEMVER.tgz" ] || { notok "no npm package for $pkg was built (stage $platform: make package-test does)"; continue; }
  dir=$WORK/install-$pkg
  mkdir -p "$dir"
  if npm install --prefix "$dir" --os="$os" --cpu="$cpu" --no-package-lock "vault-rag@$VR_SEMVER" >"$WORK/install-$pkg.log" 2>&1; then
    got=$(ls "$dir/node_modules/@vault-rag/")
    check "npm install --os=$os --cpu=$cpu installs @vault-rag/$pkg alone (got: $(echo $got))" test "$got" = "$pkg"
    bin=$dir/node_modules/@vault-rag/$pkg/bin/$exe
    check "@vault-rag/$pkg: $("$BINCHK" "$platform" "$bin" 2>&1 | cut -c1-140)" "$BINCHK" "$platform" "$bin"
    with=$(cd "$(dirname "$bin")" && ls *.dll 2>/dev/null | tr '\n' ',' || true)
    check "@vault-rag/$pkg: ONNX Runtime beside the binary ($lib)" "$BINCHK" -lib -with "$with" "$platform" "$(dirname "$bin")/../lib/$lib"
  else
    notok "npm install --os=$os --cpu=$cpu vault-rag@$VR_SEMVER: $(tail -5 "$WORK/install-$pkg.log")"
  fi
done
dir=$WORK/install-omitted
mkdir -p "$dir"
npm install --prefix "$dir" --omit=optional --no-package-lock "vault-rag@$VR_SEMVER" >/dev/null 2>&1
out=$("$dir/node_modules/.bin/vault-rag" --version 2>&1); rc=$?
check "without its optional dependency the launcher exits 1 naming the platform and the fix" \
  test "$rc" = 1 -a -n "$(grep -F 'linux x64' <<<"$out" | head -1)" -a -n "$(grep -F 'npm install --include=optional' <<<"$out")"
echo "$out" | head -2 | sed 's/^/  /'

floor=$(ls dist/pypi/*manylinux_*_x86_64.whl | sed -E 's/.*manylinux_([0-9]+)_([0-9]+)_x86_64.whl/\1 \2/')
read -r major minor <<<"$floor"
for tag in "manylinux_${major}_${minor}_x86_64" macosx_14_0_arm64 macosx_15_0_arm64 win_amd64; do
  dl=$WORK/dl-$tag
  if "$PY/bin/python" -m pip download --disable-pip-version-check --quiet --no-deps --only-binary=:all: --platform "$tag" \
      --python-version 3.12 --index-url "$PYPI_URL/simple/" -d "$dl" "vault-rag==$VR_PEP440" >"$WORK/dl.log" 2>&1; then
    got=$(ls "$dl")
    case $tag in macosx_15*) want=macosx_14_0_arm64 ;; *) want=$tag ;; esac
    check "pip download --platform $tag picks $got" grep -q "py3-none-$want.whl" <<<"$got"
  else
    notok "pip download --platform $tag: $(tail -3 "$WORK/dl.log")"
  fi
done
for tag in "manylinux_${major}_$((minor - 1))_x86_64" macosx_13_0_arm64; do
  check "pip download --platform $tag finds no wheel (older than the binaries' floor)" \
    bash -c '! "$0" -m pip download --disable-pip-version-check --quiet --no-deps --only-binary=:all: --platform "$1" --python-version 3.12 --index-url "$2" -d "$3" "vault-rag==$4" >/dev/null 2>&1' \
    "$PY/bin/python" "$tag" "$PYPI_URL/simple/" "$WORK/dl-none" "$VR_PEP440"
done

echo "# 5. Windows under wine: the win_amd64 wheel's binary from its package folder"
. scripts/wine/env.sh
if [ ! -x "$WINE" ] || [ ! -d "$WINEPREFIX" ]; then
  notok "wine is not set up ($WINE, $WINEPREFIX): make wine-setup"
else
  whl=$(ls dist/pypi/*win_amd64.whl)
  mkdir -p "$WORK/win/data"
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$WORK/win/site"
  exe=$WORK/win/site/vault_rag/bin/vault-rag.exe
  ln -s "$DATA/models" "$WORK/win/data/models"
  out=$(VAULT_RAG_DATA=$(winpath "$WORK/win/data") wine_run 120 "$exe" --version 2>&1 | tr -d '\r')
  check "wine: the wheel's vault-rag.exe --version: $out" grep -q "vault-rag $VERSION windows/amd64" <<<"$out"
  (
    export VAULT_PATH=$(winpath "$WORK/vault") VAULT_RAG_DATA=$(winpath "$WORK/win/data") VAULT_RAG_EMBEDDER=bge-small-en-v1.5-q
    unset ONNXRUNTIME_LIB DB_PATH
    wine_run 600 "$exe" reindex --json >"$WORK/win/reindex.json" 2>"$WORK/win/reindex.err" &&
      wine_run 300 "$exe" search "why did writes get slow in the middle of the night" >"$WORK/win/search.out" 2>"$WORK/win/search.err"
  )
  notes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["notes"])' "$WORK/win/reindex.json" 2>/dev/null)
  check "wine: reindex ($notes notes) and search the demo vault with ONNX Runtime from the wheel's lib/" \
    grep -q '\.md' "$WORK/win/search.out"
  [ -s "$WORK/win/search.out" ] || tail -5 "$WORK/win/reindex.err" "$WORK/win/search.err" 2>/dev/null | sed 's/^/    /'
  "$WINESERVER" -k >/dev/null 2>&1 || true
fi

echo "# sizes"
for f in dist/npm/*.tgz dist/pypi/*.whl; do printf '  %-72s %6.1f MB\n' "$(basename "$f")" "$(stat -c %s "$f" | awk '{print $1/1e6}')"; done
finish
