"""How the Dask executor puts games into tasks, without a cluster: what it would submit is recorded instead.

Several games share a task (fewer round trips through the scheduler) only
while every worker thread is busy, never two of one deal; a game does not
wait for company while a thread is idle. The clock is Trio's mock one: the
moment a game waits for others passes at once.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio

pytest.importorskip("distributed")

from referee.match import MatchSpec
from tournaments.hosting.executors.dask import DaskExecutor, _Game
from tournaments.hosting.executors.dask_worker import DaskGame


def game(seed: int) -> _Game:
    return _Game(DaskGame(spec=MatchSpec(game="vendetta", seed=seed, match=f"t#{seed}"), seats=[]), client=None)


async def tasks_of(seeds: list[int], *, threads: int, busy: int) -> list[list[int]]:
    """The tasks (by their games' deals) the executor would submit for games handed in at once."""
    executor = DaskExecutor("tcp://127.0.0.1:9", games_per_task=3)
    executor._threads = threads
    executor._tasks = dict.fromkeys(range(busy))  # type: ignore[arg-type]  # tasks in flight: only counted
    submitted: list[list[int]] = []
    executor._submit = lambda games, suspect=False: submitted.append([g.request.spec.seed for g in games])  # type: ignore[method-assign]
    games_in, games_out = trio.open_memory_channel[_Game](math.inf)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(executor._batch, games_out)
        for seed in seeds:
            games_in.send_nowait(game(seed))
        await trio.sleep(1)  # far past the moment a game waits for company
        nursery.cancel_scope.cancel()
    return submitted


async def test_while_every_worker_thread_is_busy_games_of_different_deals_share_a_task(autojump_clock: Any) -> None:
    # Deal 1 twice: its second game goes to another task, which the rest join up to 3 games.
    assert await tasks_of([1, 1, 2, 3, 4], threads=2, busy=2) == [[1, 2, 3], [1, 4]]


async def test_while_a_worker_thread_is_idle_each_game_is_a_task_at_once(autojump_clock: Any) -> None:
    assert await tasks_of([1, 2, 3], threads=2, busy=1) == [[1], [2], [3]]
