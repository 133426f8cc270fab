#!/usr/bin/env python3
"""build.py makes the npm packages, the PyPI wheels and the MCP Registry's
server.json from the release folders scripts/dist.sh stages in
dist/stage/PLATFORM/vault-rag/ (bin/, lib/, configs/, README.md, LICENSE),
so every package carries the same binaries as the archives:

  build.py npm    --stage dist/stage --out dist/npm  --version SEMVER --binchk BINCHK PLATFORM...
  build.py wheels --stage dist/stage --out dist/pypi --version PEP440 --binchk BINCHK PLATFORM...
  build.py server-json --out dist/server.json --semver SEMVER --pep440 PEP440 --tag TAG --mcpb FILE
  build.py check-listing --server-json dist/server.json --npm dist/npm --pypi dist/pypi --mcpb FILE

npm: one package per platform, the staged folder with `os`, `cpu` and, on
Linux, `libc` fields, packed by `npm pack` (which keeps the binary's
executable bit); and the launcher package `vault-rag` (packaging/npm/vault-rag)
with each of them as an exact-pinned optional dependency.

PyPI: one wheel per platform, written here with zipfile: vault_rag/ holds the
launcher (packaging/pypi/vault_rag), bin/ and lib/ and configs/; the console
command `vault-rag` runs vault_rag:main. The platform tag comes from the
binaries themselves (scripts/binchk -floor): manylinux_X_Y with the newest
glibc symbol version the binary or ONNX Runtime needs, macosx_X_Y with the
newer of their minimum macOS releases, win_amd64.

The package names and the server's name are those of packaging/server.json
(placeholders until someone publishes them: docs/packaging.md). A platform
package is named after the launcher: @vault-rag/linux-x64 for vault-rag,
@me/vault-rag-linux-x64 for @me/vault-rag.
"""

import argparse
import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(HERE, "server.json")

# PLATFORMS: the release platforms (scripts/dist.sh's names) and what each
# package format calls them.
PLATFORMS = {
    "linux-x64": {"os": "linux", "cpu": "x64", "libc": "glibc", "exe": "vault-rag", "wheel": "manylinux_{floor}_x86_64", "title": "Linux x64 (glibc)"},
    "linux-arm64": {"os": "linux", "cpu": "arm64", "libc": "glibc", "exe": "vault-rag", "wheel": "manylinux_{floor}_aarch64", "title": "Linux arm64 (glibc)"},
    "macos-arm64": {"os": "darwin", "cpu": "arm64", "libc": None, "exe": "vault-rag", "wheel": "macosx_{floor}_arm64", "title": "macOS on Apple silicon"},
    "windows-x64": {"os": "win32", "cpu": "x64", "libc": None, "exe": "vault-rag.exe", "wheel": "win_amd64", "title": "Windows x64"},
}
LIBS = {"linux-x64": "libonnxruntime.so", "linux-arm64": "libonnxruntime.so", "macos-arm64": "libonnxruntime.dylib", "windows-x64": "onnxruntime.dll"}


class BuildError(Exception):
    pass


def names(template=TEMPLATE):
    """The names every package and the listing use, from server.json."""
    with open(template, encoding="utf-8") as f:
        doc = json.load(f)
    out = {"server": doc["name"], "repository": doc["repository"]["url"], "description": doc["description"]}
    for p in doc["packages"]:
        out[p["registryType"]] = p["identifier"]
    for k in ("npm", "pypi", "mcpb"):
        if k not in out:
            raise BuildError("%s lists no %s package" % (template, k))
    return out


def npm_platform_name(launcher, platform):
    """The npm package of a platform, named after the launcher package."""
    node = "%s-%s" % (PLATFORMS[platform]["os"], PLATFORMS[platform]["cpu"])
    if launcher.startswith("@"):
        return "%s-%s" % (launcher, node)
    return "@%s/%s" % (launcher, node)


def stage_dir(stage, platform):
    top = os.path.join(stage, platform, "vault-rag")
    p = PLATFORMS[platform]
    for rel in (os.path.join("bin", p["exe"]), os.path.join("lib", LIBS[platform]), os.path.join("configs", "shipping.yaml")):
        if not os.path.isfile(os.path.join(top, rel)):
            raise BuildError("%s is missing: stage %s first (scripts/dist.sh %s, or make release)" % (os.path.join(top, rel), platform, platform))
    return top


