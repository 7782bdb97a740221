"""What the ladder tests share: a ladder file, uploads of real bot folders, hand-made hostile archives."""

from __future__ import annotations

import datetime
import io
import tarfile
from pathlib import Path

from ladder.store import LadderStore
from protocol.messages import Result
from referee.bot_folder import pack_folder
from referee.match import MatchRecord, SeatTiming

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_BOTS = ROOT / "sample_bots"
BROKEN_BOT = ROOT / "tests" / "bots" / "hostile" / "wrong_id"
"""Sends the wrong request id: check-bot fails it."""


def write_ladder(folder: Path, *, concurrency: int = 2, sandbox: str = "none", per_hour: int = 6) -> Path:
    """A ladder file for 3-seat Vendetta; its store and data go beside it."""
    path = folder / "ladder.toml"
    path.write_text(
        "[ladder]\n"
        'name = "test ladder"\n'
        'game = "vendetta"\n'
        "table_sizes = [3]\n"
        f"concurrency = {concurrency}\n"
        "[ladder.time]\n"
        # Generous clocks: check-bot must not reject a sample bot because other work slows the machine.
        "startup_ms = 20000\n"
        "move_ms = 5000\n"
        "bank_ms = 20000\n"
        "[ladder.sandbox]\n"
        f'level = "{sandbox}"\n'
        "[ladder.submissions]\n"
        f"per_hour = {per_hour}\n",
        encoding="utf-8",
    )
    return path


def upload_of(folder: Path) -> bytes:
    return pack_folder(folder)[1]


def archive(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    """A tar archive of hand-made members: what an attacker sends instead of ``ladder submit``'s."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buffer.getvalue()


def file_member(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def link_member(name: str, target: str, *, hard: bool = False) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE if hard else tarfile.SYMTYPE
    info.linkname = target
    return info, b""


def device_member(name: str) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    info.devmajor, info.devminor = 1, 3
    return info, b""


MANIFEST = file_member("bot.toml", b'name = "x"\ncommand = "python3 bot.py"\n')


def finished_record(ranks: list[int], replay: Path | None = None) -> MatchRecord:
    """What the referee hands back for a game that ended in ``ranks`` (its replay at ``replay``): enough for
    the store to rate it."""
    timing = SeatTiming(decisions=1, total_ms=1.0, max_ms=1.0, bank_left_ms=0.0)
    result = Result(ranks=ranks, scores=[0] * len(ranks), winners=[ranks.index(1)], forfeited=[], ended_by="finished")
    return MatchRecord(
        match="m",
        game="vendetta",
        seed=1,
        variants={},
        names=["a"] * len(ranks),
        result=result,
        timings=[timing] * len(ranks),
        seconds=1.0,
        replay=None if replay is None else str(replay),
    )


def play_recorded(
    store: LadderStore,
    versions: list[int],
    ranks: list[int],
    finished: datetime.datetime | None = None,
    replay: Path | None = None,
) -> int:
    """A table of ``versions`` whose one game is recorded as ended in ``ranks`` (at ``finished``, when given;
    its replay file ``replay``, when given), without a referee: what the pages show of a ladder's history,
    made in milliseconds."""
    table = store.add_table(1, versions, [versions])
    started = store.start_next()
    assert started is not None
    game = started[0]
    store.finish(game, finished_record(ranks, replay))
    if finished is not None:
        with store.transaction():
            store.db.execute(
                "UPDATE game SET finished = ? WHERE id = ?", (finished.isoformat(timespec="seconds"), game)
            )
    assert store.table_finished(table)
    return game


def accepted_version(store: LadderStore, name: str, digest: str, prior: tuple[float, float] = (25.0, 25.0 / 3)) -> int:
    """A new version of ``name`` (registered if new), accepted: its id."""
    from ladder.store import new_token

    entrant = store.entrant(name)
    entrant_id = store.add_entrant(name, new_token()) if entrant is None else entrant.id
    version = store.add_version(entrant_id, digest, prior, per_hour=1000)
    store.decide(version.id, accepted=True, reason="passed check-bot (6 games)", report="{}")
    return version.id


HOUR = datetime.timedelta(hours=1)


def seed_history(store: LadderStore) -> dict[str, int]:
    """Five entrants' games over two days, without a referee; ann on her second version (submitted three
    hours ago), which lost every game her first won; the others submitted two days ago. Their ids."""
    now = datetime.datetime.now(datetime.UTC)
    names = ["ann", "bob", "cat", "dan", "eve"]
    ids = {name: accepted_version(store, name, name[0] * 64) for name in names}
    for i in range(30):
        table = [names[i % 5], names[(i + 1) % 5], names[(i + 2) % 5]]
        order = sorted(table, key=names.index)  # alphabetical order wins: ann's first version is strong
        play_recorded(store, [ids[n] for n in table], [order.index(n) + 1 for n in table], now - 48 * HOUR + i * HOUR)
    ids["ann"] = accepted_version(store, "ann", "z" * 64)
    for i in range(6):
        table = ["ann", "bob", "cat"] if i % 2 else ["ann", "dan", "eve"]
        play_recorded(store, [ids[n] for n in table], [3, 1, 2], now - 10 * HOUR + i * HOUR)
    with store.transaction():  # submitted three hours ago and two days ago, as the board will say
        store.db.execute("UPDATE version SET submitted = ?", ((now - 49 * HOUR).isoformat(timespec="seconds"),))
        store.db.execute(
            "UPDATE version SET submitted = ? WHERE digest = ?",
            ((now - 3 * HOUR - 5 * datetime.timedelta(minutes=1)).isoformat(timespec="seconds"), "z" * 64),
        )
    return ids


def seed_viewable_game(store: LadderStore, replays: Path, names: list[str]) -> int:
    """A game of the active versions of ``names`` (new ones for those without) whose replay (random legal
    play) is in ``replays``, its deal over: what a game page shows. The second name first, the first second.
    Its id."""
    from tests.tournaments.replay_factory import write_replay

    active = {v.entrant: v.id for v in store.versions(states=("active",))}
    ids = [active[name] if name in active else accepted_version(store, name, name[0] * 63 + "v") for name in names]
    replays.mkdir(parents=True, exist_ok=True)
    number = len(store.games(limit=-1)) + 1
    replay = write_replay(replays / f"game-{number:06d}.jsonl", "vendetta", {"round_limit": "3"}, names)
    return play_recorded(store, ids, [2, 1, *range(3, len(names) + 1)], replay=replay)
