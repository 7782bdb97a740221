"""Cluster identity (issue 40 item 5): a tournament, a ladder or a worker refuses a Dask scheduler that was
not started for it, and joins the one that was.

Real ``dask scheduler`` processes on 127.0.0.1: one as another program would start it (no famiglia
preload), one started with the cluster_identity preload and a secret. The refusals through the real
entry points: one line each, nothing stored.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed")

from tests.ladder.helpers import write_ladder
from tests.ports import free_port
from tests.processes import stop_group
from tests.tournaments.hosting.executors.dask_settings import quiet_environment
from tests.tournaments.hosting.executors.test_dask_executor import tournament_file
from tournaments.cli import app
from tournaments.hosting.executors.cluster_identity import (
    PRELOAD,
    SECRET_VARIABLE,
    answer,
    cluster_secret,
    identity_problem,
)
from tournaments.hosting.executors.dask_cluster import DaskUnreachable, connect_client, listening
from tournaments.hosting.executors.dask_cluster import security_for as security

pytestmark = pytest.mark.slow  # a scheduler process per test: seconds of start-up each

SECRET = "a-cluster-secret-of-the-host-0123456789"
OTHER = "someone-elses-cluster-secret-9876543210"


@contextmanager
def scheduler(secret: str | None) -> Iterator[str]:
    """A ``dask scheduler`` on a free port of 127.0.0.1: with ``secret``, started for famiglia (the preload);
    without, as any other program starts one. Its tcp:// address once it listens."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {key: value for key, value in os.environ.items() if key != SECRET_VARIABLE}
    env.update(quiet_environment())
    command = [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
               "--dashboard-address", ":0"]  # fmt: skip
    if secret is not None:
        env[SECRET_VARIABLE] = secret
        command += ["--preload", PRELOAD]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 240  # an interpreter and distributed's import on a loaded machine
        while not listening(address, 5):
            assert process.poll() is None, f"the scheduler exited with {process.returncode}"
            assert time.monotonic() < deadline, "the scheduler never listened"
            time.sleep(0.2)
        yield address
    finally:
        stop_group(process)


@pytest.fixture
def host_secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(SECRET_VARIABLE, SECRET)
    return SECRET


def test_the_scheduler_started_with_the_hosts_secret_is_joined(host_secret: str) -> None:
    with scheduler(host_secret) as address:
        client = connect_client(address, 30)
        try:
            assert client.scheduler_info()["address"] == address
        finally:
            client.close()


def test_a_scheduler_another_program_started_on_the_port_is_refused_in_one_line(host_secret: str) -> None:
    with scheduler(None) as address, pytest.raises(DaskUnreachable) as refused:
        connect_client(address, 30)
    line = str(refused.value)
    assert "\n" not in line
    assert f"the Dask scheduler at {address} was not started for this famiglia" in line
    assert f"--preload {PRELOAD}" in line and SECRET_VARIABLE in line


def test_a_scheduler_started_with_another_secret_is_refused(host_secret: str) -> None:
    with scheduler(OTHER) as address, pytest.raises(DaskUnreachable, match="another cluster secret"):
        connect_client(address, 30)


def test_a_host_without_a_secret_refuses_a_scheduler_started_with_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SECRET_VARIABLE, raising=False)
    with scheduler(OTHER) as address, pytest.raises(DaskUnreachable, match="this host has none"):
        connect_client(address, 30)


def test_the_proof_answers_only_the_challenge_asked_and_never_carries_the_secret(host_secret: str) -> None:
    # What a foreign scheduler that recorded one exchange could replay: the answer to another challenge.
    with scheduler(host_secret) as address:
        assert identity_problem(address, security(address), 30) is None
    assert answer(SECRET.encode(), "one") != answer(SECRET.encode(), "two")
    assert SECRET not in answer(SECRET.encode(), "one")


def test_a_secret_too_short_to_be_one_is_one_line_before_anything_is_reached(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(SECRET_VARIABLE, "hunter2")
    done = CliRunner().invoke(
        app,
        ["tournament", "run", str(tournament_file(tmp_path)), "--executor", "dask", "--scheduler",
         f"tcp://127.0.0.1:{free_port()}"],
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    [line] = done.output.strip().splitlines()
    assert f"{SECRET_VARIABLE} is 7 characters long" in line


def test_a_tournament_refuses_a_foreign_scheduler_before_storing_anything(host_secret: str, tmp_path: Path) -> None:
    with scheduler(None) as address:
        done = CliRunner().invoke(
            app, ["tournament", "run", str(tournament_file(tmp_path)), "--executor", "dask", "--scheduler", address]
        )
    assert done.exit_code == 2, done.output
    [line] = done.output.strip().splitlines()
    assert "was not started for this famiglia" in line and "Traceback" not in done.output
    assert not (tmp_path / "t.sqlite").exists(), "refused before a results file was made"


def test_a_ladder_refuses_a_foreign_scheduler_before_storing_anything(host_secret: str, tmp_path: Path) -> None:
    ladder = write_ladder(tmp_path)
    with scheduler(None) as address:
        done = subprocess.run(
            [sys.executable, "-m", "tournaments.cli", "ladder", "serve", str(ladder), "--port", "0",
             "--executor", "dask", "--scheduler", address],
            capture_output=True, text=True, timeout=240, check=False,
            env={**os.environ, **quiet_environment(), SECRET_VARIABLE: host_secret},
        )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "was not started for this famiglia" in lines[0], done.stderr
    assert not ladder.with_suffix(".sqlite").exists(), "nothing is stored before the scheduler is vouched for"


def test_a_worker_refuses_a_foreign_scheduler_and_joins_the_right_one(host_secret: str) -> None:
    with scheduler(None) as address:
        done = CliRunner().invoke(app, ["worker", "start", address, "--nworkers", "1", "--host", "127.0.0.1"])
    assert done.exit_code == 1, done.output
    [line] = done.output.strip().splitlines()
    assert "was not started for this famiglia" in line
    with scheduler(host_secret) as address:
        env = {**os.environ, **quiet_environment(), SECRET_VARIABLE: host_secret}
        worker = subprocess.Popen(
            [sys.executable, "-m", "tournaments.cli", "worker", "start", address, "--nworkers", "1",
             "--host", "127.0.0.1"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            client = connect_client(address, 30)
            try:
                client.wait_for_workers(1, timeout=240)
            finally:
                client.close()
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=60)


@pytest.mark.parametrize(("value", "read"), [("   \n", None), ("  " + "k" * 20 + "\n", b"k" * 20)])
def test_a_secret_read_from_a_file_with_its_newline_or_of_blanks_alone_is_taken_as_meant(
    monkeypatch: pytest.MonkeyPatch, value: str, read: bytes | None
) -> None:
    # `export FAMIGLIA_CLUSTER_SECRET="$(cat secret)"` on one machine and a systemd EnvironmentFile on another
    # must give one secret; blanks alone are no secret (not a 3-character one to refuse).
    monkeypatch.setenv(SECRET_VARIABLE, value)
    assert cluster_secret() == read
