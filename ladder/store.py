"""The ladder's store: one SQLite file (WAL) of entrants, their versions, tables and games.

Crash safety is in the order of writes, as in ``tournaments.store``: an upload
is on disk before its version row names it; a table and all its rotations are
one transaction; a game moves pending -> running -> done in single
transactions, its seats and the ratings it changed written with it. A server
killed at any moment (SIGKILL included) therefore restarts with every
accepted version and every finished game exactly once; ``reset_running``
turns the games it was playing back into pending ones, played again.

One process (the server) writes; the CLI's ``add-entrant`` writes one row
between its runs or beside it (SQLite serialises the two).
"""

from __future__ import annotations

import datetime
import hmac
import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from ladder.health import FAULTS, HealthRule, Suspension, count_faults, judge, migrate_health
from ladder.matchmaking import Candidate
from ladder.tallies import game_counts, migrate_tallies
from tournaments.hosting.storage import Transaction, open_private_database, tighten_database

if TYPE_CHECKING:
    from referee.match import MatchRecord

__all__ = [
    "EntrantRow",
    "FailedGame",
    "GameRow",
    "LadderStore",
    "RateLimited",
    "RatedSeats",
    "SeatRow",
    "Unknown",
    "VersionRow",
    "VersionState",
    "fit_input",
    "hash_token",
    "new_token",
]

VersionState = Literal["queued", "checking", "rejected", "active", "suspended", "retired"]
GameRowState = Literal["pending", "running", "done", "failed", "cancelled"]
RatedSeats = tuple[list[int], list[int]]
"""A finished game as a fit reads it: its seats' version ids and their ranks, seat by seat."""

_GAMES_A_QUERY = 10_000
"""Games whose seats ``games`` reads in one statement (each game is one of SQLite's variables)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    deal_key BLOB NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS setting (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entrant (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS version (
    id INTEGER PRIMARY KEY,
    entrant INTEGER NOT NULL REFERENCES entrant(id),
    number INTEGER NOT NULL,
    digest TEXT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    report TEXT NOT NULL DEFAULT '',
    submitted TEXT NOT NULL,
    submitted_at REAL NOT NULL,
    decided TEXT,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    UNIQUE (entrant, number)
);
CREATE TABLE IF NOT EXISTS tables (
    id INTEGER PRIMARY KEY,
    seed INTEGER NOT NULL,
    members TEXT NOT NULL,
    challenger INTEGER REFERENCES entrant(id),
    created_at REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS game (
    id INTEGER PRIMARY KEY,
    table_id INTEGER NOT NULL REFERENCES tables(id),
    seating TEXT NOT NULL,
    state TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    finished TEXT,
    seconds REAL,
    ended_by TEXT,
    replay TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS game_state ON game(state);
CREATE INDEX IF NOT EXISTS game_table ON game(table_id);
CREATE TABLE IF NOT EXISTS seat (
    game INTEGER NOT NULL REFERENCES game(id),
    seat INTEGER NOT NULL,
    version INTEGER NOT NULL REFERENCES version(id),
    rank INTEGER NOT NULL,
    score INTEGER NOT NULL,
    termination TEXT,
    reason TEXT,
    mu_after REAL NOT NULL,
    sigma_after REAL,
    PRIMARY KEY (game, seat)
);
CREATE INDEX IF NOT EXISTS seat_version ON seat(version);
CREATE TABLE IF NOT EXISTS session (
    id_hash TEXT PRIMARY KEY,
    entrant INTEGER NOT NULL REFERENCES entrant(id),
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS session_entrant ON session(entrant);
CREATE TABLE IF NOT EXISTS invite (
    code_hash TEXT PRIMARY KEY,
    uses_left INTEGER NOT NULL,
    expires_at REAL NOT NULL,
    created TEXT NOT NULL
);
"""


class RateLimited(ValueError):
    """An entrant sent more submissions than the ladder takes per hour."""


class Unknown(ValueError):
    """The host named an entrant or a game the ladder does not have (the admin API answers 404 to it)."""