def floor(binchk, platform, top):
    """The oldest OS release the platform's binary and ONNX Runtime both run
    on, as binchk reads it from them ("" on Windows)."""
    if platform == "windows-x64":
        return ""  # Windows 10 and later: no version in the PE files to read
    p = PLATFORMS[platform]
    found = []
    for args in ([platform, os.path.join(top, "bin", p["exe"])], ["-lib", platform, os.path.join(top, "lib", LIBS[platform])]):
        out = subprocess.run([binchk, "-floor"] + args, check=True, capture_output=True, text=True).stdout.strip()
        if out:
            found.append(tuple(int(x) for x in out.split(".")))
    if not found:
        raise BuildError("binchk found no OS version in %s's binary or library: cannot tag the wheel honestly" % platform)
    v = max(found)
    return "%d_%d" % (v[0], v[1] if len(v) > 1 else 0)


def wheel_tag(platform, floor_version):
    return PLATFORMS[platform]["wheel"].format(floor=floor_version)


def files_under(top):
    """Every file under top, as (relative path with /, absolute path), sorted."""
    out = []
    for root, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            out.append((os.path.relpath(full, top).replace(os.sep, "/"), full))
    return sorted(out)


# ---- npm ----

def run_npm_pack(folder, out):
    res = subprocess.run(["npm", "pack", "--json", "--pack-destination", os.path.abspath(out)], cwd=folder,
                         check=True, capture_output=True, text=True)
    return os.path.join(out, json.loads(res.stdout)[0]["filename"])


