"""The in-process executor: Trio referees in this process, up to ``concurrency`` games at once."""

from __future__ import annotations

import msgspec
import trio

from referee.play import prepare_entrants
from referee.seats import WarmPool, open_pool
from tournaments.hosting.executors.base import GameDone, Report, TournamentWork, harness_failure
from tournaments.hosting.schedule import ScheduledGame
from tournaments.playing import play_scheduled

__all__ = ["InProcessExecutor"]


class InProcessExecutor:
    """Referee every game in this process: one Trio task per game slot, one pool of bot processes."""

    async def run(self, work: TournamentWork, games: trio.MemoryReceiveChannel[ScheduledGame], report: Report) -> None:
        bots, failed = await trio.to_thread.run_sync(prepare_entrants, work.bots, work.settings)
        # An entrant whose build failed forfeits its seats; the others play.
        ready = msgspec.structs.replace(work, bots=bots, unavailable={i: str(e) for i, e in failed.items()})
        async with (
            games,
            open_pool(work.settings, max_games=work.max_games_per_process) as pool,
            trio.open_nursery() as nursery,
        ):
            for _ in range(work.concurrency):
                nursery.start_soon(_play_from, games.clone(), ready, pool, report)


async def _play_from(
    games: trio.MemoryReceiveChannel[ScheduledGame], work: TournamentWork, pool: WarmPool, report: Report
) -> None:
    async with games:
        async for game in games:
            try:
                record = await play_scheduled(
                    work.config, work.bots, work.settings, game, pool, tournament=work.tournament,
                    unavailable=work.dead_entrants(),
                )  # fmt: skip
            except Exception as exc:
                # A harness bug costs this game only; a fault of the machine stops the run.
                if (failure := harness_failure(game, exc)) is None:
                    raise
                await report(failure)
                continue
            await report(GameDone(game=game, record=record))
