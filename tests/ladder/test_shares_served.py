"""No version takes more than its share (issue 40 item 2), on a ladder's real loop with real bots: a bot that
passes check-bot and then times out in every ladder game, one that is slow only when it is losing, and a stream
of resubmissions of a failing bot. Each game start is watched through the executor, which sees what the loop
dealt while it is in flight."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest
import trio

from ladder.config import LadderPaths, load_ladder
from ladder.loop import Ladder
from ladder.shares import fair_time_share
from referee.match import MatchRecord, MatchSpec
from tests.ladder.helpers import ROOT, SAMPLE_BOTS
from tests.ladder.test_health_served import SLEEPER, submit, until
from tournaments.hosting.executors.base import Seat
from tournaments.hosting.executors.inprocess import InProcessExecutor

pytestmark = pytest.mark.slow

SORE_LOSER = ROOT / "tests" / "bots" / "hostile" / "sore_loser"
FOUR = (("ann", "random_py"), ("bob", "greedy_py"), ("cat", "random_py"), ("dan", "random_py"))
"""Four honest entrants: with a fifth at 3-seat tables, each one's fair share is 3/5 of the tables."""


class Start(msgspec.Struct, frozen=True, kw_only=True):
    """What the loop had dealt when a game started: its entrants, and every entrant's games in flight and
    share of recent game time at that moment (the game's own start included)."""

    entrants: tuple[str, ...]
    in_flight: dict[str, int]
    time_shares: dict[str, float]
    quick: frozenset[str]
    """The entrants whose recent games were known to be quick (``ShareBook.known_quick``) when it was dealt."""
    pending_tables: int


class Watching(InProcessExecutor):
    """The ladder's own executor, noting each game's start before playing it."""

    def __init__(self, concurrency: int) -> None:
        super().__init__(concurrency)
        self.ladder: Ladder | None = None
        self.starts: list[Start] = []

    async def play(self, spec: MatchSpec, seats: Sequence[Seat], replay: Path | None) -> MatchRecord:
        assert self.ladder is not None
        game = int(spec.match.removeprefix("ladder-"))
        (row,) = self.ladder.store.db.execute("SELECT seating FROM game WHERE id = ?", (game,)).fetchall()
        seating = msgspec.json.decode(row[0], type=list[int])
        self.starts.append(
            Start(
                entrants=tuple(self.ladder.store.version(v).entrant for v in seating),
                in_flight=dict(self.ladder.shares.in_flight()),
                time_shares=self.ladder.shares.time_shares(),
                quick=frozenset(name for name in self.entrants() if self.ladder.shares.known_quick(name)),
                pending_tables=self.ladder.store.db.execute(
                    "SELECT COUNT(DISTINCT table_id) FROM game WHERE state = 'pending'"
                ).fetchone()[0],
            )
        )
        return await super().play(spec, seats, replay)

    def entrants(self) -> set[str]:
        assert self.ladder is not None
        return {version.entrant for version in self.ladder.store.versions(states=("active",))}


def watched_ladder(folder: Path, *, window: int = 12) -> tuple[Ladder, Watching]:
    """Two games at once at 3-seat tables on a short wall clock (a timeout costs 2 s), the ladder's default
    health rule unless ``window`` says otherwise. A move of 1 s leaves check-bot room on a loaded machine:
    with 500 ms the sore loser, quick in its check, was turned away for one decision of 639 ms of wall."""
    path = folder / "ladder.toml"
    path.write_text(
        '[ladder]\nname = "shares"\ngame = "vendetta"\ntable_sizes = [3]\nconcurrency = 2\nchecks_at_once = 2\n'
        '[ladder.time]\nstartup_ms = 20000\nmove_ms = 1000\nbank_ms = 1000\nclock = "wall"\n'
        f'[ladder.sandbox]\nlevel = "none"\n[ladder.health]\nwindow = {window}\nfailed_fraction = 0.5\n'
        "[ladder.submissions]\nper_hour = 50\n",
        encoding="utf-8",
    )
    config = load_ladder(path)
    executor = Watching(config.concurrency)
    ladder = Ladder(config, LadderPaths.beside(path), executor=executor)
    executor.ladder = ladder
    return ladder, executor


async def four_playing(ladder: Ladder) -> None:
    versions = [submit(ladder, name, SAMPLE_BOTS / bot) for name, bot in FOUR]
    await until(lambda: all(ladder.store.version(v).state == "active" for v in versions))


def flight_limit(ladder: Ladder) -> int:
    return ladder.shares.flight_limit(3, 5, ladder.config.concurrency)


