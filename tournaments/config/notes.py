"""What a valid tournament file will do that its host may not expect: counts rounded, settings not applied.

A value that is refused is a problem (``tournaments.config.tournament``); a value that
famiglia changes to make the schedule fair, or a setting it accepts but does
not apply at this file's other settings, is said here, one line each, so
nothing is changed in silence. ``famiglia tournament run`` prints them before
it plays.
"""

from __future__ import annotations

import math

import msgspec

from referee.settings import BotLimits
from tournaments.config.tournament import TournamentConfig
from tournaments.hosting.schedule import (
    games_per_entrant,
    head_to_head_deals,
    tables_for_games_per_entrant,
    williams_design,
)

__all__ = ["config_notes"]


def config_notes(config: TournamentConfig) -> list[str]:
    """One line for each value the schedule rounds and each setting the file gives that will not apply."""
    fmt = config.format
    n = len(config.entrants)
    notes: list[str] = []
    for k in fmt.table_sizes:
        seatings = len(williams_design(k))
        why = f"a table is played in all {seatings} seatings of its Williams design (every entrant in every seat)"
        if fmt.kind == "round-robin" and fmt.games_per_entrant is not None:
            each = games_per_entrant(n, k, tables_for_games_per_entrant(n, k, fmt.games_per_entrant))
            if each != fmt.games_per_entrant:
                notes.append(
                    f"games_per_entrant = {fmt.games_per_entrant} gives each entrant {each} games at tables of {k}: "
                    f"{why}, and all {n} entrants sit at equally many tables ({each // seatings} each); "
                    f"give games_per_entrant = {each} to say so"
                )
        elif fmt.kind == "gauntlet" and fmt.games_per_entrant is not None:
            hero = math.ceil(fmt.games_per_entrant / seatings) * seatings
            if hero != fmt.games_per_entrant:
                notes.append(
                    f"games_per_entrant = {fmt.games_per_entrant} gives {fmt.hero} {hero} games at tables of {k}: "
                    f"{why}; give games_per_entrant = {hero} to say so"
                )
        elif fmt.kind == "head-to-head":
            games = head_to_head_deals(fmt.max_games, k) * 2 * seatings
            if games != fmt.max_games:
                notes.append(
                    f"max_games = {fmt.max_games} schedules {games} games: a deal is played in all {seatings} "
                    f"seatings at tables of {k}, once with {fmt.a} and once with {fmt.b} in its seat "
                    f"({2 * seatings} games a deal); give max_games = {games} to say so"
                )
    executor = config.executor
    if executor.kind == "local" and executor.scheduler is not None:
        notes.append(
            f"executor.scheduler = {executor.scheduler!r} is not used: executor.kind is local (this machine); "
            'give kind = "dask" (or --executor dask) to play on that cluster'
        )
    if executor.workers > executor.concurrency:
        # ExecutorSection.counts gives each worker a game at least: fewer would leave workers idle.
        notes.append(
            f"concurrency = {executor.concurrency} becomes {executor.workers} unless --concurrency is given: each "
            f"of the {executor.workers} workers plays a game at a time at least; give concurrency = "
            f"{executor.workers}, or fewer workers"
        )
    sandbox = config.sandbox
    # build_mb holds at every level: famiglia measures what a build leaves.
    if (
        sandbox.level == "none"
        and msgspec.structs.replace(sandbox.limits, build_mb=BotLimits().build_mb) != BotLimits()
    ):
        notes.append(
            "sandbox.limits: not applied at sandbox level none (limits hold at standard and strict, "
            "but for build_mb); choose a level that applies them, or remove them"
        )
    if sandbox.level == "none" and sandbox.runtimes:
        notes.append(
            "sandbox.runtimes: not needed at sandbox level none (a bot there sees every folder its user can read)"
        )
    return notes
