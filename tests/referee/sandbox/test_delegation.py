"""A regular user's referee asks the user's systemd for a delegated scope when the host gives it no group (issue 42, item 6).

No systemd user manager runs where these tests do, so ``busctl`` is a stand-in
that records what it was asked and answers as the manager would: it refuses,
or it accepts (and, not being systemd, moves nothing). What the referee then
tells the user, and that root and a user without a bus ask nothing, is real.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import msgspec
import pytest

from referee.sandbox import cgroup_host, delegation
from referee.sandbox.cgroup_host import CgroupSupport
from referee.sandbox.delegation import delegate_this_process, scope_request


@pytest.fixture
def regular_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """This process seen as a regular user's, with a user bus at $XDG_RUNTIME_DIR/bus; the folder for stand-ins."""
    monkeypatch.setattr(delegation.os, "geteuid", lambda: 1000)
    runtime = tmp_path / "run"
    runtime.mkdir()
    (runtime / "bus").touch()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    tools = tmp_path / "bin"
    tools.mkdir()
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    return tools


def stand_in_busctl(tools: Path, *, answer: int, said: str = "") -> Path:
    """A busctl that writes its arguments, one a line, to a file beside it, says ``said`` and exits with ``answer``."""
    asked = tools / "asked"
    script = tools / "busctl"
    script.write_text(
        f'#!/bin/sh\nfor word in "$@"; do printf "%s\\n" "$word"; done > {shlex.quote(str(asked))}\n'
        f"echo {shlex.quote(said)} >&2\nexit {answer}\n"
    )
    script.chmod(0o755)
    return asked


def test_the_user_manager_is_asked_for_a_delegated_scope_holding_the_referee(regular_user: Path) -> None:
    asked = stand_in_busctl(regular_user, answer=0)
    why = delegate_this_process(wait_s=0.2)
    words = asked.read_text().splitlines()
    unit = words[8]
    assert unit.startswith(f"famiglia-referee-{os.getpid()}-") and unit.endswith(".scope")
    assert words == scope_request("busctl", unit, os.getpid())[1:]
    assert ["PIDs", "au", "1", str(os.getpid())] == words[11:15] and ["Delegate", "b", "true"] == words[15:18]
    # The stand-in accepts and moves nothing: said so, in one line.
    assert why == f"systemd's user manager started {unit} but did not move famiglia into it"


def test_a_refusal_by_the_user_manager_is_one_line_with_its_reason(regular_user: Path) -> None:
    stand_in_busctl(regular_user, answer=1, said="Call failed: Access denied")
    assert delegate_this_process(wait_s=0.2) == (
        "systemd's user manager refused a delegated scope: Call failed: Access denied"
    )


def test_nothing_is_asked_as_root_or_without_a_user_bus(regular_user: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = stand_in_busctl(regular_user, answer=0)
    monkeypatch.setattr(delegation.os, "geteuid", lambda: 0)
    assert delegate_this_process() == "as root famiglia makes its groups itself"
    monkeypatch.setattr(delegation.os, "geteuid", lambda: 1000)
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert delegate_this_process() == "no systemd user manager to ask (busctl or the user's bus is missing)"
    assert not asked.exists()


def test_the_probe_looks_again_from_the_delegated_scope_or_says_why_there_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nothing = CgroupSupport(version="none", problem="cannot create a control group in /user.slice/session-2.scope")
    delegated = CgroupSupport(version="v2", memory=True, swap=True, processes=True, cpu_bound=True, cpu_usage=True,
                              freezer=True)  # fmt: skip
    probes = iter([nothing, delegated])
    monkeypatch.setattr(cgroup_host.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(cgroup_host, "_probe_here", lambda: next(probes))
    monkeypatch.setattr(cgroup_host, "delegate_this_process", lambda: None)
    assert cgroup_host.cgroup_support.__wrapped__() == delegated  # moved: probed again from inside the scope
    probes = iter([nothing])
    monkeypatch.setattr(cgroup_host, "delegate_this_process", lambda: "no systemd user manager to ask")
    found = cgroup_host.cgroup_support.__wrapped__()
    assert found == msgspec.structs.replace(nothing, delegation="no systemd user manager to ask")
    assert found.missing() == (
        "no usable control groups: memory, processes and CPU are bounded per process only, "
        "and bots are stopped by SIGSTOP between their requests (no systemd user manager to ask)"
    )
