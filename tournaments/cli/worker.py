"""``famiglia worker``: set up and run a Dask worker machine (docs/distributed.md).

``start`` keeps a Dask worker (its nanny and worker processes) serving one
scheduler for as long as it runs. Since distributed 2023 a Dask worker whose
scheduler goes away closes and exits within seconds, and never reconnects; so
``start`` runs ``dask worker`` as a child and starts it again whenever it ends
on its own. A new one waits for the scheduler to answer again, then joins it.

``wheel`` writes a wheel of the famiglia installed on the host, which is how
a worker machine gets famiglia (it is not on the package index) with the
host's files exactly, as the host checks when a run starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from tournaments.cli.common import QuickHelp, console, err_console, fail, user_errors
from tournaments.hosting.ranges import MAX_WORKERS, count_problem, scheduler_problem

__all__ = ["Refused", "app", "supervise"]

app = typer.Typer(
    help="Set up and run Dask worker machines (docs/distributed.md).", no_args_is_help=True, cls=QuickHelp
)

_RESTART_DELAY_S = 1.0  # between a worker that ended and the next: a scheduler on its way back has time to bind
_FAILED_AT_START_S = 60.0  # failing (non-zero) sooner: its options or machine (a lost scheduler exits it with 0)
_PR_SET_PDEATHSIG = 1
_ASK_S = 5.0  # how long a scheduler that listens has to answer whether it speaks plain TCP


def _say(line: str) -> None:
    err_console.print(f"famiglia worker: {line}", markup=False, highlight=False, soft_wrap=True)


def _parent_death_signal() -> Callable[[], None]:
    """What the child runs between fork and exec: SIGTERM when this process dies, even by SIGKILL.

    SIGTERM, not SIGKILL: the nanny then closes its worker processes (and
    their bots) before it goes, instead of leaving them to a scheduler.
    """
    import ctypes  # here: the rest of famiglia's commands do without it

    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork: nothing is imported in the child
    return lambda: libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class Refused(Exception):
    """The scheduler at the worker's address is not the one it was started for (``vouch`` said why)."""


def supervise(command: list[str], scheduler: str, vouch: Callable[[], str | None] | None = None) -> int:
    """Run ``command`` (a Dask worker) again each time it ends on its own; 0 once stopped by SIGTERM or Ctrl-C.

    A worker that fails within its first minute with a non-zero code failed
    on its options or its machine: running it again would fail the same way,
    so its exit code is returned instead.

    With ``vouch``, each start asks ``vouch`` first when the scheduler listens: a line from it (the
    scheduler there was not started for this cluster) raises Refused instead of joining it. After a
    restart it waits for the scheduler to listen before it asks.
    """
    stopping = threading.Event()
    child: subprocess.Popen[bytes] | None = None
    die_with_parent = _parent_death_signal()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    first = True
    while not stopping.is_set():
        if vouch is not None:
            from tournaments.hosting.executors.dask_cluster import listening

            # After a restart the scheduler is asked once it is back. At the first start a worker whose
            # scheduler is not up yet is started at once all the same, so that a mistake in its options
            # is said now rather than once a scheduler listens; it joins the first to come up there.
            while not first and not stopping.is_set() and not listening(scheduler, _ASK_S):
                stopping.wait(_RESTART_DELAY_S)
            if stopping.is_set():
                break
            if listening(scheduler, _ASK_S) and (refusal := vouch()) is not None:
                raise Refused(refusal)
        first = False
        began = time.monotonic()
        child = subprocess.Popen(command, preexec_fn=die_with_parent)  # noqa: PLW1509  # no threads here
        if stopping.is_set():  # stopped while it was being started: the handler could not reach it yet
            child.terminate()
        code = child.wait()
        if stopping.is_set():
            break
        if code != 0 and time.monotonic() - began < _FAILED_AT_START_S:
            return code
        _say(
            f"the Dask worker ended (exit code {code}): its scheduler at {scheduler} stopped or dropped it; "
            "starting a new one, which joins the scheduler as soon as it answers"
        )
        stopping.wait(_RESTART_DELAY_S)
    return 0


