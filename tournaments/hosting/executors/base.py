"""The one executor interface: a game in, its match record out, wherever it is played.

A competition (a tournament's runner, the ladder's loop) opens an executor
once with what all its games share (``Competition``), waits until it is
``ready``, and hands it each game as ``play(spec, seats, replay)``: the match,
each seat's bot as this host knows it, and where the replay goes. The executor
plays it (in this process, in a worker process, on a Dask cluster), writes the
replay and the seats' stderr there, and returns the record. It never writes a
store: the competition does, in its own process.

What a ``play`` raises, the competition classifies (``tournaments.hosting.faults``):

- ``NotPlayed``: the game could not be played there now, through no fault of its
  own (a worker process died, the cluster went away, a worker cannot play):
  a tournament stops, to be resumed; the ladder puts the game back and waits in
  ``ready``.
- ``RefereeFailed``: the harness failed the game where it was refereed; its line
  and traceback come with it.
- anything else: what refereeing the game raised in this process.

How many games are played at once is the executor's ``slots``: a caller takes
one before it takes a game, and gives it back once the game is played. Inside,
each executor does what makes it fast: warm bot processes kept across games,
several games to one Dask task.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

import msgspec
import trio

from referee.bots import BotSpec
from referee.match import MatchRecord, MatchSpec
from referee.settings import RefereeSettings

__all__ = ["Competition", "Executor", "Seat"]


class Competition(msgspec.Struct, frozen=True, kw_only=True):
    """What every game a competition hands an executor shares, given once when it opens it."""

    name: str
    """Names the competition's work where it is played (a cluster's plugins and tasks): the same at every
    start of one competition, so a start replaces what a stopped one left."""
    settings: RefereeSettings
    """How each game is refereed."""
    warm: bool = False
    """Bot processes kept from game to game (a tournament's ``reuse_processes``), or a fresh one per game."""


class Seat(msgspec.Struct, frozen=True, kw_only=True):
    """One seat of a game: its bot as this host starts it, and how it reaches another machine."""

    bot: BotSpec
    archive: Path | None = None
    """The bot's folder packed (a tar archive, as ``referee.bot_folder.pack_folder`` makes them) when the
    competition keeps one (the ladder's uploads): an executor that plays elsewhere ships that. Without
    one, it packs a folder bot's own folder, and a command line must exist where it plays."""


class Executor(Protocol):
    """Plays the games it is handed, one ``play`` per game, up to ``slots`` at once."""

    slots: trio.CapacityLimiter
    """How many games it plays at once (a cluster's number follows its workers)."""

    def open(self, competition: Competition) -> AbstractAsyncContextManager[None]:
        """Hold what the games are played with (bot processes, worker processes, a cluster's connection)
        for the block; at its end everything is stopped, games in play included."""
        ...

    async def ready(self) -> None:
        """Return once games can be played: at once, unless a cluster is away and this executor waits for it."""
        ...

    async def play(self, spec: MatchSpec, seats: Sequence[Seat], replay: Path | None) -> MatchRecord:
        """Play ``spec`` with ``seats`` (seat order); its replay and the seats' stderr written at ``replay``."""
        ...

    def keep(self, archives: Collection[Path]) -> None:
        """Only seats of these archives play from now on: what was shipped of others may go."""
        ...
