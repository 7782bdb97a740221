"""Reaching a Dask scheduler: in seconds or a one-line error, and a warning when it is in the clear.

No cluster here: each test listens on 127.0.0.1 itself, or checks an address
without connecting to it.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed")

from tests.tournaments.hosting.executors.test_dask_executor import tournament_file
from tournaments.cli import app
from tournaments.hosting.executors import dask_cluster
from tournaments.hosting.executors.dask import DaskExecutor, DaskUnreachable
from tournaments.hosting.executors.dask_cluster import clear_text_warning, tls_only_address


@contextmanager
def listener(reply: bytes | None) -> Iterator[str]:
    """A TCP port on 127.0.0.1 that accepts and then sends ``reply`` (None: says nothing); its tcp:// address."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            held.append(connection)
            if reply is not None:
                connection.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for connection in held:
            connection.close()


@pytest.mark.slow  # 10 s of waiting, without load
def test_a_port_that_accepts_and_never_answers_is_one_line_within_seconds(tmp_path: Path) -> None:
    # Dask's own client waits for ever for the handshake of such a port.
    with listener(None) as address:
        began = time.monotonic()
        done = CliRunner().invoke(
            app, ["tournament", "run", str(tournament_file(tmp_path)), "--executor", "dask", "--scheduler", address]
        )
        took = time.monotonic() - began
    assert done.exit_code == 2, done.output
    [line] = done.output.strip().splitlines()
    assert f"cannot reach the Dask scheduler at {address} (no Dask answer within 10 s" in line
    assert took < 30, f"{took:.0f} s"  # 10 s of handshake; the rest is a loaded machine's slack
    assert not (tmp_path / "t.sqlite").exists(), "refused before a results file was made"


def test_a_port_that_never_answers_is_waited_for_once_not_asked_again_in_tls(monkeypatch: pytest.MonkeyPatch) -> None:
    # A timeout is an OSError too: taken for a dropped connection, it sent a TLS hello that waited as long
    # again, so "no answer within 10 s" came after 20.
    asked: list[str] = []
    monkeypatch.setattr(dask_cluster, "_answers_tls", lambda address, timeout_s: asked.append(address))
    with listener(None) as address:
        with pytest.raises(DaskUnreachable, match="no Dask answer within 0.5 s"):
            DaskExecutor(address, connect_timeout_s=0.5).check_reachable()
        assert tls_only_address(address, 0.5) is None
    assert asked == []


def test_another_service_on_the_port_is_not_taken_for_a_scheduler() -> None:
    # A web server's bytes, read as a Dask frame header, asked for exabytes of memory.
    web = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4
    with listener(web) as address, pytest.raises(DaskUnreachable, match="what answered is not a Dask scheduler"):
        DaskExecutor(address, connect_timeout_s=20).check_reachable()


def test_a_tls_scheduler_without_the_hosts_certificate_says_which_settings_to_give() -> None:
    with pytest.raises(DaskUnreachable) as refused:
        DaskExecutor("tls://127.0.0.1:9").check_reachable()
    message = str(refused.value)
    assert "needs this host's certificate" in message
    assert "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT" in message and "\n" not in message


@pytest.mark.parametrize(
    ("address", "warned"),
    [
        ("tcp://10.0.0.7:8786", True),
        ("tcp://192.168.1.20:8786", True),
        ("tcp://127.0.0.1:8786", False),
        ("tcp://localhost:8786", False),
        ("tcp://[::1]:8786", False),
        ("tls://10.0.0.7:8786", False),
    ],
)
def test_only_a_scheduler_off_this_machine_in_the_clear_is_warned_about(address: str, warned: bool) -> None:
    warning = clear_text_warning(address)
    assert (warning is not None) == warned
    if warning is not None:
        assert warning.startswith("warning: ") and "tls://" in warning and address in warning


def test_the_clear_text_warning_reaches_the_user_once_per_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    # No connection leaves this machine: the connection itself is replaced.
    def unreachable(address: str, timeout_s: float) -> None:
        raise DaskUnreachable(f"cannot reach the Dask scheduler at {address}")

    monkeypatch.setattr("tournaments.hosting.executors.dask.connect_client", unreachable)
    notices: list[str] = []
    executor = DaskExecutor("tcp://10.0.0.7:8786", notice=notices.append)
    for _ in range(2):
        with pytest.raises(DaskUnreachable):
            executor.check_reachable()
    assert notices == [clear_text_warning("tcp://10.0.0.7:8786")]


def test_reaching_a_scheduler_works_from_a_thread_that_runs_an_event_loop_already() -> None:
    # A notebook's code runs inside asyncio's loop: asyncio.run refused it there, and the refusal read as
    # "what answered is not a Dask scheduler: RuntimeError".
    async def from_a_running_loop(address: str) -> None:
        with pytest.raises(DaskUnreachable, match="no Dask answer within 0.5 s"):
            DaskExecutor(address, connect_timeout_s=0.5).check_reachable()

    with listener(None) as address:
        asyncio.run(from_a_running_loop(address))