def _tls_arguments(scheduler: str, ca_file: Path | None, cert: Path | None, key: Path | None) -> list[str]:
    """dask worker's TLS options, after checking they fit the scheduler's address (a user error is one line)."""
    given = [option for option in (ca_file, cert, key) if option is not None]
    if given and len(given) != 3:
        fail("give all three of --tls-ca-file, --tls-cert and --tls-key (docs/distributed.md, Security)")
    if given and not scheduler.startswith("tls://"):
        fail(f"{scheduler}: with certificates the scheduler's address starts with tls://, for example tls://HOST:8786")
    if scheduler.startswith("tls://") and not given and not _tls_in_dask_config():
        fail(
            f"{scheduler}: a tls:// scheduler needs this worker's certificates: --tls-ca-file, --tls-cert and "
            "--tls-key (docs/distributed.md, Security)"
        )
    if not given:
        return []
    assert ca_file is not None and cert is not None and key is not None
    return ["--tls-ca-file", str(ca_file.resolve()), "--tls-cert", str(cert.resolve()), "--tls-key", str(key.resolve())]


def _tls_in_dask_config() -> bool:
    """Whether Dask's configuration (its YAML files, DASK_DISTRIBUTED__COMM__TLS__... variables) gives a worker certificate."""
    import dask.config

    return bool(dask.config.get("distributed.comm.tls.ca-file") and dask.config.get("distributed.comm.tls.worker.cert"))


_FILE = {"exists": True, "dir_okay": False, "readable": True}


@app.command()
def start(
    scheduler: Annotated[str, typer.Argument(help="the scheduler's address: tcp://HOST:8786, or tls://HOST:8786")],
    nworkers: Annotated[
        int | None,
        typer.Option(min=1, help="worker processes: games this machine plays at once (default: one per core)"),
    ] = None,
    host: Annotated[
        str | None, typer.Option(help="the address the workers listen on (default: the one that reaches the scheduler)")
    ] = None,
    tls_ca_file: Annotated[Path | None, typer.Option(help="the cluster's CA certificate (PEM)", **_FILE)] = None,
    tls_cert: Annotated[Path | None, typer.Option(help="this worker machine's certificate (PEM)", **_FILE)] = None,
    tls_key: Annotated[Path | None, typer.Option(help="the key of --tls-cert (PEM)", **_FILE)] = None,
) -> None:
    """Run Dask workers for the scheduler at SCHEDULER until stopped, starting them again whenever it restarts."""
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        fail("famiglia worker needs the dask packages; install famiglia with them: pip install 'famiglia[dask]'")
    if not scheduler.startswith(("tcp://", "tls://")):
        fail(f"{scheduler!r}: give the scheduler's address as tcp://HOST:8786 or tls://HOST:8786")
    if (problem := scheduler_problem(scheduler)) is not None:  # before Dask's own traceback says it
        fail(f"{scheduler}: {problem}")
    if nworkers is not None and (problem := count_problem(nworkers, low=1, high=MAX_WORKERS, what="processes")):
        fail(f"--nworkers {nworkers}: {problem}")
    from tournaments.hosting.executors.dask_cluster import clear_text_warning, tls_only_address

    tls = _tls_arguments(scheduler, tls_ca_file, tls_cert, tls_key)

    with user_errors():
        # A scheduler with certificates drops a worker in the clear, which Dask's worker prints as tracebacks.
        if (address := tls_only_address(scheduler, _ASK_S)) is not None:
            fail(
                f"the Dask scheduler at {scheduler} did not answer in plain TCP: it speaks TLS, so it was started "
                f"with certificates; start this worker with {address} and --tls-ca-file, --tls-cert and --tls-key "
                "(docs/distributed.md, Security)"
            )
        if (warning := clear_text_warning(scheduler)) is not None:
            _say(warning)
    # One thread per worker process: each referees one game at a time, so its clocks are not shared.
    command = [sys.executable, "-m", "distributed.cli.dask_worker", scheduler, "--nthreads", "1",
               "--nworkers", str(nworkers or os.cpu_count() or 1), "--no-dashboard", *tls]  # fmt: skip
    if host is not None:
        command += ["--host", host]
    from tournaments.hosting.executors.dask_cluster import worker_refusal

    try:
        code = supervise(command, scheduler, lambda: worker_refusal(scheduler, _ASK_S))
    except Refused as refused:
        fail(str(refused), 1)
    if code:
        fail(f"the Dask worker stopped at start (exit code {code}); its messages above say why", 1)


@app.command()
def wheel(
    out: Annotated[Path, typer.Option(help="the folder to write the wheel into", file_okay=False)] = Path("dist"),
) -> None:
    """Write a wheel of this machine's famiglia, to install on each worker machine."""
    from tournaments.hosting.executors.installed import installed_famiglia, write_wheel

    with user_errors():
        path = write_wheel(out)
        installed = installed_famiglia()
    console.print(f"wrote {path} ({installed.describe()})", markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"on each worker machine: python3 -m pip install './{path.name}[dask]'", markup=False, highlight=False,
        soft_wrap=True,
    )  # fmt: skip