class EntrantRow(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    name: str
    created: str


class VersionRow(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    entrant: str
    number: int
    digest: str
    state: VersionState
    reason: str
    submitted: str
    mu: float
    sigma: float
    games: int
    suspension: str = ""
    """Why the version was suspended (ladder.health), kept after a resubmission replaced it; empty if never."""

    @property
    def ordinal(self) -> float:
        """The leaderboard's number: mu - 3 sigma, what the version is surely at least worth."""
        return self.mu - 3 * self.sigma


class SeatRow(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    version: int
    entrant: str
    number: int
    rank: int
    score: int
    termination: str | None
    reason: str | None


class GameRow(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    table: int
    seed: int
    state: GameRowState
    seating: list[int]
    finished: str | None
    seconds: float | None
    ended_by: str | None
    replay: str | None
    seats: list[SeatRow]


class FailedGame(msgspec.Struct, frozen=True, kw_only=True):
    """A game the harness failed to referee, for the host to play again."""

    id: int
    table: int
    finished: str | None
    error: str


def new_token() -> str:
    """A fresh secret: 32 random bytes, URL-safe text."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """What the store keeps of a token. A token is 256 random bits, so a plain SHA-256 cannot be
    reversed by guessing; a slow password hash would only slow every request down."""
    import hashlib

    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _rename_tables(db: sqlite3.Connection) -> None:
    """A store made before its tables were named so: ``tbl`` becomes ``tables`` and the game's column
    ``tbl`` becomes ``table_id``, in place (SQLite renames the references with them)."""

    def named() -> set[str]:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    if "tbl" not in named():
        return
    with Transaction(db):  # looked at again under the write lock: a second process may have renamed them
        if "tbl" in named() and "tables" not in named():
            db.execute("ALTER TABLE tbl RENAME TO tables")
            db.execute("ALTER TABLE game RENAME COLUMN tbl TO table_id")


def _add_missing_columns(db: sqlite3.Connection) -> None:
    """Columns added to a table after ladders were made with it, added to an older store at open.

    ``seat.sigma_after`` (the rating's sigma after the game, for the entrant page's interval band) is
    NULL in the games an older ladder recorded: their band is not drawn.
    """
    columns = {row[1] for row in db.execute("PRAGMA table_info(seat)")}
    if "sigma_after" not in columns:
        try:
            db.execute("ALTER TABLE seat ADD COLUMN sigma_after REAL")
        except sqlite3.OperationalError:  # the server and a command opened it at once: the other one added it
            if "sigma_after" not in {row[1] for row in db.execute("PRAGMA table_info(seat)")}:
                raise


class LadderStore:
    """A ladder's SQLite file, created 0600 on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            # Used from the Trio thread and from worker threads (check-bot runs in one); the
            # server serialises access, SQLite's busy timeout covers the CLI writing beside it.
            self.db = open_private_database(path)
            _rename_tables(self.db)
            self.db.executescript(_SCHEMA)
            _add_missing_columns(self.db)
            migrate_health(self.db)
            migrate_tallies(self.db)
            self.db.execute("INSERT OR IGNORE INTO ladder VALUES (1, ?, ?)", (secrets.token_bytes(32), _now()))
            tighten_database(path)
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{path}: cannot use as a ladder store: {exc}") from None

    @classmethod
    def reader(cls, path: Path) -> LadderStore:
        """Another connection to a store already open (made whole, migrated) elsewhere, for reading in a
        worker thread: no migrations, nothing written."""
        store = cls.__new__(cls)
        store.path, store.db = path, open_private_database(path)
        return store

    def close(self) -> None:
        self.db.close()

    def transaction(self) -> Transaction:
        """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error), for this store and for modules that keep tables of
        their own here (ladder.invites)."""
        return Transaction(self.db)

    def deal_key(self) -> bytes:
        """The secret every deal seed is keyed with: entrants cannot compute a deal from a table's number."""
        return bytes(self.db.execute("SELECT deal_key FROM ladder").fetchone()[0])

    # --- entrants ------------------------------------------------------------

    def add_entrant(self, name: str, token: str) -> int:
        """Register ``name`` with ``token`` (kept only as its hash); ValueError if the name is taken, in any case."""
        with self.transaction():
            return self.insert_entrant(name, token)

    def insert_entrant(self, name: str, token: str) -> int:
        """``add_entrant`` inside a transaction the caller holds (an invite is spent in the same one).

        ``ALICE`` beside ``alice`` would be an impersonation on every page, so names are
        compared without case; the caller's immediate transaction makes check and insert one step.
        """
        taken = self.db.execute("SELECT name FROM entrant WHERE name = ? COLLATE NOCASE", (name,)).fetchone()
        if taken is not None:
            differs = "" if taken[0] == name else f" (names that differ only in case are one name: not {name!r})"
            raise ValueError(f"an entrant named {taken[0]!r} is already registered{differs}; choose another")
        cursor = self.db.execute(
            "INSERT INTO entrant (name, token_hash, created) VALUES (?, ?, ?)", (name, hash_token(token), _now())
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def entrant_for_token(self, token: str) -> EntrantRow | None:
        """The entrant holding ``token``, or None.

        Every stored hash is compared, in constant time each, and the loop never
        stops early: how long this takes says nothing about which hash came close.
        """
        wanted = hash_token(token)
        found: EntrantRow | None = None
        for entrant_id, name, stored, created in self.db.execute("SELECT id, name, token_hash, created FROM entrant"):
            if hmac.compare_digest(stored, wanted):
                found = EntrantRow(id=entrant_id, name=name, created=created)
        return found

    def entrant(self, name: str) -> EntrantRow | None:
        row = self.db.execute("SELECT id, name, created FROM entrant WHERE name = ?", (name,)).fetchone()
        return None if row is None else EntrantRow(id=row[0], name=row[1], created=row[2])

    def entrants(self) -> list[EntrantRow]:
        rows = self.db.execute("SELECT id, name, created FROM entrant ORDER BY id").fetchall()
        return [EntrantRow(id=i, name=n, created=c) for i, n, c in rows]

    # --- versions ------------------------------------------------------------

    def check_rate(self, entrant: int, per_hour: int) -> None:
        """RateLimited when ``entrant`` sent ``per_hour`` submissions in the last hour: asked before an
        upload is written, so a refused one leaves nothing on disk."""
        now = datetime.datetime.now(datetime.UTC).timestamp()
        recent = self.db.execute(
            "SELECT COUNT(*) FROM version WHERE entrant = ? AND submitted_at > ?", (entrant, now - 3600)
        ).fetchone()[0]
        if recent >= per_hour:
            raise RateLimited(f"at most {per_hour} submissions an hour; try again later")

    def add_version(self, entrant: int, digest: str, prior: tuple[float, float], per_hour: int) -> VersionRow:
        """A new queued version of ``entrant`` (its upload already on disk); RateLimited past ``per_hour``."""
        now = datetime.datetime.now(datetime.UTC).timestamp()
        with self.transaction():
            self.check_rate(entrant, per_hour)
            number = self.db.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM version WHERE entrant = ?", (entrant,)
            ).fetchone()[0]
            cursor = self.db.execute(
                "INSERT INTO version (entrant, number, digest, state, submitted, submitted_at, mu, sigma) "
                "VALUES (?, ?, ?, 'queued', ?, ?, ?, ?)",
                (entrant, number, digest, _now(), now, prior[0], prior[1]),
            )
        assert cursor.lastrowid is not None
        return self.version(cursor.lastrowid)

    _VERSION_SELECT = (
        # v.games is kept by the store's triggers (ladder.tallies): counting seats here cost seconds at scale
        "SELECT v.id, e.name, v.number, v.digest, v.state, v.reason, v.submitted, v.mu, v.sigma, v.games, "
        "v.suspension FROM version v JOIN entrant e ON e.id = v.entrant "
    )

    @staticmethod
    def _version_row(row: tuple[Any, ...]) -> VersionRow:
        # Built directly from the columns of _VERSION_SELECT, in its order: the store's own values, of the
        # types it wrote, so no conversion (msgspec.convert of every row was a third of the board's time).
        (id_, entrant, number, digest, state, reason, submitted, mu, sigma, games, suspension) = row
        return VersionRow(
            id=id_,
            entrant=entrant,
            number=number,
            digest=digest,
            state=state,
            reason=reason,
            submitted=submitted,
            mu=mu,
            sigma=sigma,
            games=games,
            suspension=suspension,
        )

    def version(self, version_id: int) -> VersionRow:
        row = self.db.execute(self._VERSION_SELECT + "WHERE v.id = ?", (version_id,)).fetchone()
        if row is None:
            raise KeyError(version_id)
        return self._version_row(row)

    def versions(self, *, entrant: str | None = None, states: tuple[VersionState, ...] = ()) -> list[VersionRow]:
        """Versions by id, of one entrant and in some states when asked."""
        where, args = ["1"], []
        if entrant is not None:
            where.append("e.name = ?")
            args.append(entrant)
        if states:
            where.append(f"v.state IN ({', '.join('?' * len(states))})")
            args.extend(states)
        rows = self.db.execute(self._VERSION_SELECT + f"WHERE {' AND '.join(where)} ORDER BY v.id", args)
        return [self._version_row(row) for row in rows]

    def candidates(self) -> list[Candidate]:
        """The active versions as matchmaking weighs them, by id: only the four numbers it reads, which at
        2,000 active versions take half the time of their whole rows (``versions``)."""
        rows = self.db.execute("SELECT id, games, mu, sigma FROM version WHERE state = 'active' ORDER BY id")
        return [Candidate(version=v, games=n, mu=mu, sigma=sigma) for v, n, mu, sigma in rows]

    def active_owners(self) -> dict[int, str]:
        """Each active version's entrant, by version id: whose share of the ladder a version's games count in."""
        rows = self.db.execute(
            "SELECT v.id, e.name FROM version v JOIN entrant e ON e.id = v.entrant WHERE v.state = 'active'"
        )
        return {int(version): str(name) for version, name in rows}

    def report(self, version_id: int) -> str:
        """The check-bot report of a version (JSON), empty while it was not checked."""
        row = self.db.execute("SELECT report FROM version WHERE id = ?", (version_id,)).fetchone()
        return "" if row is None else str(row[0])

    def set_checking(self, version_id: int) -> None:
        with self.transaction():
            self.db.execute("UPDATE version SET state = 'checking' WHERE id = ? AND state = 'queued'", (version_id,))

    def decide(self, version_id: int, *, accepted: bool, reason: str, report: str) -> None:
        """Record check-bot's verdict. An accepted version becomes its entrant's active one: the one
        active before is retired (replaced) and a suspended one retired with its suspension ended, their
        games not yet started cancelled. A rejected one changes nothing else (a suspension stays).

        Checks run several at once, so an entrant's two versions may be decided out of order: an
        accepted version older than one already accepted is retired at once, the newer keeps playing.
        """
        with self.transaction():
            entrant, number = self.db.execute(
                "SELECT entrant, number FROM version WHERE id = ?", (version_id,)
            ).fetchone()
            state = "active" if accepted else "rejected"
            newer = self.db.execute(
                "SELECT 1 FROM version WHERE entrant = ? AND number > ? AND state IN ('active', 'suspended', 'retired')",
                (entrant, number),
            ).fetchone()
            if accepted and newer is not None:
                state = "retired"
                self.db.execute("UPDATE version SET retired_by = 'replaced' WHERE id = ?", (version_id,))
            elif accepted:
                replaced = [
                    row[0]
                    for row in self.db.execute(
                        "SELECT id FROM version WHERE entrant = ? AND state IN ('active', 'suspended')", (entrant,)
                    )
                ]
                self.db.execute(
                    "UPDATE version SET retired_by = CASE state WHEN 'active' THEN 'replaced' ELSE 'suspended' END, "
                    "state = 'retired' WHERE entrant = ? AND state IN ('active', 'suspended')",
                    (entrant,),
                )
                self._cancel_pending(replaced)
            self.db.execute(
                "UPDATE version SET state = ?, reason = ?, report = ?, decided = ? WHERE id = ?",
                (state, reason, report, _now(), version_id),
            )

    def _cancel_pending(self, versions: list[int]) -> None:
        if not versions:
            return
        for game_id, seating in self.db.execute("SELECT id, seating FROM game WHERE state = 'pending'").fetchall():
            if set(msgspec.json.decode(seating, type=list[int])) & set(versions):
                self.db.execute("UPDATE game SET state = 'cancelled' WHERE id = ?", (game_id,))

    # --- tables and games ----------------------------------------------------

    def add_table(self, seed_of: int, members: list[int], seatings: list[list[int]]) -> int:
        """A table of ``members`` (version ids) and its games, one per seating, all pending, in one transaction.

        ``seed_of`` is turned into the deal keyed with the store's secret and
        the table's id (only known here).
        """
        with self.transaction():
            return self._insert_table(seed_of, members, seatings, challenger=None)

    def add_challenge(
        self, challenger: int, per_hour: int, seed_of: int, members: list[int], seatings: list[list[int]]
    ) -> int:
        """A table an entrant asked for: played before the loop's own tables; RateLimited past ``per_hour``."""
        with self.transaction():
            recent = self.db.execute(
                "SELECT COUNT(*) FROM tables WHERE challenger = ? AND created_at > ?",
                (challenger, datetime.datetime.now(datetime.UTC).timestamp() - 3600),
            ).fetchone()[0]
            if recent >= per_hour:
                raise RateLimited(f"at most {per_hour} challenges an hour; try again later")
            return self._insert_table(seed_of, members, seatings, challenger=challenger)

    def _insert_table(
        self, seed_of: int, members: list[int], seatings: list[list[int]], *, challenger: int | None
    ) -> int:
        from tournaments.hosting.schedule import deal_seed

        cursor = self.db.execute(
            "INSERT INTO tables (seed, members, challenger, created_at) VALUES (0, ?, ?, ?)",
            (msgspec.json.encode(members), challenger, datetime.datetime.now(datetime.UTC).timestamp()),
        )
        table = cursor.lastrowid
        assert table is not None
        self.db.execute("UPDATE tables SET seed = ? WHERE id = ?", (deal_seed(seed_of, table, self.deal_key()), table))
        self.db.executemany(
            "INSERT INTO game (table_id, seating, state, priority) VALUES (?, ?, 'pending', ?)",
            [(table, msgspec.json.encode(seating), int(challenger is not None)) for seating in seatings],
        )
        return table

    def reset_running(self) -> list[int]:
        """After a restart: the games that were being played are pending again (their ids)."""
        with self.transaction():
            ids = [row[0] for row in self.db.execute("SELECT id FROM game WHERE state = 'running'")]
            self.db.execute("UPDATE game SET state = 'pending' WHERE state = 'running'")
        return ids

    def put_back(self, game_id: int) -> None:
        """A running game that could not be played now (its cluster went away) is pending again, played later."""
        with self.transaction():
            self.db.execute("UPDATE game SET state = 'pending' WHERE id = ? AND state = 'running'", (game_id,))

    def start_next(
        self, choose: Callable[[list[tuple[int, list[int]]]], int | None] | None = None
    ) -> tuple[int, int, list[int]] | None:
        """The next pending game, now running: (game id, deal seed, seating); None when none is pending.

        Without ``choose``, a challenge's first, else the oldest. ``choose`` is given the pending games'
        (table id, seating) in that order and names the one to start by its index, or None to start none.
        """
        with self.transaction():
            rows = self.db.execute(
                "SELECT g.id, t.seed, g.seating, g.table_id FROM game g JOIN tables t ON t.id = g.table_id "
                "WHERE g.state = 'pending' ORDER BY g.priority DESC, g.id" + ("" if choose else " LIMIT 1")
            ).fetchall()
            if not rows:
                return None
            pending = [(int(r[3]), msgspec.json.decode(r[2], type=list[int])) for r in rows] if choose else []
            index = 0 if choose is None else choose(pending)
            if index is None:
                return None
            row = rows[index]
            self.db.execute("UPDATE game SET state = 'running' WHERE id = ?", (row[0],))
        return row[0], row[1], msgspec.json.decode(row[2], type=list[int])

    # --- the host's controls (famiglia ladder pause, resume, retire, requeue; the admin page) ---

    def paused(self) -> bool:
        row = self.db.execute("SELECT value FROM setting WHERE key = 'paused'").fetchone()
        return row is not None and row[0] == "1"

    def set_paused(self, paused: bool) -> None:
        """Stop or restart dealing games; games in play finish. Read by the server before each game."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO setting VALUES ('paused', ?)", ("1" if paused else "0",))

    def retire(self, name: str) -> int:
        """Retire ``name``'s active version (its number) and cancel its games not yet started.

        ValueError when there is no such entrant or it has no active version.
        A later accepted submission makes the entrant play again.
        """
        with self.transaction():
            row = self.db.execute(
                "SELECT v.id, v.number FROM version v JOIN entrant e ON e.id = v.entrant "
                "WHERE e.name = ? AND v.state = 'active'",
                (name,),
            ).fetchone()
            if row is None:
                if self.entrant(name) is None:
                    raise Unknown(f"there is no entrant named {name!r}")
                raise ValueError(f"{name!r} has no active version to retire")
            self.db.execute("UPDATE version SET state = 'retired', retired_by = 'host' WHERE id = ?", (row[0],))
            self._cancel_pending([row[0]])
        return int(row[1])

    def lift(self, name: str) -> int:
        """End the suspension of ``name``'s newest suspended version (its number): it plays again, its health
        window counted afresh from now, and a version reinstated in its place is retired again.

        Unknown for an entrant the ladder does not have, ValueError when none of its versions is suspended.
        """
        with self.transaction():
            row = self.db.execute(
                "SELECT v.id, v.number, v.entrant FROM version v JOIN entrant e ON e.id = v.entrant "
                "WHERE e.name = ? AND v.state = 'suspended' ORDER BY v.number DESC LIMIT 1",
                (name,),
            ).fetchone()
            if row is None:
                if self.entrant(name) is None:
                    raise Unknown(f"there is no entrant named {name!r}")
                raise ValueError(f"{name!r} has no suspended version to lift")
            version, number, entrant = row
            stand_ins = [
                r[0]
                for r in self.db.execute("SELECT id FROM version WHERE entrant = ? AND state = 'active'", (entrant,))
            ]
            self.db.execute(
                "UPDATE version SET state = 'retired', retired_by = 'replaced' WHERE entrant = ? AND state = 'active'",
                (entrant,),
            )
            self._cancel_pending(stand_ins)
            (last_game,) = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM game").fetchone()
            self.db.execute(
                "UPDATE version SET state = 'active', suspension = '', health_since = ? WHERE id = ?",
                (last_game, version),
            )
        return int(number)

    def requeue(self, game_id: int) -> None:
        """Play a game the harness failed to referee again; ValueError for any other game."""
        with self.transaction():
            row = self.db.execute("SELECT state FROM game WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                raise Unknown(f"there is no game {game_id}")
            if row[0] != "failed":
                raise ValueError(f"game {game_id} is {row[0]}; only a failed game is played again")
            (seating,) = self.db.execute("SELECT seating FROM game WHERE id = ?", (game_id,)).fetchone()
            # A game of a version that stopped playing would never start (the loop holds bots of active
            # versions only): say so now rather than queue a game that waits for ever.
            for version in msgspec.json.decode(seating, type=list[int]):
                name, number, state = self.db.execute(
                    "SELECT e.name, v.number, v.state FROM version v JOIN entrant e ON e.id = v.entrant WHERE v.id = ?",
                    (version,),
                ).fetchone()
                if state != "active":
                    raise ValueError(
                        f"game {game_id} cannot be played again: version {number} of {name} is {state} "
                        "(only a game whose every version still plays is requeued)"
                    )
            self.db.execute("UPDATE game SET state = 'pending', error = NULL, finished = NULL WHERE id = ?", (game_id,))

    def failed_games(self, limit: int = 100) -> list[FailedGame]:
        """The games the harness failed to referee, newest first: what ``requeue`` takes."""
        rows = self.db.execute(
            "SELECT id, table_id, finished, COALESCE(error, '') FROM game WHERE state = 'failed' ORDER BY id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [FailedGame(id=g, table=t, finished=f, error=e) for g, t, f, e in rows]

    def set_admin_token(self, token: str) -> None:
        """Keep the hash of the admin page's token; the token it replaces stops working at once."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO setting VALUES ('admin_token_hash', ?)", (hash_token(token),))

    def is_admin_token(self, token: str) -> bool:
        """Whether ``token`` is the admin token, compared in constant time; False while the host made none.

        Only this one hash is compared: an entrant's token, kept in another table, never matches.
        """
        row = self.db.execute("SELECT value FROM setting WHERE key = 'admin_token_hash'").fetchone()
        return row is not None and hmac.compare_digest(str(row[0]), hash_token(token))

    def counts(self) -> dict[str, int]:
        """How many games are in each state that has any (kept by the store's triggers: ladder.tallies)."""
        return game_counts(self.db)

    def finish(self, game_id: int, record: MatchRecord, health: HealthRule | None = None) -> list[Suspension]:
        """Record a played game, its seats, the ratings it moved and its seats' faults, all at once;
        ValueError if it was not running (recorded already, or cancelled by a restart's reset): never twice.

        With ``health``, a seated version failing beyond it is suspended in the same transaction (its
        pending games cancelled, its entrant's previous version reinstated): the suspensions made.
        """
        from ladder.rating import rate_table

        result = record.result
        with self.transaction():
            row = self.db.execute("SELECT state, seating FROM game WHERE id = ?", (game_id,)).fetchone()
            if row is None or row[0] != "running":
                raise ValueError(f"game {game_id} is not being played; not recorded again")
            seating = msgspec.json.decode(row[1], type=list[int])
            before = [self.db.execute("SELECT mu, sigma FROM version WHERE id = ?", (v,)).fetchone() for v in seating]
            after = rate_table([(mu, sigma) for mu, sigma in before], result.ranks)
            terminations = {t.seat: t for t in result.terminations}
            self.db.execute(
                "UPDATE game SET state = 'done', finished = ?, seconds = ?, ended_by = ?, replay = ? WHERE id = ?",
                (_now(), record.seconds, result.ended_by, record.replay, game_id),
            )
            for seat, version in enumerate(seating):
                ended = terminations.get(seat)
                self.db.execute(
                    "INSERT INTO seat VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        game_id,
                        seat,
                        version,
                        result.ranks[seat],
                        result.scores[seat],
                        ended.kind if ended else None,
                        ended.reason if ended else None,
                        after[seat][0],
                        after[seat][1],
                    ),
                )
                self.db.execute("UPDATE version SET mu = ?, sigma = ? WHERE id = ?", (*after[seat], version))
            count_faults(
                self.db,
                [(v, terminations[s].kind if s in terminations else None) for s, v in enumerate(seating)],
            )
            faulted = [v for s, v in enumerate(seating) if s in terminations and terminations[s].kind in FAULTS]
            suspended = judge(self.db, faulted, health) if health is not None else []
            self._cancel_pending([s.version for s in suspended])
        return suspended

    def fail(self, game_id: int, error: str) -> None:
        """The harness could not referee a game: kept with its error, not rated, not played again."""
        with self.transaction():
            self.db.execute(
                "UPDATE game SET state = 'failed', finished = ?, error = ? WHERE id = ? AND state = 'running'",
                (_now(), error, game_id),
            )

    def games(
        self,
        *,
        entrant: str | None = None,
        game_id: int | None = None,
        before: int | None = None,
        limit: int = 50,
        version_number: int | None = None,
        opponent: str | None = None,
    ) -> list[GameRow]:
        """Finished games, newest first; of one entrant (any of its versions) or one game when asked; with
        ``before``, only games numbered below it (the next page of a list that ended there). With
        ``entrant``, ``version_number`` keeps the games of that version of it and ``opponent`` those where the
        entrant ``opponent`` sat too (an entrant page's matchup cell)."""
        where: list[str] = ["g.state = 'done'"]
        args: list[object] = []
        if before is not None:
            where.append("g.id < ?")
            args.append(before)
        if game_id is not None:
            where.append("g.id = ?")
            args.append(game_id)
        if entrant is not None:
            where.append(
                "g.id IN (SELECT s.game FROM seat s JOIN version v ON v.id = s.version "
                "JOIN entrant e ON e.id = v.entrant WHERE e.name = ?)"
            )
            args.append(entrant)
            if version_number is not None:
                where.append(
                    "g.id IN (SELECT s.game FROM seat s JOIN version v ON v.id = s.version "
                    "JOIN entrant e ON e.id = v.entrant WHERE e.name = ? AND v.number = ?)"
                )
                args.extend((entrant, version_number))
        if opponent is not None:
            where.append(
                "g.id IN (SELECT s.game FROM seat s JOIN version v ON v.id = s.version "
                "JOIN entrant e ON e.id = v.entrant WHERE e.name = ?)"
            )
            args.append(opponent)
        rows = self.db.execute(
            "SELECT g.id, g.table_id, t.seed, g.state, g.seating, g.finished, g.seconds, g.ended_by, g.replay "
            f"FROM game g JOIN tables t ON t.id = g.table_id WHERE {' AND '.join(where)} ORDER BY g.id DESC LIMIT ?",
            [*args, limit],
        ).fetchall()
        seats: dict[int, list[SeatRow]] = {}
        # The games' seats, a bounded number of games at a time: SQLite takes at most 32,766 variables in a
        # statement, and with limit=-1 a ladder of more games failed here ("too many SQL variables").
        for start in range(0, len(rows), _GAMES_A_QUERY):
            chunk = [row[0] for row in rows[start : start + _GAMES_A_QUERY]]
            for g, seat, version, name, number, rank, score, term, reason in self.db.execute(
                "SELECT s.game, s.seat, s.version, e.name, v.number, s.rank, s.score, s.termination, s.reason "
                "FROM seat s JOIN version v ON v.id = s.version JOIN entrant e ON e.id = v.entrant "
                f"WHERE s.game IN ({', '.join('?' * len(chunk))}) ORDER BY s.game, s.seat",
                chunk,
            ):
                seats.setdefault(g, []).append(
                    SeatRow(
                        seat=seat,
                        version=version,
                        entrant=name,
                        number=number,
                        rank=rank,
                        score=score,
                        termination=term,
                        reason=reason,
                    )
                )
        return [
            GameRow(
                id=g,
                table=t,
                seed=seed,
                state=state,
                seating=msgspec.json.decode(seating, type=list[int]),
                finished=fin,
                seconds=sec,
                ended_by=ended,
                replay=replay,
                seats=seats.get(g, []),
            )
            for g, t, seed, state, seating, fin, sec, ended, replay in rows
        ]

    def table_finished(self, table: int) -> bool:
        """Whether every game of a table is over: only then may its deal be shown (its rotations share it)."""
        row = self.db.execute(
            "SELECT COUNT(*) FROM game WHERE table_id = ? AND state IN ('pending', 'running')", (table,)
        ).fetchone()
        return int(row[0]) == 0

    def matchups(self, entrant: str) -> list[tuple[str, int, int, int]]:
        """(opponent, games, times ahead, times behind) of ``entrant``'s versions against each other entrant.

        Read from the pairs the store counts as seats are written (``ladder.tallies``): pairing an entrant's
        seats with its games' other seats here cost seconds for an entrant of 80,000 games.
        """
        rows = self.db.execute(
            "SELECT oe.name, SUM(m.games), SUM(m.ahead), SUM(m.behind) FROM version_matchup m "
            "JOIN version mv ON mv.id = m.version JOIN entrant e ON e.id = mv.entrant "
            "JOIN entrant oe ON oe.id = m.opponent WHERE e.name = ? GROUP BY oe.name ORDER BY oe.name",
            (entrant,),
        ).fetchall()
        return [(name, int(n), int(ahead), int(behind)) for name, n, ahead, behind in rows]

    def rating_history(self, version_id: int) -> list[float]:
        """The version's mu after each of its games, oldest first."""
        rows = self.db.execute("SELECT mu_after FROM seat WHERE version = ? ORDER BY game", (version_id,))
        return [float(row[0]) for row in rows]

    def rated_games(self) -> list[RatedSeats]:
        """Every finished game's versions and ranks, seat by seat, newest game first: what a fit reads.

        Only the three numbers of each seat, not ``games``' rows: two million games read as ``GameRow`` took
        minutes and gigabytes. Seats are written only with their game done (``finish``), so every seat is one
        of a finished game's.
        """
        return _rated_games(self.db)


def _rated_games(db: sqlite3.Connection) -> list[RatedSeats]:
    games: list[RatedSeats] = []
    last = None
    for game, version, rank in db.execute("SELECT game, version, rank FROM seat ORDER BY game DESC, seat"):
        if game != last:
            games.append(([], []))
            last = game
        games[-1][0].append(version)
        games[-1][1].append(rank)
    return games


def fit_input(path: Path) -> tuple[list[RatedSeats], list[VersionRow]]:
    """The finished games (``rated_games``) and every version, read together on a connection of its own.

    For the scheduled fit's worker thread: reading two million games takes seconds, which on the server's
    connection would hold the Trio thread (and every page) that long. One read transaction, so the games
    and the versions are of the same moment.
    """
    store = LadderStore.reader(path)
    try:
        store.db.execute("BEGIN")
        return _rated_games(store.db), store.versions()
    finally:
        store.db.close()