def build_npm(stage, out, version, binchk, platforms, log=print):
    n = names()
    launcher = n["npm"]
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="vault-rag-npm-")
    try:
        deps, by_node = {}, {}
        for platform in platforms:
            p = PLATFORMS[platform]
            top = stage_dir(stage, platform)
            name = npm_platform_name(launcher, platform)
            folder = os.path.join(work, platform)
            shutil.copytree(top, folder)
            meta = {
                "name": name,
                "version": version,
                "description": "vault-rag's binary and ONNX Runtime for %s: installed by the %s package, not on its own" % (p["title"], launcher),
                "license": "MIT",
                "repository": {"type": "git", "url": "git+%s.git" % n["repository"]},
                "os": [p["os"]],
                "cpu": [p["cpu"]],
                "files": ["bin/", "lib/", "configs/", "README.md", "LICENSE"],
                "preferUnplugged": True,
            }
            if p["libc"]:
                meta["libc"] = [p["libc"]]
                meta["vaultRag"] = {"glibc": floor(binchk, platform, top).replace("_", ".")}
            with open(os.path.join(folder, "package.json"), "w", encoding="utf-8") as f:
                json.dump(meta, f, indent=2)
                f.write("\n")
            tgz = run_npm_pack(folder, out)
            log("npm: %s (%s)" % (tgz, human(os.path.getsize(tgz))))
            deps[name] = version
            by_node["%s-%s" % (p["os"], p["cpu"])] = name

        src = os.path.join(HERE, "npm", "vault-rag")
        folder = os.path.join(work, "launcher")
        shutil.copytree(src, folder)
        shutil.copy(os.path.join(HERE, "..", "LICENSE"), os.path.join(folder, "LICENSE"))
        with open(os.path.join(src, "package.json"), encoding="utf-8") as f:
            meta = json.load(f)
        meta.update({"name": launcher, "version": version, "mcpName": n["server"],
                     "platformPackages": dict(sorted(by_node.items())), "optionalDependencies": dict(sorted(deps.items()))})
        with open(os.path.join(folder, "package.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
        tgz = run_npm_pack(folder, out)
        log("npm: %s (%s), optional dependencies: %s" % (tgz, human(os.path.getsize(tgz)), ", ".join(sorted(deps))))
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---- PyPI ----

def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def dist_name(name):
    """A distribution name as wheel file names and .dist-info folders spell it."""
    return name.replace("-", "_").replace(".", "_").lower()


def metadata(n, version, readme):
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % n["pypi"],
        "Version: %s" % version,
        "Summary: %s" % n["description"],
        "Home-page: %s" % n["repository"],
        "License: MIT",
        "Project-URL: Source, %s" % n["repository"],
        "Keywords: mcp,mcp-server,notes,markdown,obsidian,search,rag",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: License :: OSI Approved :: MIT License",
        "Classifier: Topic :: Text Processing :: Indexing",
        "Requires-Python: >=3.8",
        "Description-Content-Type: text/markdown",
        "",
        readme,
    ]
    return "\n".join(lines)


def build_wheel(stage, out, version, platform, tag_floor, mtime=None, log=print):
    """Writes one wheel and returns its path. tag_floor is floor()'s answer."""
    n = names()
    top = stage_dir(stage, platform)
    tag = "py3-none-" + wheel_tag(platform, tag_floor)
    dn = dist_name(n["pypi"])
    info = "%s-%s.dist-info" % (dn, version)
    path = os.path.join(out, "%s-%s-%s.whl" % (dn, version, tag))
    stamp = time.gmtime(mtime if mtime is not None else int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")))[:6]
    with open(os.path.join(HERE, "pypi", "README.md"), encoding="utf-8") as f:
        readme = f.read().replace("{server}", n["server"])
    if "mcp-name: " + n["server"] not in readme:
        raise BuildError("packaging/pypi/README.md lacks the registry's ownership line mcp-name: %s" % n["server"])

    entries = []  # (archive path, bytes, executable)
    pkg = os.path.join(HERE, "pypi", "vault_rag")
    for rel, full in files_under(pkg):
        if rel.endswith(".pyc") or "__pycache__" in rel:
            continue
        with open(full, "rb") as f:
            entries.append(("vault_rag/" + rel, f.read(), False))
    entries.append(("vault_rag/_package.py", ("NAME = %r\nVERSION = %r\n" % (n["pypi"], version)).encode(), False))
    for sub in ("bin", "lib", "configs"):
        for rel, full in files_under(os.path.join(top, sub)):
            with open(full, "rb") as f:
                data = f.read()
            entries.append(("vault_rag/%s/%s" % (sub, rel), data, os.stat(full).st_mode & 0o111 != 0 or sub == "bin" and rel == PLATFORMS[platform]["exe"]))
    with open(os.path.join(top, "LICENSE"), "rb") as f:
        entries.append((info + "/LICENSE", f.read(), False))
    entries.append((info + "/METADATA", metadata(n, version, readme).encode(), False))
    entries.append((info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: vault-rag packaging/build.py\nRoot-Is-Purelib: false\nTag: %s\n" % tag).encode(), False))
    entries.append((info + "/entry_points.txt", b"[console_scripts]\nvault-rag = vault_rag:main\n", False))
    entries.append((info + "/top_level.txt", b"vault_rag\n", False))

    record = io.StringIO()
    w = csv.writer(record, lineterminator="\n")
    for name, data, _ in entries:
        w.writerow([name, record_hash(data), len(data)])
    w.writerow([info + "/RECORD", "", ""])
    entries.append((info + "/RECORD", record.getvalue().encode(), False))

    os.makedirs(out, exist_ok=True)
    with zipfile.ZipFile(path + ".tmp", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data, executable in entries:
            zi = zipfile.ZipInfo(name, stamp)
            zi.external_attr = (0o100755 if executable else 0o100644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data, compresslevel=9)
    os.replace(path + ".tmp", path)
    log("pypi: %s (%s)" % (path, human(os.path.getsize(path))))
    return path


# ---- server.json ----

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def server_json(semver, pep440, tag, mcpb):
    """The listing for this release: packaging/server.json with the versions,
    the bundle's release URL and its sha256 filled in."""
    with open(TEMPLATE, encoding="utf-8") as f:
        text = f.read()
    for k, v in {"{semver}": semver, "{pep440}": pep440, "{tag}": tag, "{mcpb_sha256}": sha256_file(mcpb)}.items():
        text = text.replace(k, v)
    doc = json.loads(text)
    want = "vault-rag-%s.mcpb" % tag
    if os.path.basename(mcpb) != want:
        raise BuildError("the bundle %s is not the one the listing names (%s): build both from one VERSION" % (mcpb, want))
    return doc


def check_listing(listing, npm_dir, pypi_dir, mcpb):
    """Checks, offline, what the registry checks of each package when the
    listing is published: the npm launcher's mcpName and the wheels'
    mcp-name line name the server, each package has the version the listing
    gives, and the bundle has its sha256. Returns the problems found."""
    import tarfile
    with open(listing, encoding="utf-8") as f:
        doc = json.load(f)
    server, problems = doc["name"], []
    for p in doc["packages"]:
        kind, ident, ver = p["registryType"], p["identifier"], p.get("version", "")
        if kind == "npm":
            tgz = os.path.join(npm_dir, "%s-%s.tgz" % (ident.lstrip("@").replace("/", "-"), ver))
            if not os.path.isfile(tgz):
                problems.append("npm: no %s for %s@%s" % (tgz, ident, ver))
                continue
            with tarfile.open(tgz) as t:
                meta = json.load(t.extractfile("package/package.json"))
            if (meta.get("name"), meta.get("version"), meta.get("mcpName")) != (ident, ver, server):
                problems.append("npm: %s is %s@%s with mcpName %r, want %s@%s with mcpName %r" % (
                    tgz, meta.get("name"), meta.get("version"), meta.get("mcpName"), ident, ver, server))
        elif kind == "pypi":
            prefix = "%s-%s-" % (dist_name(ident), ver)
            wheels = [w for w in sorted(os.listdir(pypi_dir)) if w.startswith(prefix) and w.endswith(".whl")]
            if not wheels:
                problems.append("pypi: no %s*.whl in %s" % (prefix, pypi_dir))
            for w in wheels:
                with zipfile.ZipFile(os.path.join(pypi_dir, w)) as z:
                    meta = z.read("%s-%s.dist-info/METADATA" % (dist_name(ident), ver)).decode()
                if "mcp-name: %s -->" % server not in meta and "mcp-name: %s\n" % server not in meta:
                    problems.append("pypi: %s's description lacks the line mcp-name: %s" % (w, server))
        elif kind == "mcpb":
            if p.get("fileSha256") != sha256_file(mcpb):
                problems.append("mcpb: fileSha256 %s is not the sha256 of %s" % (p.get("fileSha256"), mcpb))
            if not ident.endswith("/" + os.path.basename(mcpb)):
                problems.append("mcpb: %s does not name %s" % (ident, os.path.basename(mcpb)))
    return problems


def human(n):
    return "%.1f MB" % (n / 1e6)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for cmd in ("npm", "wheels"):
        s = sub.add_parser(cmd)
        s.add_argument("--stage", required=True)
        s.add_argument("--out", required=True)
        s.add_argument("--version", required=True)
        s.add_argument("--binchk", required=True)
        s.add_argument("platforms", nargs="+", choices=sorted(PLATFORMS))
    s = sub.add_parser("server-json")
    s.add_argument("--out", required=True)
    s.add_argument("--semver", required=True)
    s.add_argument("--pep440", required=True)
    s.add_argument("--tag", required=True)
    s.add_argument("--mcpb", required=True)
    s = sub.add_parser("check-listing")
    s.add_argument("--server-json", required=True)
    s.add_argument("--npm", required=True)
    s.add_argument("--pypi", required=True)
    s.add_argument("--mcpb", required=True)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "npm":
            build_npm(a.stage, a.out, a.version, a.binchk, a.platforms)
        elif a.cmd == "wheels":
            for p in a.platforms:
                top = stage_dir(a.stage, p)
                build_wheel(a.stage, a.out, a.version, p, floor(a.binchk, p, top))
        elif a.cmd == "check-listing":
            problems = check_listing(a.server_json, a.npm, a.pypi, a.mcpb)
            for p in problems:
                sys.stderr.write("build.py: %s: %s\n" % (a.server_json, p))
            if problems:
                return 1
            print("server.json: every package it lists is built, names the server and has its version")
        else:
            doc = server_json(a.semver, a.pep440, a.tag, a.mcpb)
            with open(a.out, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=2)
                f.write("\n")
            print("server.json: %s (version %s, the bundle's sha256 %s)" % (a.out, a.semver, doc["packages"][-1]["fileSha256"]))
    except (BuildError, subprocess.CalledProcessError) as e:
        sys.stderr.write("build.py: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
