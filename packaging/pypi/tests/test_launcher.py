"""Unit tests of the Python launcher (packaging/pypi/vault_rag), no network:
where the binary is on each OS, how the launch is told to the binary, the
Windows exit status, and the launcher running a stand-in binary both ways.

    python3 -m unittest discover -s packaging/pypi/tests
"""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vault_rag  # noqa: E402


class PathsTest(unittest.TestCase):
    def test_binary_path(self):
        self.assertEqual(vault_rag.binary_path("/site/vault_rag", windows=False), "/site/vault_rag/bin/vault-rag")
        self.assertTrue(vault_rag.binary_path("/site/vault_rag", windows=True).endswith(os.path.join("bin", "vault-rag.exe")))

    def test_install_route(self):
        uv = {"UV": "/home/u/.local/bin/uv"}
        self.assertEqual(vault_rag.install_route("/home/u/.cache/uv/archive-v0/AbC123", uv), "uvx")
        self.assertEqual(vault_rag.install_route("/home/u/.cache/uv/archive-v0/AbC123/", uv), "uvx")
        self.assertEqual(vault_rag.install_route(r"C:\Users\u\AppData\Local\uv\cache\archive-v0\AbC123".replace("\\", os.sep), uv), "uvx")
        # uv tool install, uv run in a project, pip: environments that stay.
        self.assertEqual(vault_rag.install_route("/home/u/.local/share/uv/tools/vault-rag", uv), "pip")
        self.assertEqual(vault_rag.install_route("/work/project/.venv", uv), "pip")
        self.assertEqual(vault_rag.install_route("/home/u/.cache/uv/archive-v0/AbC123", {}), "pip")

    def test_uvx_path(self):
        with tempfile.TemporaryDirectory() as d:
            uv = os.path.join(d, "uv")
            self.assertEqual(vault_rag.uvx_path({"UV": uv}, windows=False), "")
            open(os.path.join(d, "uvx"), "w").close()
            self.assertEqual(vault_rag.uvx_path({"UV": uv}, windows=False), os.path.join(d, "uvx"))
            open(os.path.join(d, "uvx.exe"), "w").close()
            self.assertEqual(vault_rag.uvx_path({"UV": uv}, windows=True), os.path.join(d, "uvx.exe"))
        self.assertEqual(vault_rag.uvx_path({}, windows=False), "")

    def test_child_env(self):
        env = vault_rag.child_env({"HOME": "/h"}, route="pip")
        self.assertEqual(env["HOME"], "/h")
        self.assertEqual(env["VAULT_RAG_INSTALL"], "pip")
        self.assertEqual(env["VAULT_RAG_PACKAGE"], "%s@%s" % (vault_rag.NAME, vault_rag.VERSION))
        self.assertEqual(env["VAULT_RAG_RUNNER"], "")

    def test_windows_status(self):
        for got, want in [(0, 0), (1, 1), (3, 3), (0xC0000005, -1073741819), (0xFFFFFFFF, -1), (-1, -1)]:
            self.assertEqual(vault_rag.windows_status(got), want, hex(got))


class MainTest(unittest.TestCase):
    """main with a stand-in binary: a shell script that prints what it got."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.exe = os.path.join(self.dir.name, "vault-rag")
        with open(self.exe, "w") as f:
            f.write('#!/bin/sh\necho "args:$*"\necho "via:$VAULT_RAG_INSTALL $VAULT_RAG_PACKAGE"\nexit 3\n')
        os.chmod(self.exe, 0o755)

    def run_main(self, code):
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        return subprocess.run([sys.executable, "-c", "import sys, vault_rag; sys.exit(%s)" % code], cwd=here,
                              capture_output=True, text=True, env=dict(os.environ, UV=""))

    @unittest.skipIf(os.name == "nt", "POSIX exec")
    def test_posix_execs_the_binary(self):
        r = self.run_main("vault_rag.main(['serve', '--transport', 'stdio'], exe=%r, windows=False)" % self.exe)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(r.stdout, "args:serve --transport stdio\nvia:pip %s@%s\n" % (vault_rag.NAME, vault_rag.VERSION))

    @unittest.skipIf(os.name == "nt", "a shell script stands in for the .exe")
    def test_windows_way_runs_it_and_passes_the_status(self):
        r = self.run_main("vault_rag.main(['status'], exe=%r, windows=True)" % self.exe)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("args:status\n", r.stdout)

    def test_missing_or_not_executable(self):
        r = self.run_main("vault_rag.main([], exe=%r, windows=False)" % os.path.join(self.dir.name, "gone"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("the binary is missing", r.stderr)
        self.assertIn("--force-reinstall", r.stderr)
        if os.name != "nt":
            os.chmod(self.exe, 0o644)
            r = self.run_main("vault_rag.main([], exe=%r, windows=False)" % self.exe)
            self.assertEqual(r.returncode, 1)
            self.assertIn("is not executable", r.stderr)


if __name__ == "__main__":
    unittest.main()
