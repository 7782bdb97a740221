"""A ladder's final played as a tournament: the wing's runner for ``tournaments.hosting.finals``.

The final is not a copy of the tournament's machinery but a tournament: the
plan becomes a round-robin ``TournamentConfig`` (balanced tables of every size,
each table played in every seating of a Williams design on one deal), opened in
its own results store (``open_tournament``: begun the first time, resumed after
a kill, so each game is recorded once and a restart plays only what is
missing), played by ``run_pending`` through a hosting executor, fitted by the
standings every tournament publishes, and written as the tournament's report
page with its viewer pages.
"""

from __future__ import annotations

import msgspec
import trio

from tournaments.config.tournament import Entrant, TournamentConfig
from tournaments.hosting.executors.choice import local_executor
from tournaments.hosting.finals import FinalPlan, FinalResult
from tournaments.hosting.settings import ExecutorSection, FormatSection, SandboxSection, TimeSection
from tournaments.lifecycle.opening import open_tournament
from tournaments.report.standings import standings
from tournaments.report.writer import ReportWriter
from tournaments.runner import WorkerFailed, run_pending
from tournaments.store import Store

__all__ = ["final_config", "play_final"]


def final_config(plan: FinalPlan) -> TournamentConfig:
    """The tournament the plan describes; its replays kept beside its store."""
    return TournamentConfig(
        name=plan.name,
        game=plan.game,
        entrants=[Entrant(name=name, bot=msgspec.structs.replace(bot, name=name)) for name, bot in plan.entrants],
        variants=dict(plan.variants),
        replays=str(plan.db.parent / "replays"),
        illegal_action=plan.illegal_action,
        format=FormatSection(
            kind="round-robin", table_sizes=list(plan.table_sizes), games_per_entrant=plan.games_per_entrant
        ),
        time=msgspec.convert(plan.time, TimeSection),
        sandbox=msgspec.convert(plan.sandbox, SandboxSection),
        # A ladder starts each game's bots afresh; the final plays them as the season did.
        executor=ExecutorSection(concurrency=plan.concurrency, workers=1, reuse_processes=False),
    )


async def play_final(plan: FinalPlan) -> FinalResult:
    """Play what the final's store lacks, then fit it and write its report; WorkerFailed if it cannot go on."""
    config = final_config(plan)
    store = Store(plan.db)
    try:
        config = open_tournament(store, config).config
        await run_pending(
            config,
            store,
            concurrency=plan.concurrency,
            on_result=lambda game, record: None,
            executor=local_executor(plan.concurrency),
        )
        done, scheduled = store.counts()
        if done < scheduled:
            raise WorkerFailed(f"the final played {done} of its {scheduled} games; start the ladder again to finish it")
        writer = ReportWriter(store, plan.report)
        await trio.to_thread.run_sync(lambda: writer.write_game_pages(viewer=True, jobs=1))
        await trio.to_thread.run_sync(lambda: writer.save(writer.render()))
        fitted = standings(store)
        return FinalResult(standings=fitted.standings, games=done, scheduled=scheduled, report=plan.report)
    finally:
        store.close()
