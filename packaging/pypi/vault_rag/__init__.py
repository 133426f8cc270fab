"""vault-rag's PyPI package: the release archive's binary and ONNX Runtime,
and this launcher, which the `vault-rag` console command runs.

The wheel keeps the binary in vault_rag/bin/ and ONNX Runtime in
vault_rag/lib/, as the archive does: the binary loads the runtime from
../lib beside its own folder, so the two never part (a wheel's scripts
folder would copy the binary away from its library). On POSIX the launcher
replaces itself with the binary (os.execve), so an MCP client talks to the
binary directly and its signals and exit status are the binary's own. On
Windows, which has no exec, it runs the binary with the same console and
handles and exits with its status.
"""

import os
import subprocess
import sys

try:
    from ._package import NAME, VERSION  # written by packaging/build.py
except ImportError:  # a source checkout, not a built wheel
    NAME, VERSION = "vault-rag", "0.0.0"


def binary_path(here=None, windows=None):
    """The binary inside this package: vault_rag/bin/vault-rag(.exe)."""
    here = os.path.dirname(os.path.abspath(__file__)) if here is None else here
    windows = os.name == "nt" if windows is None else windows
    return os.path.join(here, "bin", "vault-rag.exe" if windows else "vault-rag")


def install_route(prefix=None, environ=None):
    """How the package was started: "uvx" when it runs from a throwaway
    environment in uv's cache (uvx, `uv tool run`), which uv may clean at any
    time; "pip" for an environment that stays (pip, `uv tool install`, a
    project's virtual environment)."""
    prefix = sys.prefix if prefix is None else prefix
    environ = os.environ if environ is None else environ
    parent = os.path.basename(os.path.dirname(os.path.normpath(prefix)))
    if environ.get("UV") and parent.startswith("archive-v"):
        return "uvx"
    return "pip"


def uvx_path(environ=None, windows=None):
    """The uvx beside the uv that started this (uv sets UV to its own path),
    or "" when it cannot be told."""
    environ = os.environ if environ is None else environ
    windows = os.name == "nt" if windows is None else windows
    uv = environ.get("UV", "")
    if not uv:
        return ""
    uvx = os.path.join(os.path.dirname(uv), "uvx.exe" if windows else "uvx")
    return uvx if os.path.isfile(uvx) else ""


def child_env(environ=None, route=None):
    """The binary's environment: this one, plus how it was launched, which
    the binary's connect command uses to write a client configuration that
    launches it the same way."""
    environ = dict(os.environ if environ is None else environ)
    route = install_route(environ=environ) if route is None else route
    environ["VAULT_RAG_INSTALL"] = route
    environ["VAULT_RAG_PACKAGE"] = "%s@%s" % (NAME, VERSION)
    environ["VAULT_RAG_RUNNER"] = uvx_path(environ) if route == "uvx" else ""
    return environ


def windows_status(code):
    """A Windows exit status as sys.exit takes it: Windows reports a DWORD
    (an NTSTATUS such as 0xC0000005 for a crash), which is passed on with the
    same 32 bits."""
    code &= 0xFFFFFFFF
    return code - (1 << 32) if code >= 1 << 31 else code


def main(argv=None, exe=None, windows=None):
    """Runs the binary with argv (default: this command's arguments). exe
    and windows are for tests: the binary, and whether to run it the Windows
    way."""
    args = list(sys.argv[1:] if argv is None else argv)
    windows = os.name == "nt" if windows is None else windows
    exe = binary_path(windows=windows) if exe is None else exe
    if not os.path.isfile(exe):
        sys.stderr.write(
            "vault-rag: the binary is missing from %s: this installation of %s %s is incomplete.\n"
            "Reinstall it (pip install --force-reinstall %s==%s; with uvx: uvx --refresh %s@%s),\n"
            "or use the release archive for your platform.\n" % (exe, NAME, VERSION, NAME, VERSION, NAME, VERSION))
        return 1
    env = child_env()
    if not windows:
        if not os.access(exe, os.X_OK):
            sys.stderr.write("vault-rag: %s is not executable (its file mode was lost when it was installed); "
                             "reinstall the package, or run: chmod +x '%s'\n" % (exe, exe))
            return 1
        os.execve(exe, [exe] + args, env)
    proc = subprocess.Popen([exe] + args, env=env)
    while True:
        try:
            return windows_status(proc.wait())
        except KeyboardInterrupt:
            # Ctrl+C reached the binary too: wait for it to finish.
            continue
