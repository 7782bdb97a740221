"""The results store: one SQLite file (WAL) per tournament.

Tables: the tournament (its configuration and a fingerprint of it), the
entrants, the full schedule, and one row per finished game with a row per seat.
The games that finish together are written in one transaction
(``record_batch``), so a run killed at any moment (SIGKILL included) leaves
every game either wholly recorded or not at all; the next run plays exactly the
games without a row. With WAL and ``synchronous=NORMAL`` a committed game
survives the process being killed (see ``Store.__init__`` for a power cut).

Each store also holds its identity: a random token that makes its tournament
id unique (replays name it) and a secret deal key (32 random bytes) that every
deal seed is keyed with (``tournaments.hosting.schedule.deal_seed``). Both are made
with the store. The file and SQLite's -wal and -shm files beside it are the
host's alone (0600): the store holds every deal seed before its game is played.
A store made before deal keys existed has none (NULL): it resumes with the deal
seeds it already holds, which follow from its tournament file's seed.

One process at a time writes a store: a run holds the floor's lock
(``tournaments.hosting.storage.hold_store``, which the kernel drops when the
process ends, however it ends) from before it opens the store until it has
played; a second run of the same file is refused at once, naming the first.
Readers (standings, games, report) take no lock: WAL lets them read while the
run writes.
"""

from __future__ import annotations

import datetime
import re
import secrets
import shlex
import sqlite3
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from tournaments.config.tournament import TournamentConfig, decode_stored
from tournaments.hosting.schedule import ScheduledGame
from tournaments.hosting.storage import (
    StorageError,
    Transaction,
    database_files,
    open_private_database,
    tighten_database,
)

if TYPE_CHECKING:
    from referee.match import MatchRecord

