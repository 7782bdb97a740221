"""Counts the ladder's pages read on every request, kept current by the store itself as it is written.

At a large contest's size (two million games, seven million seats) counting
them on each read cost seconds: the leaderboard counted every version's seats,
matchmaking did the same for each active version before dealing a table, the
board's summary line counted every game by state, and an entrant's page
paired each of its seats with the other seats of its game. So the store keeps
the counts beside what they count, in SQLite triggers:

- a game inserted or moved to another state moves one between the rows of
  ``game_tally`` (games by state);
- a seat inserted adds one to its version's ``games``, and pairs it with the
  seats of its game already there, of other entrants: each pair counted both
  ways in ``version_matchup`` (a version against another entrant: games
  shared, finished ahead, finished behind). Seats are written one by one, so
  each pair is counted once, when its second seat comes.

A trigger runs inside the statement that fired it, so a count is written in the
same transaction as what it counts (a killed server loses both or neither),
whichever code or process writes the row. The store deletes no game and no
seat, so no trigger takes counts back.

A version's ``games`` counts its seats: seats are written only by
``LadderStore.finish``, with the game turning done, and a done game never
changes state again, so this is the count of its finished games the store used
to make with a join.

``migrate_tallies`` adds them to a store made before, counting what is there
once.
"""

from __future__ import annotations

import sqlite3

from tournaments.hosting.storage import Transaction

__all__ = ["game_counts", "migrate_tallies"]

_PAIRS = (
    # The other seats of the new seat's game, of another entrant: (the other seat, its version's entrant).
    "FROM seat s JOIN version ov ON ov.id = s.version "
    "WHERE s.game = new.game AND s.seat != new.seat "
    "AND ov.entrant != (SELECT entrant FROM version WHERE id = new.version)"
)
_ADD = "ON CONFLICT (version, opponent) DO UPDATE SET games = games + excluded.games, "
_ADD += "ahead = ahead + excluded.ahead, behind = behind + excluded.behind"

_TRIGGERS = (
    (
        "CREATE TRIGGER game_tally_insert AFTER INSERT ON game BEGIN "
        "INSERT INTO game_tally VALUES (new.state, 1) ON CONFLICT (state) DO UPDATE SET games = games + 1; END"
    ),
    (
        "CREATE TRIGGER game_tally_state AFTER UPDATE OF state ON game WHEN old.state IS NOT new.state BEGIN "
        "UPDATE game_tally SET games = games - 1 WHERE state = old.state; "
        "INSERT INTO game_tally VALUES (new.state, 1) ON CONFLICT (state) DO UPDATE SET games = games + 1; END"
    ),
    # Seats are inserted one by one: each pair of seats is counted, both ways, when its second seat comes.
    (
        "CREATE TRIGGER seat_tally_insert AFTER INSERT ON seat BEGIN "
        "UPDATE version SET games = games + 1 WHERE id = new.version; "
        "INSERT INTO version_matchup (version, opponent, games, ahead, behind) "
        f"SELECT new.version, ov.entrant, 1, new.rank < s.rank, new.rank > s.rank {_PAIRS} {_ADD}; "
        "INSERT INTO version_matchup (version, opponent, games, ahead, behind) "
        "SELECT s.version, (SELECT entrant FROM version WHERE id = new.version), 1, s.rank < new.rank, "
        f"s.rank > new.rank {_PAIRS} {_ADD}; "
        "END"
    ),
)


def migrate_tallies(db: sqlite3.Connection) -> None:
    """Give a store made before the tallies their counts and the triggers that keep them, in place.

    One transaction: a store is never left with counts and no triggers (or the reverse). On two
    million games this counts for a minute or so, once (bench/README.md).
    """
    if _migrated(db):
        return
    with Transaction(db):  # looked at again under the write lock: a second process may be migrating too
        if _migrated(db):
            return
        if "games" not in {row[1] for row in db.execute("PRAGMA table_info(version)")}:
            db.execute("ALTER TABLE version ADD COLUMN games INTEGER NOT NULL DEFAULT 0")
        db.execute("UPDATE version SET games = (SELECT COUNT(*) FROM seat WHERE seat.version = version.id)")
        db.execute("CREATE TABLE IF NOT EXISTS game_tally (state TEXT PRIMARY KEY, games INTEGER NOT NULL)")
        db.execute("DELETE FROM game_tally")
        db.execute("INSERT INTO game_tally SELECT state, COUNT(*) FROM game GROUP BY state")
        db.execute(
            "CREATE TABLE IF NOT EXISTS version_matchup (version INTEGER NOT NULL REFERENCES version(id), "
            "opponent INTEGER NOT NULL REFERENCES entrant(id), games INTEGER NOT NULL, ahead INTEGER NOT NULL, "
            "behind INTEGER NOT NULL, PRIMARY KEY (version, opponent)) WITHOUT ROWID"
        )
        db.execute("DELETE FROM version_matchup")
        db.execute(
            "INSERT INTO version_matchup SELECT me.version, ov.entrant, COUNT(*), SUM(me.rank < them.rank), "
            "SUM(me.rank > them.rank) FROM seat me JOIN seat them ON them.game = me.game AND them.seat != me.seat "
            "JOIN version mv ON mv.id = me.version JOIN version ov ON ov.id = them.version "
            "WHERE ov.entrant != mv.entrant GROUP BY me.version, ov.entrant"
        )
        for trigger in _TRIGGERS:
            db.execute(trigger)


def _migrated(db: sqlite3.Connection) -> bool:
    """Whether the last trigger is there: it is made last, in the migration's one transaction."""
    found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'seat_tally_insert'")
    return found.fetchone() is not None


def game_counts(db: sqlite3.Connection) -> dict[str, int]:
    """How many games are in each state that has any."""
    return {state: int(n) for state, n in db.execute("SELECT state, games FROM game_tally WHERE games > 0")}
