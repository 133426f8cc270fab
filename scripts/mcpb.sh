#!/usr/bin/env bash
# mcpb.sh packs Claude Desktop's one-click bundle, dist/vault-rag-VERSION.mcpb,
# from mcpb/manifest.json and the release staging folders:
#
#   dist/stage/macos-arm64/vault-rag/   -> server/macos-arm64/  (platform darwin)
#   dist/stage/windows-x64/vault-rag/   -> server/windows-x64/  (platform win32)
#   dist/stage/linux-x64/vault-rag/     -> server/linux-x64/    (platform linux)
#
# each laid out as its release archive: bin/vault-rag[.exe], lib/ (ONNX
# Runtime), configs/, README.md, LICENSE. A platform whose staging folder is
# missing is left out of the bundle (its platform_overrides entry and its
# compatibility.platforms name), and the script says which went in. When no
# staging folder exists at all, a linux-x64 one is made here from
# `make build`'s bin/vault-rag and data/lib/, for a bundle to test with.
#
# No model is in the bundle: the server fetches its embedder on first use
# into the per-user data folder, where the index goes too, so an update,
# which replaces the bundle's folder, keeps both.
#
# The official CLI (@anthropic-ai/mcpb, MCPB=path) validates the manifest,
# packs the folder and prints what it packed.
#
#   VERSION=1.2.3 MCPB=data/tools/mcpb-2.1.2/node_modules/.bin/mcpb scripts/mcpb.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-$PWD/data}
MCPB=${MCPB:?MCPB names the mcpb CLI (make mcpb installs it)}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
STAGE=${STAGE:-dist/stage}
log() { printf 'mcpb: %s\n' "$*"; }
fail() { printf 'mcpb: %s\n' "$*" >&2; exit 1; }

# The manifest's version must be semantic: a tag v1.2.3 gives 1.2.3, anything
# else (a commit) 0.0.0-dev.gCOMMIT (scripts/version.sh, as the npm packages).
. scripts/version.sh
vr_versions "$VERSION"
semver=$VR_SEMVER

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bundle=$work/bundle
mkdir -p "$bundle/server"

declare -A platform=([macos-arm64]=darwin [windows-x64]=win32 [linux-x64]=linux)
declare -A exe=([macos-arm64]=bin/vault-rag [windows-x64]=bin/vault-rag.exe [linux-x64]=bin/vault-rag)
declare -A lib=([macos-arm64]=lib/libonnxruntime.dylib [windows-x64]=lib/onnxruntime.dll [linux-x64]=lib/libonnxruntime.so)

found=0
for p in macos-arm64 windows-x64 linux-x64; do
  [ -d "$STAGE/$p/vault-rag" ] && found=1
done
if [ $found = 0 ]; then
  log "no staging folder under $STAGE/ (make release makes them): staging linux-x64 from bin/vault-rag and $DATA/lib"
  for f in bin/vault-rag "$DATA/lib/libonnxruntime.so" configs/shipping.yaml README.md LICENSE; do
    [ -e "$f" ] || fail "$f is missing (run \`make build\` first)"
  done
  STAGE=$work/stage
  top=$STAGE/linux-x64/vault-rag
  mkdir -p "$top/bin" "$top/lib"
  cp bin/vault-rag "$top/bin/"
  cp "$DATA/lib/libonnxruntime.so" "$top/lib/"
  cp -r configs "$top/"
  cp README.md LICENSE "$top/"
fi

platforms=()
for p in macos-arm64 windows-x64 linux-x64; do
  src=$STAGE/$p/vault-rag
  [ -d "$src" ] || { log "left out: ${platform[$p]} ($p): no $src"; continue; }
  for f in "${exe[$p]}" "${lib[$p]}" configs/shipping.yaml; do
    [ -e "$src/$f" ] || fail "$src/$f is missing: the staging folder of $p is incomplete"
  done
  cp -r "$src" "$bundle/server/$p"
  platforms+=("$p")
  log "in: ${platform[$p]} ($p) from $src"
done
cp LICENSE "$bundle/"

# The manifest, for the platforms that went in.
node - "$bundle/manifest.json" "$semver" "${platforms[@]}" <<'JS'
const fs = require("fs");
const [out, version, ...dirs] = process.argv.slice(2);
const m = JSON.parse(fs.readFileSync("mcpb/manifest.json", "utf8"));
const names = { "macos-arm64": "darwin", "windows-x64": "win32", "linux-x64": "linux" };
const keep = new Set(dirs.map((d) => names[d]));
m.version = version;
const cfg = m.server.mcp_config;
for (const p of Object.keys(cfg.platform_overrides)) if (!keep.has(p)) delete cfg.platform_overrides[p];
m.compatibility.platforms = m.compatibility.platforms.filter((p) => keep.has(p));
// The default command is the first platform's that went in (linux-x64 when
// present): every platform has its own override anyway.
const first = dirs.includes("linux-x64") ? "linux" : names[dirs[0]];
cfg.command = cfg.platform_overrides[first].command;
m.server.entry_point = cfg.command.replace("${__dirname}/", "");
fs.writeFileSync(out, JSON.stringify(m, null, 2) + "\n");
JS

"$MCPB" validate "$bundle/manifest.json"
mkdir -p dist
out=dist/vault-rag-$VERSION.mcpb
rm -f "$out"
"$MCPB" pack "$bundle" "$out"
"$MCPB" info "$out"
names=()
for p in "${platforms[@]}"; do names+=("${platform[$p]} ($p)"); done
log "wrote $out ($(du -h "$out" | cut -f1)), platforms: $(IFS=,; echo "${names[*]}" | sed 's/,/, /g')"
