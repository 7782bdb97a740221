"""A worker machine gets the host's famiglia as a wheel, and a worker running another famiglia is refused.

The wheel is installed with pip (no index, no dependencies) into a folder of
its own and fingerprinted by a Python that imports famiglia from there. The
refusal runs on the module's real LocalCluster, whose workers are made to
report other files.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed")

from distributed import Client, LocalCluster

from referee.settings import RefereeSettings
from tests.tournaments.hosting.executors.test_dask_executor import tournament_file
from tournaments.cli import app
from tournaments.hosting.executors import installed
from tournaments.hosting.executors.base import Competition
from tournaments.hosting.executors.dask_worker import RefereePlugin, RefereeSetup
from tournaments.hosting.executors.installed import InstalledFamiglia, WrongFamiglia, installed_famiglia

OTHER = InstalledFamiglia(version="0.0.9", fingerprint="0" * 64)


def test_a_worker_installed_from_the_hosts_wheel_has_the_hosts_famiglia(tmp_path: Path) -> None:
    # Before and after: a file edited meanwhile (a shared checkout) changes the host's famiglia too.
    before = installed_famiglia()
    built = CliRunner().invoke(app, ["worker", "wheel", "--out", str(tmp_path / "dist")])
    after = installed_famiglia()
    assert built.exit_code == 0, built.output
    [wheel] = (tmp_path / "dist").glob("famiglia-*-py3-none-any.whl")
    assert f"wrote {wheel}" in built.output and f"pip install './{wheel.name}[dask]'" in built.output
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    assert "Provides-Extra: dask" in metadata and "famiglia = tournaments.cli:main" in entry_points
    target = tmp_path / "worker-site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        check=True, timeout=120, capture_output=True,
    )  # fmt: skip
    # Imported from the installed copy, not from this checkout (the cwd is elsewhere; the target comes first).
    probe = "import msgspec, tournaments; from tournaments.hosting.executors.installed import installed_famiglia as f; "
    probe += "print(tournaments.__file__); print(msgspec.json.encode(f()).decode())"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    where, answer = done.stdout.strip().splitlines()
    assert Path(where).is_relative_to(target)
    assert msgspec.json.decode(answer, type=InstalledFamiglia) in (before, after)


def test_the_same_files_always_make_the_same_wheel(tmp_path: Path) -> None:
    first = installed.write_wheel(tmp_path / "a").read_bytes()
    assert installed.write_wheel(tmp_path / "b").read_bytes() == first


@pytest.fixture
def other_famiglia_on_workers(cluster: LocalCluster) -> Iterator[Client]:
    """The cluster's workers report another famiglia than the host's until the test ends."""

    def pretend() -> None:
        from tournaments.hosting.executors import installed as on_worker

        on_worker.real_installed_famiglia = on_worker.installed_famiglia  # type: ignore[attr-defined]
        on_worker.installed_famiglia = lambda: OTHER

    def mend() -> None:
        from tournaments.hosting.executors import installed as on_worker

        on_worker.installed_famiglia = on_worker.real_installed_famiglia  # type: ignore[attr-defined]

    with Client(cluster.scheduler_address, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        client.run(pretend)
        try:
            yield client
        finally:
            client.run(mend)


@pytest.mark.slow
def test_a_worker_running_another_famiglia_is_refused_in_one_line_naming_it(
    tmp_path: Path, cluster: LocalCluster, other_famiglia_on_workers: Client
) -> None:
    workers = set(other_famiglia_on_workers.scheduler_info()["workers"])
    done = CliRunner().invoke(
        app, ["tournament", "run", str(tournament_file(tmp_path)), "--executor", "dask",
              "--scheduler", cluster.scheduler_address],
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    [line] = done.output.strip().splitlines()
    assert line.startswith("famiglia: error: Dask worker ") and line.split()[4] in workers
    assert f"runs {OTHER.describe()}, not this host's {installed_famiglia().describe()}" in line
    assert "famiglia worker wheel" in line
    assert not (tmp_path / "t.sqlite").exists(), "refused before a results file was made"


def test_a_worker_that_joins_with_another_famiglia_refuses_the_competitions_games() -> None:
    # A worker joining after the host's check is checked by the competition's plugin on that worker.
    competition = Competition(name="famiglia-t", settings=RefereeSettings())
    plugin = RefereePlugin(msgspec.msgpack.encode(RefereeSetup(competition=competition, famiglia=OTHER)))
    with pytest.raises(WrongFamiglia, match=r"^Dask worker \? runs famiglia \d"):
        plugin.setup(worker=object())
    assert plugin.referee is None and "install the host's wheel there" in plugin.refused
