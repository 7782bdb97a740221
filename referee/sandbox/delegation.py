"""Asking the user's systemd for a control group of famiglia's own, where the host gives it none.

A regular user's processes usually sit in a group the user may not write (a
login session's scope): no bot then gets a group of its own, with no bound on
its tree's memory, no CPU accounting and no freezer (docs/sandbox.md). Where
the user runs systemd's user manager, it can give one: a transient scope with
``Delegate=yes`` is the user's to divide, as ``systemd-run --user --scope -p
Delegate=yes famiglia ...`` gives it. Rather than ask every user to type that,
a referee that finds no usable group asks the user manager (over D-Bus, with
``busctl``) to start such a scope with itself in it, once, and probes again
from there. The scope (``famiglia-referee-<pid>-<random>.scope``) goes when
the referee does.

Never as root (root's groups are its own already), and only where a user
manager answers: ``busctl`` is installed and the user's bus is there.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time

__all__ = ["delegate_this_process"]

_BUS_TIMEOUT_S = 5


def _user_bus() -> bool:
    """Whether this user's session bus, where systemd's user manager listens, is there to ask."""
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return True
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return runtime is not None and os.path.exists(os.path.join(runtime, "bus"))


def scope_request(busctl: str, unit: str, pid: int) -> list[str]:
    """The ``busctl`` command that asks the user manager for ``unit``, a delegated scope holding ``pid``."""
    return [
        busctl, "--user", f"--timeout={_BUS_TIMEOUT_S}", "call", "org.freedesktop.systemd1",
        "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "StartTransientUnit",
        "ssa(sv)a(sa(sv))", unit, "fail",
        "3", "PIDs", "au", "1", str(pid), "Delegate", "b", "true", "CollectMode", "s", "inactive-or-failed",
        "0",
    ]  # fmt: skip


def _own_group() -> str:
    try:
        with open("/proc/self/cgroup", encoding="ascii") as handle:
            return handle.read()
    except OSError:
        return ""


def delegate_this_process(wait_s: float = 5.0) -> str | None:
    """Move this process into a delegated scope of the user's systemd; None once it is there, else why not.

    The manager moves the process itself once the scope starts; this waits up
    to ``wait_s`` seconds for ``/proc/self/cgroup`` to name the scope.
    """
    if os.geteuid() == 0:
        return "as root famiglia makes its groups itself"
    busctl = shutil.which("busctl")
    if busctl is None or not _user_bus():
        return "no systemd user manager to ask (busctl or the user's bus is missing)"
    unit = f"famiglia-referee-{os.getpid()}-{secrets.token_hex(4)}.scope"
    try:
        done = subprocess.run(scope_request(busctl, unit, os.getpid()), capture_output=True, text=True,
                              timeout=_BUS_TIMEOUT_S + 5, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"busctl failed: {exc}"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"systemd's user manager refused a delegated scope: {lines[-1] if lines else done.returncode}"
    deadline = time.monotonic() + wait_s
    while unit not in _own_group():
        if time.monotonic() >= deadline:
            return f"systemd's user manager started {unit} but did not move famiglia into it"
        time.sleep(0.01)
    return None
