"""Shared test fixtures: paths to the test bots and a tournament file writer."""

from __future__ import annotations

import compileall
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# The Dask cluster fixtures (bot_cache, cluster), one per module: the executors' tests and the
# ladder's Dask tests both use them. The browser tests' chromium, one per test process.
pytest_plugins = ["tests.tournaments.hosting.executors.dask_cluster", "tests.tournaments.browser"]

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = ROOT / "tests" / "bots"
SAMPLE_BOTS = ROOT / "sample_bots"

# A suite started in the background by a non-interactive shell inherits SIGINT
# ignored, and so would every command it starts; the Ctrl-C tests need it
# delivered. A handler (unlike "ignore") is reset to the default in a child at exec.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one test process more than the cores this run may use.

    About a quarter of the suite's test time is waiting, not computing: clocks and
    check-bot's patience running out, processes and Dask workers starting. On 2
    cores a third worker fills it (the suite in 236 s instead of 274 s on
    2026-11-26); a fourth gained nothing more (239 s).
    """
    return len(os.sched_getaffinity(0)) + 1


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the project's modules once, before any test starts a Python process.

    Where PYTHONDONTWRITEBYTECODE is set (as on this project's CI machine) no process
    writes the bytecode cache, so every bot and CLI the suite starts, some 2,000 of
    them, compiled the modules it imports from source again: 5-10 ms more per bot
    start. compileall writes the cache all the same. Once, in the xdist controller.
    """
    if hasattr(session.config, "workerinput"):
        return
    for package in ("protocol", "referee", "tournaments", "ladder"):
        compileall.compile_dir(ROOT / package, quiet=1)


@pytest.fixture(scope="session", autouse=True)
def private_build_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Builds go to a cache of the suite's own, not the machine's (``referee.build.build_cache``).

    Set in the environment, so the CLI's subprocesses and the tournament
    workers the tests start use it too.
    """
    folder = tmp_path_factory.mktemp("build-cache") / "bots"
    before = os.environ.get("FAMIGLIA_BOT_CACHE")
    os.environ["FAMIGLIA_BOT_CACHE"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("FAMIGLIA_BOT_CACHE", None)
    else:
        os.environ["FAMIGLIA_BOT_CACHE"] = before


@pytest.fixture
def passer_bot() -> Path:
    return TEST_BOTS / "passer"


def live_processes() -> Iterator[tuple[int, Path, list[str]]]:
    """(pid, /proc entry, the stat fields after the command name) of every live (non-zombie) process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            yield int(entry.name), entry, fields


def processes_in(folder: Path) -> list[int]:
    """Pids of live processes whose working folder is ``folder``."""
    found = []
    for pid, entry, _ in live_processes():
        try:
            if Path(os.readlink(entry / "cwd")) == folder:
                found.append(pid)
        except OSError:
            continue
    return found


def workers_of(parent: int) -> list[int]:
    """Pids of the live tournament worker processes (``tournaments.hosting.executors.processes``) whose parent is ``parent``."""
    found = []
    for pid, entry, fields in live_processes():
        try:
            if (
                fields[1] == str(parent)
                and b"tournaments.hosting.executors.processes" in (entry / "cmdline").read_bytes()
            ):
                found.append(pid)
        except OSError:
            continue
    return found


def wait_until_gone(folder: Path, seconds: float = 10.0) -> list[int]:
    """Wait for every process working in ``folder`` to exit; the pids still alive."""
    deadline = time.monotonic() + seconds
    while (alive := processes_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def is_idle_sandbox_init(pid: int) -> bool:
    """Whether ``pid`` is a sandbox's init (bwrap, pid 1 of its namespace) with no process below it.

    A referee killed with SIGKILL while it was spawning a bot can leave such an
    init behind: the bot itself is gone, and the next referee's sweep removes it
    (referee.sandbox.launch). Everything else left in a bot's folder is a leak.
    """
    proc = Path(f"/proc/{pid}")
    try:
        if (proc / "comm").read_text().strip() != "bwrap":
            return False
        nspid = next(line for line in (proc / "status").read_text().splitlines() if line.startswith("NSpid:"))
        children = "".join((task / "children").read_text() for task in (proc / "task").iterdir())
    except (OSError, StopIteration):
        return True  # gone meanwhile
    return nspid.split()[-1] == "1" and not children.split()


def assert_no_bot_outlived_its_referee(folder: Path) -> None:
    """After a referee was SIGKILLed: no bot process is left in ``folder`` (an idle sandbox init may be)."""
    left = [pid for pid in wait_until_gone(folder) if not is_idle_sandbox_init(pid)]
    assert left == [], f"bots outlived their referee: {left}"
