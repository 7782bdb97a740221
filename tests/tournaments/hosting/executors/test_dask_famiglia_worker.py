"""``famiglia worker start`` on a TLS cluster: the host waits for it, it plays, and it comes back after a scheduler restart.

Real processes throughout, on 127.0.0.1: ``dask scheduler`` with a
certificate made by openssl, the host through ``famiglia tournament run``
(its certificate in Dask's environment variables, as docs/distributed.md says)
and ``famiglia worker start`` with the same certificate.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from distributed import Client
from distributed.security import Security

from tests.conftest import ROOT
from tests.ports import free_port
from tests.tournaments.hosting.executors.dask_settings import quiet_environment
from tests.tournaments.hosting.executors.test_dask_executor import results

pytestmark = pytest.mark.slow

SAMPLES = ROOT / "sample_bots"


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate and its key: the cluster's CA and every member's certificate at once."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    pem, key = folder / "cluster.pem", folder / "cluster.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days",
         "2", "-subj", "/CN=famiglia-test", "-keyout", str(key), "-out", str(pem)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return pem, key


def accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def tls_scheduler(port: int, pem: Path, key: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``dask scheduler`` with the certificate, once it listens (the host refuses a port where nothing does)."""
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--protocol", "tls",
         "--tls-ca-file", str(pem), "--tls-cert", str(pem), "--tls-key", str(key), "--dashboard-address", ":0"],
        env={**os.environ, **quiet_environment()}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(lambda: accepts(port) or scheduler.poll() is not None, "the scheduler to listen")
        assert scheduler.poll() is None, f"the scheduler exited with {scheduler.returncode}"
        yield scheduler
    finally:
        scheduler.kill()
        scheduler.wait()


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 180) -> None:
    """Poll ``condition`` until it holds; a deadline only so that a broken run fails instead of hanging."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def small_tournament(folder: Path) -> Path:
    """Three folder bots at one 3-player Vendetta table: 6 short games."""
    bots = [("greedy", "greedy_py"), ("random", "random_py"), ("random2", "random_py")]
    body = '[tournament]\nname = "t"\ngame = "vendetta"\ntable_size = 3\nseed = 3\n'
    body += '[tournament.variants]\nround_limit = "2"\n'
    body += "".join(f'\n[[entrant]]\nname = "{n}"\nbot = "{SAMPLES / b}"\n' for n, b in bots)
    path = folder / "t.toml"
    path.write_text(body)
    return path


def session_members(session: int) -> list[int]:
    """The processes still in ``session`` (a worker started in a session of its own, with everything it started)."""
    members = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[4]) == session:
                members.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return members


def test_famiglia_worker_serves_a_tls_scheduler_and_rejoins_it_after_the_scheduler_restarts(
    tmp_path: Path, bot_cache: Path
) -> None:
    pem, key = certificate(tmp_path)
    address = f"tls://127.0.0.1:{free_port()}"
    port = int(address.rsplit(":", 1)[1])
    db = tmp_path / "t.sqlite"
    host_env = {**os.environ, **quiet_environment(), "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(pem),
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(pem),
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(key)}  # fmt: skip
    worker_log = tmp_path / "worker.log"
    worker: subprocess.Popen[bytes] | None = None
    host: subprocess.Popen[str] | None = None
    try:
        with tls_scheduler(port, pem, key):
            host = subprocess.Popen(
                [sys.executable, "-m", "tournaments.cli", "tournament", "run", str(small_tournament(tmp_path)),
                 "--db", str(db), "--executor", "dask", "--scheduler", address],
                env=host_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            said: list[str] = []
            assert host.stderr is not None
            stderr = host.stderr
            reader = threading.Thread(target=lambda: said.extend(stderr), daemon=True)
            reader.start()
            wait_for(lambda: any("waiting for workers" in line for line in said) or host.poll() is not None, "the host")
            assert host.poll() is None, said
            [waiting] = [line for line in said if "waiting for workers" in line]
            assert f"the Dask scheduler at {address} has none" in waiting
            assert f"famiglia worker start {address}" in waiting
            with worker_log.open("wb") as log:
                worker = subprocess.Popen(
                    [sys.executable, "-m", "tournaments.cli", "worker", "start", address, "--nworkers", "1",
                     "--tls-ca-file", str(pem), "--tls-cert", str(pem), "--tls-key", str(key)],
                    env={**os.environ, **quiet_environment()}, stdout=log, stderr=log, start_new_session=True,
                )  # fmt: skip
            assert host.wait(timeout=300) == 0, "".join(said)[-3000:]
            reader.join(timeout=10)
            assert len(results(db)) == 6
            assert any("joined: playing" in line for line in said), said
            assert not any("in the clear" in line for line in said), "a tls:// scheduler is not in the clear"
        # The scheduler is gone; Dask's worker exits; famiglia's starts a new one, which waits for the next scheduler.
        # The next one starts at once, at the same address: whichever is up first waits for the other.
        security = Security(tls_ca_file=str(pem), tls_client_cert=str(pem), tls_client_key=str(key))
        with tls_scheduler(port, pem, key), Client(address, security=security, timeout=120) as client:
            wait_for(lambda: "the Dask worker ended" in worker_log.read_text(errors="replace"), "the worker to end")
            # The old worker has ended (a Dask worker never joins a scheduler again): the one that joins is the new one.
            client.wait_for_workers(1, timeout=180)
            assert worker.poll() is None
            # Stopped while it serves its scheduler (a worker losing its scheduler meanwhile would be killed late).
            worker.send_signal(signal.SIGTERM)
            assert worker.wait(timeout=120) == 0, worker_log.read_text(errors="replace")[-3000:]
        wait_for(lambda: session_members(worker.pid) == [], "the worker's processes to end", seconds=60)
    finally:
        if host is not None and host.poll() is None:
            host.kill()
            host.wait()
        if worker is not None:
            for pid in session_members(worker.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            worker.wait()
