"""A ladder's seasons, kept in its store: when each opened and froze, its finalists, its published final.

Tables of their own beside the ladder's (``CREATE TABLE IF NOT EXISTS``), so a
store made before seasons gains them at its next start and nothing else in it
changes. Season 1 is every ladder's first; ``famiglia ladder new-season`` adds
the next once the last one's final is published, and the past ones stay.
"""

from __future__ import annotations

import datetime

import msgspec

from ladder.store import LadderStore
from tournaments.hosting.ratings import Standing

__all__ = ["SeasonBook", "SeasonRow"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS season (
    number INTEGER PRIMARY KEY,
    opened TEXT NOT NULL,
    frozen TEXT,
    deadline TEXT,
    finalists TEXT,
    published TEXT,
    standings TEXT,
    games INTEGER
);
"""


class SeasonRow(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    opened: str
    frozen: str | None
    """When the deadline was seen passed and the finalists fixed; None while the season is open."""
    deadline: str | None
    """The deadline that closed it, as the ladder file said then."""
    finalists: list[tuple[str, int]]
    """(entrant name, version id) of each finalist: its active version at the deadline."""
    published: str | None
    standings: list[Standing]
    games: int


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


class SeasonBook:
    """The seasons of one ladder store."""

    def __init__(self, store: LadderStore) -> None:
        self.store = store
        store.db.executescript(_SCHEMA)
        with store.transaction():
            if store.db.execute("SELECT COUNT(*) FROM season").fetchone()[0] == 0:
                (created,) = store.db.execute("SELECT created FROM ladder").fetchone()
                store.db.execute("INSERT INTO season (number, opened) VALUES (1, ?)", (created,))

    _SELECT = "SELECT number, opened, frozen, deadline, finalists, published, standings, games FROM season "

    @staticmethod
    def _row(row: tuple[object, ...]) -> SeasonRow:
        number, opened, frozen, deadline, finalists, published, standings, games = row
        return SeasonRow(
            number=int(str(number)),
            opened=str(opened),
            frozen=None if frozen is None else str(frozen),
            deadline=None if deadline is None else str(deadline),
            finalists=msgspec.json.decode(str(finalists or "[]"), type=list[tuple[str, int]]),
            published=None if published is None else str(published),
            standings=msgspec.json.decode(str(standings or "[]"), type=list[Standing]),
            games=int(str(games or 0)),
        )

    def current(self) -> SeasonRow:
        return self._row(self.store.db.execute(self._SELECT + "ORDER BY number DESC LIMIT 1").fetchone())

    def season(self, number: int) -> SeasonRow | None:
        row = self.store.db.execute(self._SELECT + "WHERE number = ?", (number,)).fetchone()
        return None if row is None else self._row(row)

    def seasons(self) -> list[SeasonRow]:
        return [self._row(row) for row in self.store.db.execute(self._SELECT + "ORDER BY number")]

    def freeze(self, number: int, deadline: str, finalists: list[tuple[str, int]]) -> SeasonRow:
        """Fix season ``number``'s finalists, once: a second call (a restart) keeps the first's."""
        with self.store.transaction():
            self.store.db.execute(
                "UPDATE season SET frozen = ?, deadline = ?, finalists = ? WHERE number = ? AND frozen IS NULL",
                (_now(), deadline, msgspec.json.encode(finalists).decode(), number),
            )
        row = self.season(number)
        assert row is not None
        return row

    def publish(self, number: int, standings: list[Standing], games: int) -> None:
        with self.store.transaction():
            self.store.db.execute(
                "UPDATE season SET published = ?, standings = ?, games = ? WHERE number = ? AND published IS NULL",
                (_now(), msgspec.json.encode(standings).decode(), games, number),
            )

    def open_next(self) -> int:
        """A new season after the current one, whose final must be published; its number. ValueError otherwise."""
        with self.store.transaction():
            current = self.current()
            if current.published is None:
                state = "still open" if current.frozen is None else "closed, its final not yet published"
                raise ValueError(f"season {current.number} is {state}: a new season opens once its final is published")
            self.store.db.execute("INSERT INTO season (number, opened) VALUES (?, ?)", (current.number + 1, _now()))
        return current.number + 1
