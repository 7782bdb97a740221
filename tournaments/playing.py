"""One scheduled game of a tournament as an executor is handed it, and where its replays go.

The runner (``tournaments.runner``) turns each pending game into what every
executor plays (``tournaments.hosting.executors``): its match (``game_spec``:
game, variants, deal seed, match id), its seats (the entrants of its seating)
and its replay's path (``replay_path``). The executor plays it wherever it
runs: in this process, a worker process, a Dask worker.
"""

from __future__ import annotations

import os
from pathlib import Path

from referee.match import MatchSpec
from referee.private import make_private_dirs
from referee.replay import tournament_match_id
from referee.settings import RefereeSettings
from tournaments.config.tournament import TournamentConfig
from tournaments.hosting.schedule import ScheduledGame
from tournaments.hosting.settings import referee_settings

__all__ = ["game_spec", "prepare_replays", "replay_path", "replays_folder", "settings_for"]


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


def game_spec(config: TournamentConfig, tournament: str, game: ScheduledGame) -> MatchSpec:
    """The match of one scheduled game: the tournament's game and variants, its deal seed, and a match id
    saying which game of which tournament it is (``tournament`` is the tournament's id)."""
    return MatchSpec(
        game=config.game, seed=game.seed, variants=config.variants, match=tournament_match_id(tournament, game.index)
    )
