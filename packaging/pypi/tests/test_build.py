"""Unit tests of the wheel builder (packaging/build.py), on stand-in release
folders: the platform tag from the binaries' floors, RECORD's hashes and
sizes, the file modes, the metadata the registry and pip read, and the
launcher inside the wheel running its binary.

    python3 -m unittest discover -s packaging/pypi/tests
"""

import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import build  # noqa: E402  packaging/build.py

# FLOORS: what the stand-in binchk says of each platform's binary and library.
FLOORS = {"linux-x64": ("2.34", "2.27"), "linux-arm64": ("2.17", "2.28"), "macos-arm64": ("11.0", "14.0"), "windows-x64": ("", "")}


class WheelTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.stage = os.path.join(self.tmp.name, "stage")
        self.out = os.path.join(self.tmp.name, "out")
        # binchk -floor [-lib] PLATFORM FILE, as scripts/binchk answers.
        self.binchk = os.path.join(self.tmp.name, "binchk")
        with open(self.binchk, "w") as f:
            f.write("#!/usr/bin/env python3\nimport sys\nfloors = %r\nargs = sys.argv[1:]\nlib = '-lib' in args\n"
                    "print(floors[args[-2]][1 if lib else 0])\n" % (FLOORS,))
        os.chmod(self.binchk, 0o755)

    def stage_platform(self, platform):
        top = os.path.join(self.stage, platform, "vault-rag")
        exe = build.PLATFORMS[platform]["exe"]
        os.makedirs(os.path.join(top, "bin"))
        os.makedirs(os.path.join(top, "lib"))
        os.makedirs(os.path.join(top, "configs"))
        with open(os.path.join(top, "bin", exe), "w") as f:
            f.write('#!/bin/sh\necho "binary:$*:$VAULT_RAG_INSTALL"\n')
        os.chmod(os.path.join(top, "bin", exe), 0o755)
        with open(os.path.join(top, "lib", build.LIBS[platform]), "wb") as f:
            f.write(os.urandom(4096))
        for name, text in (("configs/shipping.yaml", "name: shipping\n"), ("LICENSE", "MIT\n"), ("README.md", "# vault-rag\n")):
            with open(os.path.join(top, name), "w") as f:
                f.write(text)
        return top

    def build(self, platform, version="1.2.3"):
        top = self.stage_platform(platform)
        return build.build_wheel(self.stage, self.out, version, platform, build.floor(self.binchk, platform, top), log=lambda *_: None)

    def test_tags_from_the_floors(self):
        names = build.names()
        dn = build.dist_name(names["pypi"])
        want = {
            "linux-x64": "py3-none-manylinux_2_34_x86_64",  # the binary's 2.34 over ONNX Runtime's 2.27
            "linux-arm64": "py3-none-manylinux_2_28_aarch64",  # ONNX Runtime's 2.28 over the binary's 2.17
            "macos-arm64": "py3-none-macosx_14_0_arm64",  # ONNX Runtime's macOS 14 over the binary's 11
            "windows-x64": "py3-none-win_amd64",
        }
        for platform, tag in want.items():
            path = self.build(platform)
            self.assertEqual(os.path.basename(path), "%s-1.2.3-%s.whl" % (dn, tag))
            with zipfile.ZipFile(path) as z:
                wheel = z.read("%s-1.2.3.dist-info/WHEEL" % dn).decode()
            self.assertIn("Tag: %s\n" % tag, wheel)
            self.assertIn("Root-Is-Purelib: false\n", wheel)

    def test_record_modes_and_metadata(self):
        path = self.build("linux-x64", version="0.0.0.dev0+g23ab166")
        names = build.names()
        info = "%s-0.0.0.dev0+g23ab166.dist-info" % build.dist_name(names["pypi"])
        with zipfile.ZipFile(path) as z:
            listed = z.namelist()
            rows = list(csv.reader(io.StringIO(z.read(info + "/RECORD").decode())))
            self.assertEqual(sorted(r[0] for r in rows), sorted(listed), "RECORD lists every file once")
            for name, digest, size in rows:
                if name == info + "/RECORD":
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = z.read(name)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual(digest, want, name)
                self.assertEqual(int(size), len(data), name)
            modes = {zi.filename: zi.external_attr >> 16 for zi in z.infolist()}
            self.assertEqual(modes["vault_rag/bin/vault-rag"], 0o100755)
            self.assertEqual(modes["vault_rag/__init__.py"], 0o100644)
            self.assertEqual(modes["vault_rag/configs/shipping.yaml"], 0o100644)
            for needed in ("vault_rag/lib/libonnxruntime.so", "vault_rag/__main__.py", "vault_rag/_package.py"):
                self.assertIn(needed, listed)
            self.assertFalse([n for n in listed if ".data/" in n or "__pycache__" in n], "nothing in .data/scripts or caches")
            meta = z.read(info + "/METADATA").decode()
            self.assertIn("\nName: %s\n" % names["pypi"], meta)
            self.assertIn("\nVersion: 0.0.0.dev0+g23ab166\n", meta)
            self.assertIn("mcp-name: %s -->" % names["server"], meta)
            self.assertEqual(z.read(info + "/entry_points.txt").decode(), "[console_scripts]\nvault-rag = vault_rag:main\n")
            self.assertIn("VERSION = '0.0.0.dev0+g23ab166'", z.read("vault_rag/_package.py").decode())

    @unittest.skipIf(os.name == "nt", "POSIX exec")
    def test_the_unpacked_wheel_runs_its_binary(self):
        path = self.build("linux-x64")
        site = os.path.join(self.tmp.name, "site")
        with zipfile.ZipFile(path) as z:
            for zi in z.infolist():  # as installers do: the mode comes from external_attr
                z.extract(zi, site)
                os.chmod(os.path.join(site, zi.filename), (zi.external_attr >> 16) & 0o777)
        r = subprocess.run([sys.executable, "-m", "vault_rag", "--version"], cwd=site, capture_output=True, text=True,
                           env=dict(os.environ, UV=""))
        self.assertEqual((r.returncode, r.stdout), (0, "binary:--version:pip\n"), r.stderr)

    def test_refusals(self):
        with self.assertRaisesRegex(build.BuildError, r"bin/vault-rag is missing: stage linux-x64 first"):
            build.stage_dir(self.stage, "linux-x64")
        top = self.stage_platform("linux-x64")
        silent = os.path.join(self.tmp.name, "silent-binchk")
        with open(silent, "w") as f:
            f.write("#!/bin/sh\necho\n")
        os.chmod(silent, 0o755)
        with self.assertRaisesRegex(build.BuildError, "cannot tag the wheel honestly"):
            build.floor(silent, "linux-x64", top)

    def test_npm_platform_names(self):
        self.assertEqual(build.npm_platform_name("vault-rag", "linux-x64"), "@vault-rag/linux-x64")
        self.assertEqual(build.npm_platform_name("vault-rag", "macos-arm64"), "@vault-rag/darwin-arm64")
        self.assertEqual(build.npm_platform_name("vault-rag", "windows-x64"), "@vault-rag/win32-x64")
        self.assertEqual(build.npm_platform_name("@me/vault-rag", "linux-arm64"), "@me/vault-rag-linux-arm64")


if __name__ == "__main__":
    unittest.main()
