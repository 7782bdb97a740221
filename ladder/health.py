"""Each version's health: the games it ended by its own fault, and its suspension when they pile up.

A seat's fault is its termination in the match record: a timeout, a crash
(or a stall: output closed while running), an illegal action (under the
forfeit rule) or a protocol error. The other seats' faults are theirs; a
version's failures while check-bot checks it never reach the seat table (they
reject it instead). Counts are kept per version and kind in ``version_fault``,
updated in the transaction that records each game, so the leaderboard reads
one row per version instead of every seat it ever took.

A version whose most recent ``window`` games (``[ladder.health]``) hold at
least ``failed_fraction`` of ``window`` faults, rounded up, is suspended in
that same transaction, when the game just recorded is one of them. Its window
reaches back into its entrant's earlier versions' games: a resubmission starts
with its entrant's record, so resubmitting a failing bot again and again buys
one failing game each, not a fresh window each. Once suspended, its pending
games are cancelled, and the version its entrant used before, if it was
retired by being replaced (not by the host, not suspended itself), plays again. An accepted resubmission or the host (``lift``)
ends a suspension; a lift counts the version's window afresh from then.
"""

from __future__ import annotations

import math
import sqlite3

import msgspec

from tournaments.hosting.storage import Transaction

__all__ = [
    "FAULTS",
    "Health",
    "HealthRule",
    "Suspension",
    "count_faults",
    "failing_games",
    "health_of",
    "judge",
    "migrate_health",
]

FAULTS = ("timeout", "crash", "stall", "illegal", "protocol")
"""The terminations that are a seat's own fault ("resigned" is a person's choice, not a fault)."""


class HealthRule(msgspec.Struct, frozen=True, kw_only=True):
    window: int
    failed_fraction: float

    @property
    def threshold(self) -> int:
        """Faults among the last ``window`` games that suspend a version."""
        return max(1, math.ceil(self.window * self.failed_fraction - 1e-9))


class Health(msgspec.Struct, frozen=True, kw_only=True):
    """A version's games ended by its own fault, by kind, over all its games."""

    timeout: int = 0
    crash: int = 0
    """Crashes and stalls (output closed while the process ran on)."""
    illegal: int = 0
    protocol: int = 0
    failed: int = 0
    """All of the above."""


class Suspension(msgspec.Struct, frozen=True, kw_only=True):
    """A version suspended by the game just recorded, and the one that plays for its entrant instead."""

    version: int
    entrant: str
    number: int
    note: str
    reinstated: int | None
    """The version id that plays again, or None."""


def migrate_health(db: sqlite3.Connection) -> None:
    """Add what health needs to a store made before it, in place: three version columns, the fault
    counts (filled from the seats already recorded) and an index to read a version's recent games."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'seat_version_game'").fetchone() is not None:
        return  # made last: its presence says the rest is there
    with Transaction(db):  # looked at under the write lock: a second process may be migrating too
        columns = {row[1] for row in db.execute("PRAGMA table_info(version)")}
        fresh_counts = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'version_fault'").fetchone() is None
        for column in ("retired_by TEXT NOT NULL DEFAULT ''", "health_since INTEGER NOT NULL DEFAULT 0"):
            if column.split()[0] not in columns:
                db.execute(f"ALTER TABLE version ADD COLUMN {column}")
        if "suspension" not in columns:
            db.execute("ALTER TABLE version ADD COLUMN suspension TEXT NOT NULL DEFAULT ''")
        db.execute(
            "CREATE TABLE IF NOT EXISTS version_fault (version INTEGER NOT NULL REFERENCES version(id), "
            "kind TEXT NOT NULL, games INTEGER NOT NULL, PRIMARY KEY (version, kind))"
        )
        if fresh_counts:
            marks = ", ".join("?" * len(FAULTS))
            db.execute(
                "INSERT OR IGNORE INTO version_fault SELECT version, termination, COUNT(*) FROM seat "
                f"WHERE termination IN ({marks}) GROUP BY version, termination",
                FAULTS,
            )
        db.execute("CREATE INDEX IF NOT EXISTS seat_version_game ON seat(version, game)")


def count_faults(db: sqlite3.Connection, seats: list[tuple[int, str | None]]) -> None:
    """Count one game's faults: ``seats`` are (version, termination) pairs. Inside the caller's transaction."""
    for version, kind in seats:
        if kind in FAULTS:
            db.execute(
                "INSERT INTO version_fault VALUES (?, ?, 1) "
                "ON CONFLICT (version, kind) DO UPDATE SET games = games + 1",
                (version, kind),
            )


def health_of(db: sqlite3.Connection, versions: list[int] | None = None) -> dict[int, Health]:
    """Each version's fault counts (of the versions asked, or all); a version without faults is absent."""
    query, args = "SELECT version, kind, games FROM version_fault", list(versions or [])
    if versions is not None:
        if not versions:
            return {}
        query += f" WHERE version IN ({', '.join('?' * len(versions))})"
    counts: dict[int, dict[str, int]] = {}
    for version, kind, games in db.execute(query, args):
        counts.setdefault(version, {})[kind] = int(games)
    return {
        version: Health(
            timeout=kinds.get("timeout", 0),
            crash=kinds.get("crash", 0) + kinds.get("stall", 0),
            illegal=kinds.get("illegal", 0),
            protocol=kinds.get("protocol", 0),
            failed=sum(kinds.values()),
        )
        for version, kinds in counts.items()
    }


