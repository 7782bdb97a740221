"""Who plays the ladder's games: the match loop hands each one to a game player.

``LocalPlayer`` referees it in the server's own Trio run (the default);
``ladder.dask_player.DaskPlayer`` sends it to a Dask cluster
(``ladder.player_choice`` picks one). Either way the
player only plays: the loop alone writes the store, on its Trio thread, so a
game is recorded (or failed) the same way wherever it was played.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import msgspec

from referee.bots import BotSpec
from referee.match import MatchRecord, MatchSpec
from referee.play import play_match
from referee.settings import RefereeSettings
from tournaments.hosting.faults import NotPlayed

__all__ = ["GamePlayer", "LocalPlayer", "NotPlayed", "RefereeFailed", "Seat"]


class Seat(msgspec.Struct, frozen=True, kw_only=True):
    """One seat of a game: the version sitting there, its upload's digest, and its bot ready on this server."""

    version: int
    digest: str
    bot: BotSpec


class RefereeFailed(Exception):
    """The harness failed the game elsewhere (on a Dask worker); the one line to record it with, as is."""


class GamePlayer(Protocol):
    """Plays one game at a time per caller; several callers at once (the loop's ``concurrency``)."""

    async def ready(self) -> None:
        """Return once games can be played (at once, unless the player waits for a cluster to come back)."""
        ...

    async def play(self, spec: MatchSpec, seats: list[Seat], replay: Path) -> MatchRecord:
        """Play ``spec`` with ``seats`` (seat order), its replay and the seats' stderr written beside ``replay``.

        NotPlayed when it could not be played now; RefereeFailed when the
        harness failed it elsewhere; any other exception as ``play_match``
        raises it.
        """
        ...

    def keep(self, digests: set[str]) -> None:
        """Only these versions (by upload digest) play from now on: what was sent out for others may go."""
        ...

    async def close(self) -> None:
        """Let go of what the player holds (a cluster's plugins and connection) once the loop stopped."""
        ...


class LocalPlayer:
    """Every game refereed in this process, its bots started for it and stopped after it."""

    def __init__(self, settings: RefereeSettings) -> None:
        self.settings = settings

    async def ready(self) -> None:
        return

    async def play(self, spec: MatchSpec, seats: list[Seat], replay: Path) -> MatchRecord:
        return await play_match(spec, [seat.bot for seat in seats], self.settings, replay_path=replay)

    def keep(self, digests: set[str]) -> None:
        return

    async def close(self) -> None:
        return
