"""The Dask cluster fixtures of the executors' tests and the ladder's Dask tests: a bot cache and a LocalCluster per module."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.tournaments.hosting.executors.dask_settings import QUIET

if TYPE_CHECKING:  # the dask extra is optional: its tests skip without it
    from distributed import LocalCluster


@pytest.fixture(scope="module")
def bot_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A bot cache of each test module's own, traversable by the bots' uids."""
    folder = tmp_path_factory.mktemp("bot-cache")
    os.chmod(folder.parent, 0o755)
    os.chmod(folder, 0o755)
    before = os.environ.get("FAMIGLIA_BOT_CACHE")
    os.environ["FAMIGLIA_BOT_CACHE"] = str(folder / "bots")
    yield folder / "bots"
    if before is None:
        os.environ.pop("FAMIGLIA_BOT_CACHE", None)
    else:
        os.environ["FAMIGLIA_BOT_CACHE"] = before


@pytest.fixture(scope="module")
def cluster(bot_cache: Path) -> Iterator[LocalCluster]:
    """A Dask LocalCluster of two single-thread worker processes on 127.0.0.1, one per test module."""
    import dask.config
    from distributed import LocalCluster

    # The workers' PATH is pinned now: a tool a test adds to the host's PATH later is not on the workers.
    # QUIET for the cluster alone: its nannies keep the configuration of their start for every worker they start.
    with dask.config.set(QUIET):
        started = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
            env={"PATH": os.environ["PATH"], "FAMIGLIA_BOT_CACHE": str(bot_cache)},
        )  # fmt: skip
    with started as running:
        yield running