def _recent(db: sqlite3.Connection, version: int, window: int) -> list[tuple[int, int, str | None]]:
    """(game, version, termination) of the last ``window`` finished games of the version and of its entrant's
    earlier versions, since the newest of their windows last began (a lift).

    The earlier versions' games count so that a resubmission inherits its entrant's recent record: a
    stream of resubmissions of a failing bot cannot start each one with a clean window. They never
    count against an earlier version reinstated in a failing one's place.
    """
    lineage = db.execute(
        "SELECT o.id, o.health_since FROM version v JOIN version o ON o.entrant = v.entrant AND o.number <= v.number "
        "WHERE v.id = ?",
        (version,),
    ).fetchall()
    if not lineage:
        return []
    since = max(int(row[1]) for row in lineage)
    marks = ", ".join("?" * len(lineage))
    rows = db.execute(
        f"SELECT game, version, termination FROM seat WHERE version IN ({marks}) AND game > ? "
        "ORDER BY game DESC LIMIT ?",
        (*(row[0] for row in lineage), since, window),
    ).fetchall()
    return [(int(game), int(seated), term) for game, seated, term in rows]


def failing_games(db: sqlite3.Connection, version: int, limit: int = 50) -> list[int]:
    """The version's most recent games that it ended by its own fault, newest first: what its page links."""
    marks = ", ".join("?" * len(FAULTS))
    rows = db.execute(
        f"SELECT game FROM seat WHERE version = ? AND termination IN ({marks}) ORDER BY game DESC LIMIT ?",
        (version, *FAULTS, limit),
    )
    return [int(row[0]) for row in rows]


def judge(db: sqlite3.Connection, versions: list[int], rule: HealthRule) -> list[Suspension]:
    """Suspend each of ``versions`` (those that failed in the game just recorded) that is active and
    failing beyond ``rule``; inside the caller's transaction, which also cancels their pending games.

    Only a version's own fault suspends it: its entrant's earlier faults in its window (``_recent``)
    bring that moment closer, never cause it."""
    if rule.window == 0:
        return []
    suspended = []
    for version in dict.fromkeys(versions):
        row = db.execute(
            "SELECT v.state, v.entrant, v.number, e.name FROM version v JOIN entrant e ON e.id = v.entrant "
            "WHERE v.id = ?",
            (version,),
        ).fetchone()
        if row is None or row[0] != "active":
            continue
        recent = _recent(db, version, rule.window)
        faults = [kind for _, _, kind in recent if kind in FAULTS]
        if len(faults) < rule.threshold:
            continue
        kinds = ", ".join(f"{faults.count(kind)} {kind}" for kind in FAULTS if kind in faults)
        inherited = sum(1 for _, seated, kind in recent if seated != version and kind in FAULTS)
        earlier = f", {inherited} of them by the entrant's earlier versions" if inherited else ""
        note = (
            f"suspended: {len(faults)} of its last {len(recent)} games ended by its own fault ({kinds}{earlier}); "
            f"the ladder suspends a version at {rule.threshold} of {rule.window}. "
            "Fix it and submit again, or ask the host to lift the suspension"
        )
        db.execute("UPDATE version SET state = 'suspended', suspension = ? WHERE id = ?", (note, version))
        suspended.append(
            Suspension(
                version=version, entrant=row[3], number=row[2], note=note, reinstated=_reinstate(db, row[1], row[2])
            )
        )
    return suspended


def _reinstate(db: sqlite3.Connection, entrant: int, below: int) -> int | None:
    """The entrant's newest version below number ``below`` that a newer one replaced, active again; its id.

    Only while nothing else of the entrant is active (a resubmission accepted meanwhile plays instead).
    """
    if db.execute("SELECT 1 FROM version WHERE entrant = ? AND state = 'active'", (entrant,)).fetchone():
        return None
    row = db.execute(
        "SELECT id FROM version WHERE entrant = ? AND number < ? AND state = 'retired' AND retired_by = 'replaced' "
        "ORDER BY number DESC LIMIT 1",
        (entrant, below),
    ).fetchone()
    if row is None:
        return None
    db.execute("UPDATE version SET state = 'active', retired_by = '' WHERE id = ?", (row[0],))
    return int(row[0])