async def test_an_honest_field_at_its_bound_game_after_game_plays_on_without_piling_tables_up(
    tmp_path: Path,
) -> None:
    # Four entrants, two games at once: any two 3-seat tables share members, so every second game is
    # past someone's share of games in flight. It must still be played, from the tables already dealt.
    ladder, watching = watched_ladder(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        await four_playing(ladder)
        await until(lambda: len(watching.starts) >= 30)
        nursery.cancel_scope.cancel()
    assert max(start.pending_tables for start in watching.starts) <= ladder.config.concurrency + 1
    counts = ladder.store.counts()
    assert counts.get("pending", 0) <= 6 * (ladder.config.concurrency + 1), counts


async def test_a_bot_that_times_out_in_every_ladder_game_holds_one_of_two_games_and_is_suspended_within_20(
    tmp_path: Path,
) -> None:
    ladder, watching = watched_ladder(tmp_path)
    store = ladder.store
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        await four_playing(ladder)
        sleeper = submit(ladder, "eve", SLEEPER)
        await until(lambda: store.version(sleeper).state in ("active", "rejected", "suspended"))
        assert store.version(sleeper).state != "rejected", store.version(sleeper).reason
        await until(lambda: store.version(sleeper).state == "suspended")
        nursery.cancel_scope.cancel()
    assert store.version(sleeper).games <= 20, store.version(sleeper).games
    with_sleeper = [i for i, start in enumerate(watching.starts) if "eve" in start.entrants]
    assert len(with_sleeper) == store.version(sleeper).games
    # Never at more than its share of the games in flight: one of the two, the other left to the field.
    assert flight_limit(ladder) == 1
    assert all(watching.starts[i].in_flight["eve"] <= 1 for i in with_sleeper)
    # Holding its table's games back did not pile tables up: a few pending, as many as games at once and one
    # more, and one more again when every pending game seated the sleeper while it was held in a game (a
    # table without it is dealt then rather than a slot left idle).
    pending = store.db.execute("SELECT COUNT(DISTINCT table_id) FROM game WHERE state = 'pending'").fetchone()[0]
    assert pending <= ladder.config.concurrency + 2, pending
    # While its games ran their clocks out, the others' games went on beside them.
    during = watching.starts[with_sleeper[0] : with_sleeper[-1] + 1]
    assert sum("eve" not in start.entrants for start in during) > 0


async def test_a_bot_slow_only_when_losing_is_held_to_its_share_of_game_time(tmp_path: Path) -> None:
    ladder, watching = watched_ladder(tmp_path)
    store = ladder.store
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        await four_playing(ladder)
        loser = submit(ladder, "sly", SORE_LOSER)
        await until(lambda: store.version(loser).state in ("active", "rejected"))
        assert store.version(loser).state == "active", store.version(loser).reason
        # It fails nothing the health rule counts, so only its share keeps it from the others' tables: play
        # on until the others were dealt a game while it was past its share of game time (it waited), and
        # it has played a few games since it first did.
        limit = ladder.shares.time_limit(5)

        def waited_then_played() -> bool:
            waits = [i for i, s in enumerate(watching.starts) if s.time_shares.get("sly", 0.0) > limit]
            return bool(waits) and sum("sly" in s.entrants for s in watching.starts[waits[0] :]) >= 3

        await until(waited_then_played, 600)
        nursery.cancel_scope.cancel()
    assert store.version(loser).state == "active" and store.version(loser).suspension == ""
    assert limit == pytest.approx(1.25 * fair_time_share(5))
    starts = [start for start in watching.starts if "sly" in start.entrants]
    # Never dealt while past its share of the recent game time (the four others could always fill a table),
    # nor in more games at once than its share while its games were slow. (Five entrants cannot fill two
    # 3-seat tables within one game each: a second game goes to one whose recent games are quick, and the
    # sore loser's are whenever it has been winning.)
    assert all(start.time_shares.get("sly", 0.0) <= limit + 1e-9 for start in starts)
    assert all(start.in_flight["sly"] <= flight_limit(ladder) or "sly" in start.quick for start in starts)
    # And its slowness did count: at some start it was the one taking the most game time.
    assert any(
        start.time_shares and max(start.time_shares, key=start.time_shares.__getitem__) == "sly"
        for start in watching.starts
    )


async def test_a_stream_of_resubmissions_of_a_failing_bot_buys_one_game_each_not_a_fresh_window(
    tmp_path: Path,
) -> None:
    ladder, watching = watched_ladder(tmp_path, window=6)  # suspended at 3 faults of 6
    store = ladder.store
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        await four_playing(ladder)
        first = submit(ladder, "eve", SLEEPER)
        await until(lambda: store.version(first).state in ("suspended", "rejected"))
        assert store.version(first).state == "suspended", store.version(first).reason
        resubmitted = []
        for _ in range(2):  # the same failing bot again, each time it is suspended (each costs a check)
            again = submit(ladder, "eve", SLEEPER)
            resubmitted.append(again)
            await until(lambda: store.version(again).state in ("suspended", "rejected"))  # noqa: B023
            assert store.version(again).state == "suspended", store.version(again).reason
        nursery.cancel_scope.cancel()
    # Each resubmission inherited eve's faults: suspended at its first failing game, not after three more.
    assert [store.version(v).games for v in resubmitted] == [1, 1]
    assert all("by the entrant's earlier versions" in store.version(v).suspension for v in resubmitted)
    # Its versions never held more than eve's one share of the games in flight, whichever version played.
    assert all(start.in_flight["eve"] <= 1 for start in watching.starts if "eve" in start.entrants)
    # The others kept being dealt: eve's versions sat at a minority of the games started meanwhile.
    began = next(i for i, start in enumerate(watching.starts) if "eve" in start.entrants)
    meanwhile = watching.starts[began:]
    assert sum("eve" in start.entrants for start in meanwhile) < len(meanwhile) / 2