__all__ = [
    "BotChanged",
    "FinishedGame",
    "HarnessError",
    "SeatRow",
    "Store",
    "StoreError",
    "remove_empty_store",
]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tournament (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    schema_version INTEGER NOT NULL,
    name TEXT NOT NULL,
    game TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    config TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entrant (
    idx INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    command TEXT NOT NULL,
    cwd TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS schedule (
    game INTEGER PRIMARY KEY,
    tbl INTEGER NOT NULL,
    row INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    seating TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS result (
    game INTEGER PRIMARY KEY REFERENCES schedule(game),
    finished TEXT NOT NULL,
    seconds REAL NOT NULL,
    ended_by TEXT NOT NULL,
    replay TEXT,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seat (
    game INTEGER NOT NULL REFERENCES result(game),
    seat INTEGER NOT NULL,
    entrant INTEGER NOT NULL REFERENCES entrant(idx),
    rank INTEGER NOT NULL,
    score INTEGER NOT NULL,
    won INTEGER NOT NULL,
    termination TEXT,
    reason TEXT,
    decisions INTEGER NOT NULL,
    total_ms REAL NOT NULL,
    max_ms REAL NOT NULL,
    version INTEGER,
    PRIMARY KEY (game, seat)
);
CREATE INDEX IF NOT EXISTS seat_entrant ON seat(entrant);
CREATE TABLE IF NOT EXISTS harness_error (
    game INTEGER PRIMARY KEY REFERENCES schedule(game),
    finished TEXT NOT NULL,
    error TEXT NOT NULL,
    traceback TEXT NOT NULL
);
"""

# Each entrant's bot as each run found it (tournaments.lifecycle.versions): version 1, 2, ...
# Apart from the rest, as the identity: a store made before it, opened read-only, still reads.
_VERSION_SCHEMA = """
CREATE TABLE IF NOT EXISTS bot_version (
    entrant INTEGER NOT NULL REFERENCES entrant(idx),
    version INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    PRIMARY KEY (entrant, version)
);
"""

# Apart from the rest: a store made before it, opened read-only, still reads.
_IDENTITY_SCHEMA = """
CREATE TABLE IF NOT EXISTS identity (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    token TEXT NOT NULL,
    deal_key BLOB
);
"""


# By name: a store made before versions has the version column last, as a new one.
_INSERT_SEAT = (
    "INSERT INTO seat (game, seat, entrant, rank, score, won, termination, reason, decisions, total_ms, max_ms, "
    "version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class StoreError(StorageError):
    """The results file cannot be used for this tournament (or at all)."""


class BotChanged(StoreError):
    """An entrant's bot differs from every version of it the store has results of."""


class SeatRow(msgspec.Struct, frozen=True, kw_only=True):
    """One seat of one finished game."""

    seat: int
    entrant: int
    rank: int
    score: int
    won: bool
    termination: str | None
    reason: str | None
    version: int = 1
    """The entrant's bot version that played it (``Store.settle_versions``); 1 for games of a store made before versions."""


class FinishedGame(msgspec.Struct, frozen=True, kw_only=True):
    """A finished game as stored: its schedule slot and its seats."""

    game: int
    table: int
    row: int
    seed: int
    seconds: float
    ended_by: str
    replay: str | None
    seats: list[SeatRow]


class HarnessError(msgspec.Struct, frozen=True, kw_only=True):
    """A game the harness failed to referee (a bug of famiglia): not rated, not played again on resume."""

    game: int
    seating: list[int]
    error: str
    traceback: str


def remove_empty_store(path: Path) -> None:
    """Remove the store at ``path`` (all its files) unless it holds a tournament.

    For a run refused before it stored its tournament: the store it made would
    be an empty results file that the next command takes for a tournament's.
    Read without ``Store``, which would make the file again if it were gone.
    """
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
            if connection.execute("SELECT 1 FROM tournament").fetchone() is not None:
                return
    except sqlite3.Error:
        pass
    for name in database_files(path):
        name.unlink(missing_ok=True)


class Store:
    """A tournament's results file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.db = open_private_database(path)
            self.db.executescript(_SCHEMA)
            self._make_identity()
            self._make_versions()
            # A store an older famiglia made readable by all, or a host's chmod -R opened, becomes the
            # host's alone again; the command says so (opened_warning).
            self.tightened = tighten_database(path)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: cannot use as a results database: {exc}") from None
        except OSError as exc:
            raise StoreError(f"{path}: {exc.strerror}") from None

    def close(self) -> None:
        self.db.close()

    # --- identity and the deal key -----------------------------------------

    def _make_identity(self) -> None:
        """A token and a deal key for a new store; a token alone for one made before deal keys."""
        older = self.db.execute("SELECT 1 FROM tournament").fetchone() is not None
        try:
            self.db.executescript(_IDENTITY_SCHEMA)
            if self.db.execute("SELECT 1 FROM identity").fetchone() is not None:
                return
            key = None if older else secrets.token_bytes(32)
            with self._transaction():
                self.db.execute("INSERT OR IGNORE INTO identity VALUES (1, ?, ?)", (secrets.token_hex(6), key))
        except sqlite3.OperationalError:
            if not older:
                raise
            # An older store that cannot be written (read-only): it is only read.

    # --- bot versions ----------------------------------------------------------

    def _make_versions(self) -> None:
        """The version table, and the seat's version column in a store made before versions."""
        try:
            self.db.executescript(_VERSION_SCHEMA)
            if not self._has_versions():
                self.db.execute("ALTER TABLE seat ADD COLUMN version INTEGER")
        except sqlite3.OperationalError:
            if self.db.execute("SELECT 1 FROM tournament").fetchone() is None:
                raise
            # An older store that cannot be written (read-only): it is only read, as version 1 throughout.

    def _has_versions(self) -> bool:
        return any(row[1] == "version" for row in self.db.execute("PRAGMA table_info(seat)"))

    def bot_versions(self) -> dict[int, list[str]]:
        """Each entrant's known versions: entrant -> fingerprints, version 1 first."""
        found: dict[int, list[str]] = {}
        try:
            rows = self.db.execute("SELECT entrant, fingerprint FROM bot_version ORDER BY entrant, version").fetchall()
        except sqlite3.OperationalError:  # a read-only store made before versions
            return found
        for entrant, fingerprint in rows:
            found.setdefault(entrant, []).append(fingerprint)
        return found

    def settle_versions(self, fingerprints: Sequence[str], *, new_versions: Collection[str] = ()) -> list[int]:
        """The version each entrant plays this run as, its bot's fingerprint given in entrant order.

        A fingerprint the store has seen for that entrant is that version (a bot
        put back as it was plays as its old version again); an entrant without
        results yet takes its bot as version 1, or as its only version. A bot
        that differs from every version of an entrant with results is refused
        (BotChanged, naming each such entrant), unless the entrant is named in
        ``new_versions``: then it is recorded as the next version, rated apart.
        """
        names = self.entrant_names()
        try:
            with self._transaction():
                known = self.bot_versions()
                # One index probe per entrant, not a scan of every seat of a long tournament.
                played = {
                    entrant
                    for entrant in range(len(fingerprints))
                    if self.db.execute("SELECT 1 FROM seat WHERE entrant = ? LIMIT 1", (entrant,)).fetchone()
                }
                versions: list[int] = []
                changed: list[tuple[str, int]] = []
                for entrant, fingerprint in enumerate(fingerprints):
                    seen = known.get(entrant, [])
                    if fingerprint in seen:
                        versions.append(seen.index(fingerprint) + 1)
                        continue
                    if seen and entrant in played and names[entrant] not in new_versions:
                        changed.append((names[entrant], len(seen)))
                        continue
                    if seen and entrant not in played:
                        # Changed before it played a game: nothing to keep apart, still version 1.
                        self.db.execute(
                            "UPDATE bot_version SET fingerprint = ? WHERE entrant = ? AND version = 1",
                            (fingerprint, entrant),
                        )
                        versions.append(1)
                        continue
                    self.db.execute(
                        "INSERT INTO bot_version VALUES (?, ?, ?, ?)", (entrant, len(seen) + 1, fingerprint, _now())
                    )
                    versions.append(len(seen) + 1)
                if changed:
                    raise BotChanged(_changed_message(changed))
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot write: {exc}") from None
        return versions

    def deal_key(self) -> bytes | None:
        """The secret every deal seed of this store is keyed with; None for a store made before deal keys."""
        row = self._identity()
        return None if row is None or row[1] is None else bytes(row[1])

    def _identity(self) -> tuple[str, bytes | None] | None:
        try:
            row = self.db.execute("SELECT token, deal_key FROM identity").fetchone()
        except sqlite3.OperationalError:  # a read-only store made before identities
            return None
        return None if row is None else (row[0], row[1])

    def use_deal_key(self, key: bytes, source: str) -> None:
        """Deal with ``key`` (another store's, read from ``source``), to repeat that store's deals.

        Only before a tournament is stored: a schedule already made keeps its deals.
        """
        if self.deal_key() == key:
            return
        if self.tournament() is not None:
            raise StoreError(
                f"{self.path} already holds a tournament dealt with its own key; "
                f"to repeat the deals of {source}, start a new --db"
            )
        with self._transaction():
            self.db.execute("UPDATE identity SET deal_key = ?", (key,))

    def tournament_id(self) -> str:
        """An id of this store's tournament, unique per store: its name and the store's random token."""
        stored = self.tournament()
        if stored is None:
            raise StoreError(f"{self.path}: holds no tournament yet")
        identity = self._identity()
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", stored[0]).strip("-.")[:40] or "tournament"
        return slug if identity is None else f"{slug}-{identity[0]}"

    # --- the tournament ----------------------------------------------------

    def tournament(self) -> tuple[str, str, str] | None:
        """(name, game, fingerprint) of the stored tournament, or None when empty."""
        row = self.db.execute("SELECT name, game, fingerprint FROM tournament").fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def config(self) -> TournamentConfig:
        row = self.db.execute("SELECT config FROM tournament").fetchone()
        if row is None:
            raise StoreError(f"{self.path}: holds no tournament yet")
        return decode_stored(row[0])

    def begin(self, config: TournamentConfig, schedule: Sequence[ScheduledGame]) -> bool:
        """Store a new tournament and its schedule; False if it is already there (a resume).

        StoreError if the file holds a different tournament.
        """
        stored = self.tournament()
        fingerprint = config.fingerprint()
        if stored is not None:
            if stored[2] != fingerprint:
                raise StoreError(
                    f"{self.path} holds tournament {stored[0]!r} with other settings; "
                    "use another --db to start a new one, or the original file to resume"
                )
            return False
        try:
            with self._transaction():
                self.db.execute(
                    "INSERT INTO tournament VALUES (1, ?, ?, ?, ?, ?, ?)",
                    (
                        SCHEMA_VERSION,
                        config.name,
                        config.game,
                        fingerprint,
                        msgspec.json.encode(config).decode(),
                        _now(),
                    ),
                )
                self.db.executemany(
                    "INSERT INTO entrant VALUES (?, ?, ?, ?)",
                    [
                        (i, e.name, msgspec.json.encode(e.bot.command).decode(), e.bot.cwd)
                        for i, e in enumerate(config.entrants)
                    ],
                )
                self.db.executemany(
                    "INSERT INTO schedule VALUES (?, ?, ?, ?, ?)",
                    [(g.index, g.table, g.row, g.seed, msgspec.json.encode(g.seating).decode()) for g in schedule],
                )
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot write: {exc}") from None
        return True

    def extend(self, fingerprint: str, config: TournamentConfig, entrants: int, games: Sequence[ScheduledGame]) -> None:
        """Grow the stored tournament (stored with ``fingerprint``) into ``config``, in one transaction.

        Entrants ``entrants`` onwards of ``config`` are new; ``games`` are the
        schedule's new games, numbered after the stored ones. Stored rows are
        never changed: the old results stay as they were and keep counting.
        A run killed at any moment leaves the store either grown or as it was.
        """
        try:
            with self._transaction():
                stored = self.db.execute("SELECT fingerprint FROM tournament").fetchone()
                if stored is None or stored[0] != fingerprint:
                    raise StoreError(f"{self.path}: changed by another run while this one grew it; run again")
                self.db.execute(
                    "UPDATE tournament SET fingerprint = ?, config = ?",
                    (config.fingerprint(), msgspec.json.encode(config).decode()),
                )
                self.db.executemany(
                    "INSERT INTO entrant VALUES (?, ?, ?, ?)",
                    [
                        (i, e.name, msgspec.json.encode(e.bot.command).decode(), e.bot.cwd)
                        for i, e in enumerate(config.entrants)
                        if i >= entrants
                    ],
                )
                self.db.executemany(
                    "INSERT INTO schedule VALUES (?, ?, ?, ?, ?)",
                    [(g.index, g.table, g.row, g.seed, msgspec.json.encode(g.seating).decode()) for g in games],
                )
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"{self.path}: cannot grow the tournament: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot write: {exc}") from None

    def schedule(self) -> list[ScheduledGame]:
        rows = self.db.execute("SELECT game, tbl, row, seed, seating FROM schedule ORDER BY game").fetchall()
        return [
            ScheduledGame(index=g, table=t, row=r, seed=s, seating=tuple(msgspec.json.decode(seating)))
            for g, t, r, s, seating in rows
        ]

    def pending(self) -> list[ScheduledGame]:
        """Scheduled games without a result or a harness error, in schedule order."""
        done = {row[0] for row in self.db.execute("SELECT game FROM result UNION SELECT game FROM harness_error")}
        return [game for game in self.schedule() if game.index not in done]

    def entrant_names(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT name FROM entrant ORDER BY idx")]

    # --- results -----------------------------------------------------------

    def record(self, game: ScheduledGame, record: MatchRecord) -> None:
        """Write one finished game, all of it or nothing."""
        self.record_batch([(game, record)], [])

    def record_harness_error(self, game: ScheduledGame, error: str, traceback: str) -> None:
        """Record that refereeing ``game`` failed: it is not rated and a resume does not play it again."""
        self.record_batch([], [(game, error, traceback)])

    def record_batch(
        self,
        done: Sequence[tuple[ScheduledGame, MatchRecord]],
        failed: Sequence[tuple[ScheduledGame, str, str]],
        versions: Sequence[int] | None = None,
    ) -> None:
        """Write finished games and harness errors (game, error, traceback) in one transaction: all or none.

        One transaction for the games that arrived together is what lets the
        store keep up with many workers: a commit costs more than the rows it
        writes (``tournaments.runner.StoreWriter`` groups them). A game in the batch that
        is already recorded fails the whole batch, which writes nothing.
        ``versions``: the bot version of each entrant, by entrant
        (``settle_versions``); without, the seats' versions are not known (NULL).
        """
        now = _now()
        results = []
        seats = []
        for game, record in done:
            result = record.result
            terminations = {t.seat: t for t in result.terminations}
            results.append(
                (game.index, now, record.seconds, result.ended_by, record.replay, _record_encoder.encode(record))
            )
            for seat, entrant in enumerate(game.seating):
                termination = terminations.get(seat)
                timing = record.timings[seat]
                seats.append(
                    (
                        game.index, seat, entrant, result.ranks[seat], result.scores[seat],
                        int(seat in result.winners),
                        None if termination is None else termination.kind,
                        None if termination is None else termination.reason,
                        timing.decisions, timing.total_ms, timing.max_ms,
                        None if versions is None else versions[entrant],
                    )
                )  # fmt: skip
        errors = [(game.index, now, error, traceback) for game, error, traceback in failed]
        try:
            with self._transaction():
                if results:
                    self.db.executemany("INSERT INTO result VALUES (?, ?, ?, ?, ?, ?)", results)
                    self.db.executemany(_INSERT_SEAT, seats)
                if errors:
                    self.db.executemany("INSERT INTO harness_error VALUES (?, ?, ?, ?)", errors)
        except sqlite3.IntegrityError:
            games = _games([*done, *failed])
            which = games if games.startswith("game ") else f"one of {games}"
            raise StoreError(f"{which} is already recorded in {self.path}") from None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot record {_games([*done, *failed])}: {exc}") from None

    def harness_errors(self) -> list[HarnessError]:
        """The games the harness failed to referee, in schedule order."""
        return [
            HarnessError(game=g, seating=msgspec.json.decode(seating), error=error, traceback=tb)
            for g, seating, error, tb in self.db.execute(
                "SELECT h.game, s.seating, h.error, h.traceback FROM harness_error h JOIN schedule s USING (game) "
                "ORDER BY h.game"
            )
        ]

    def finished(self) -> list[FinishedGame]:
        """Every finished game with its seats, in schedule order."""
        seats: dict[int, list[SeatRow]] = {}
        # NULL (a game recorded before versions) is version 1: the first version recorded is the one it played.
        version = "COALESCE(version, 1)" if self._has_versions() else "1"
        for g, seat, entrant, rank, score, won, term, reason, played_as in self.db.execute(
            f"SELECT game, seat, entrant, rank, score, won, termination, reason, {version} FROM seat ORDER BY game, seat"
        ):
            seats.setdefault(g, []).append(
                SeatRow(
                    seat=seat, entrant=entrant, rank=rank, score=score, won=bool(won), termination=term, reason=reason,
                    version=played_as,
                )
            )  # fmt: skip
        return [
            FinishedGame(game=g, table=t, row=r, seed=s, seconds=sec, ended_by=ended, replay=replay, seats=seats[g])
            for g, t, r, s, sec, ended, replay in self.db.execute(
                "SELECT r.game, s.tbl, s.row, s.seed, r.seconds, r.ended_by, r.replay "
                "FROM result r JOIN schedule s USING (game) ORDER BY r.game"
            )
        ]

    def counts(self) -> tuple[int, int]:
        """(finished games, scheduled games)."""
        done = self.db.execute("SELECT COUNT(*) FROM result").fetchone()[0]
        total = self.db.execute("SELECT COUNT(*) FROM schedule").fetchone()[0]
        return int(done), int(total)

    def _transaction(self) -> Transaction:
        return Transaction(self.db)


# The record column is JSON text; bytes would be stored as a BLOB and read back differently.
class _TextEncoder:
    def __init__(self) -> None:
        self._encoder = msgspec.json.Encoder()

    def encode(self, value: object) -> str:
        return self._encoder.encode(value).decode()


_record_encoder = _TextEncoder()


def _games(batch: Sequence[tuple[ScheduledGame, object] | tuple[ScheduledGame, str, str]]) -> str:
    """The games of a batch as an error names them: "game 7", or "games 7, 9, 12" (ten at most)."""
    indices = sorted(entry[0].index for entry in batch)
    if len(indices) == 1:
        return f"game {indices[0]}"
    return "games " + ", ".join(map(str, indices[:10])) + (", ..." if len(indices) > 10 else "")


def _changed_message(changed: list[tuple[str, int]]) -> str:
    """One line naming each changed entrant, with both ways on."""
    names = ", ".join(repr(name) for name, _ in changed)
    which = f"entrant {names}'s bot has" if len(changed) == 1 else f"the bots of entrants {names} have"
    flags = " ".join(f"--new-version {shlex.quote(name)}" for name, _ in changed)
    versions = ", ".join(f"{name} v{known + 1}" for name, known in changed)
    return (
        f"{which} changed since {'its' if len(changed) == 1 else 'their'} recorded games: a result belongs to the "
        f"code that earned it; give the changed bot a new entrant name in the tournament file, or run again with "
        f"{flags} to record it as {versions}, rated apart"
    )


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
