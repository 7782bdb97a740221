"""``famiglia worker start``'s mistakes: each is one line and exit 2, before any Dask worker starts.

(The command's real work, on a real scheduler, is in test_dask_famiglia_worker.py.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed")

from tournaments.cli import app


def start(*args: str) -> tuple[int, list[str]]:
    done = CliRunner().invoke(app, ["worker", "start", *args])
    return done.exit_code, done.output.strip().splitlines()


def test_an_address_that_is_not_tcp_or_tls_is_one_line() -> None:
    code, lines = start("10.0.0.7:8786")
    assert code == 2 and len(lines) == 1 and "give the scheduler's address as tcp://HOST:8786" in lines[0]


def test_certificates_need_a_tls_address_and_a_tls_address_needs_certificates(tmp_path: Path) -> None:
    pem = tmp_path / "cluster.pem"
    pem.write_text("not checked before the worker starts\n")
    tls = ["--tls-ca-file", str(pem), "--tls-cert", str(pem), "--tls-key", str(pem)]
    code, lines = start("tcp://127.0.0.1:8786", *tls)
    assert code == 2 and len(lines) == 1 and "starts with tls://" in lines[0]
    code, lines = start("tls://127.0.0.1:8786", "--tls-cert", str(pem))
    assert code == 2 and len(lines) == 1 and "all three of --tls-ca-file, --tls-cert and --tls-key" in lines[0]
    code, lines = start("tls://127.0.0.1:8786")
    assert code == 2 and len(lines) == 1 and "needs this worker's certificates" in lines[0]


@pytest.mark.slow
def test_a_dask_worker_that_fails_at_start_is_not_started_again(tmp_path: Path) -> None:
    # A certificate file that is no certificate: Dask's worker fails on it at once,
    # and would fail the same way every time it was started again.
    pem = tmp_path / "cluster.pem"
    pem.write_text("no certificate\n")
    command = [sys.executable, "-m", "tournaments.cli", "worker", "start", "tls://127.0.0.1:9", "--nworkers", "1",
               "--tls-ca-file", str(pem), "--tls-cert", str(pem), "--tls-key", str(pem)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("famiglia: error: the Dask worker stopped at start (exit code ")
    assert "the Dask worker ended" not in done.stderr, "it was not started again"
