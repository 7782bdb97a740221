"""Play one scheduled game of a tournament, and where its replay goes.

Every executor plays a game through ``play_scheduled``, wherever it runs: in
the host's process, in a worker process, or on a Dask worker. It only names
the game (its seating, seed, match id and replay path); ``referee.play.play_match``
seats and plays it.

One game here, the whole tournament in ``tournaments.runner``: two things, on
either side of the executors. The runner hands games to an executor and writes
what comes back, in the host alone; the executor plays each game through this
module wherever it runs (a worker process, a Dask worker), where there is no
store and no runner. Joined, a worker would import the host's side, and the
executors would both use and be used by one module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from referee.bots import BotSpec
from referee.errors import BotError
from referee.match import MatchRecord, MatchSpec
from referee.play import play_match
from referee.private import make_private_dirs
from referee.replay import tournament_match_id
from referee.seats import WarmPool
from referee.settings import RefereeSettings
from tournaments.config.sections import referee_settings
from tournaments.config.tournament import TournamentConfig
from tournaments.hosting.schedule import ScheduledGame

__all__ = ["play_scheduled", "prepare_replays", "replay_path", "replays_folder", "settings_for"]


def settings_for(config: TournamentConfig) -> RefereeSettings:
    """How each game of the tournament is refereed."""
    return referee_settings(config.time, config.sandbox, config.illegal_action)


def replays_folder(config: TournamentConfig, tournament: str) -> Path | None:
    """Where a tournament's replays go: a folder of its own inside the file's ``replays`` folder.

    Named by the tournament id, which is unique per store, so tournaments
    that share a ``replays`` folder never write each other's files.
    """
    if config.replays is None:
        return None
    return Path(config.replays) / tournament


def replay_path(config: TournamentConfig, tournament: str, game: ScheduledGame) -> Path | None:
    folder = replays_folder(config, tournament)
    return None if folder is None else folder / f"game-{game.index:06d}.jsonl"


def prepare_replays(config: TournamentConfig, tournament: str, pending: list[ScheduledGame]) -> None:
    """Make the tournament's replay folder (0700) and clear what a stopped run left of pending games.

    A pending game has no result, so any file of it in this tournament's own
    folder is from an attempt that did not finish: the game is played again
    and writes it anew. Nothing of another tournament is touched.
    """
    folder = replays_folder(config, tournament)
    if folder is None:
        return
    make_private_dirs(folder)
    # One listing of the folder, not one search per pending game: a resume of
    # a million-game tournament must not spend minutes here.
    names = {f"game-{game.index:06d}.jsonl" for game in pending}
    with os.scandir(folder) as entries:
        for entry in entries:
            base = entry.name.removesuffix(".partial")
            if ".seat" in base and base.endswith(".stderr"):
                base = base.split(".seat", 1)[0]
            if base in names:
                (folder / entry.name).unlink(missing_ok=True)


async def play_scheduled(
    config: TournamentConfig,
    bots: list[BotSpec],
    settings: RefereeSettings,
    game: ScheduledGame,
    pool: WarmPool | None = None,
    *,
    tournament: str,
    replay: Path | None | Literal["tournament"] = "tournament",
    unavailable: Mapping[int, BotError] | None = None,
) -> MatchRecord:
    """Play one scheduled game: the entrants of its seating, its deal seed.

    ``tournament`` is the tournament's id: the match id and the replay's name
    say which game of which tournament this is.

    With a pool, the seats' processes come from it (warm ones reused across
    games, or a fresh one per game with ``max_games=1``); without, each game
    starts and stops its own. ``replay``: where the replay goes, by default
    the tournament's replay folder. ``unavailable``: entrants (by index) that
    cannot start here, with the error their seats fail with.
    """
    spec = MatchSpec(
        game=config.game, seed=game.seed, variants=config.variants, match=tournament_match_id(tournament, game.index)
    )
    if replay == "tournament":
        replay = replay_path(config, tournament, game)
    dead = unavailable or {}
    seats_dead = {seat: dead[entrant] for seat, entrant in enumerate(game.seating) if entrant in dead}
    return await play_match(
        spec, [bots[e] for e in game.seating], settings, pool=pool, replay_path=replay, unavailable=seats_dead
    )
