"""A TLS scheduler reached at a tcp:// (or scheme-less) address: one line saying it answers in TLS only.

The host and ``famiglia worker start`` used to say "Connection reset by peer", or
print Dask's tracebacks, for a scheduler started with certificates and given
without ``tls://``. A real ``dask scheduler --protocol tls`` on 127.0.0.1 here,
its certificate made as docs/distributed.md makes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed")

from tests.conftest import TEST_BOTS
from tests.ports import free_port
from tests.tournaments.hosting.executors.test_dask_famiglia_worker import certificate, tls_scheduler
from tournaments.cli import app

pytestmark = pytest.mark.slow  # a real Dask scheduler starts, a few seconds

runner = CliRunner()


@pytest.fixture(scope="module")
def tls_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The port of a Dask scheduler on 127.0.0.1 that speaks TLS with a certificate of its cluster."""
    pem, key = certificate(tmp_path_factory.mktemp("tls"))
    port = free_port()
    with tls_scheduler(port, pem, key):
        yield port


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("famiglia: error:"), output
    assert "Traceback" not in output
    return lines[0]


def tournament_file(folder: Path) -> Path:
    path = folder / "t.toml"
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{TEST_BOTS / "passer"}"\n' for i in range(3))
    path.write_text('[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 3\n' + bots)
    return path


@pytest.mark.parametrize("scheme", ["tcp://", ""], ids=["tcp", "no scheme"])
def test_a_tournament_given_a_tls_scheduler_without_tls_says_it_answers_in_tls_only(
    tmp_path: Path, tls_port: int, scheme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("CA_FILE", "CLIENT__CERT", "CLIENT__KEY"):
        monkeypatch.delenv(f"DASK_DISTRIBUTED__COMM__TLS__{name}", raising=False)
    address = f"{scheme}127.0.0.1:{tls_port}"
    toml = tournament_file(tmp_path)
    done = runner.invoke(app, ["tournament", "run", str(toml), "--executor", "dask", "--scheduler", address])
    assert done.exit_code == 2, done.output
    line = one_error_line(done.output)
    assert f"the Dask scheduler at {address} did not answer in plain TCP: it speaks TLS" in line
    assert f"tls://127.0.0.1:{tls_port}" in line and "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT" in line
    assert "reset by peer" not in line
    assert not (tmp_path / "t.sqlite").exists()


def test_worker_start_given_a_tls_scheduler_at_a_tcp_address_says_it_answers_in_tls_only(tls_port: int) -> None:
    address = f"tcp://127.0.0.1:{tls_port}"
    done = runner.invoke(app, ["worker", "start", address, "--nworkers", "1"])
    assert done.exit_code == 2, done.output
    line = one_error_line(done.output)
    assert f"the Dask scheduler at {address} did not answer in plain TCP: it speaks TLS" in line
    assert f"tls://127.0.0.1:{tls_port}" in line and "--tls-ca-file, --tls-cert and --tls-key" in line
