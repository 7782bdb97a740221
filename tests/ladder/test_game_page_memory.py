"""A game's page costs the server bounded memory whatever its replay holds, and says what it leaves out.

Replays written before their bytes were bounded hold hundreds of MiB of a bot's
log lines: 36 readers of such pages took a ladder to 1.35 GB. Here such a replay
(a real game with 40 MB of control-character log lines put in, as an old
famiglia wrote them) is read a line at a time, its pages hold a bounded part of
each seat's output and say how much they leave out, and the cache of anonymous
pages stays within its bytes.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import httpx
import msgspec

from ladder.store import LadderStore
from ladder.web.cache import PageCache
from ladder.web.pages import GAME_PAGE_NOTES_BYTES, _game_page
from referee.match import MatchRecord, SeatTiming
from referee.match.recorder import LOG_CHARS
from referee.replay import LogRecord, encode_record, read_replay, verify_replay
from tests.ladder.server import running_server
from tests.tournaments.replay_factory import vendetta_replay
from tournaments.hosting.viewer.build import build_viewer_data

STUFFED_BYTES = 40 << 20


def stuffed_replay(path: Path, *, log_bytes: int = STUFFED_BYTES) -> Path:
    """A real three-seat Vendetta game with ``log_bytes`` of seat 1's control-character log lines put after
    its first action, as a replay written before the replay budget held them."""
    vendetta_replay(path)
    lines = path.read_bytes().splitlines(keepends=True)
    log = encode_record(LogRecord(seat=1, request=2, message="\x01" * LOG_CHARS)) + b"\n"
    first_action = next(i for i, line in enumerate(lines) if line.startswith(b'{"type":"action"'))
    stuffed = [*lines[: first_action + 1], log * (log_bytes // len(log)), *lines[first_action + 1 :]]
    path.write_bytes(b"".join(stuffed))
    return path


def peak_of(work: object) -> int:
    """The peak of Python's allocations while ``work()`` runs, in bytes."""
    gc.collect()
    tracemalloc.start()
    try:
        work()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_page_of_a_replay_stuffed_with_log_lines_costs_what_the_game_costs(tmp_path: Path) -> None:
    plain = vendetta_replay(tmp_path / "plain.jsonl")
    stuffed = stuffed_replay(tmp_path / "stuffed.jsonl")
    assert stuffed.stat().st_size > STUFFED_BYTES
    assert verify_replay(read_replay(stuffed)) == verify_replay(read_replay(plain))  # a real game
    plain_peak = peak_of(lambda: _game_page(plain, "all", 1))
    stuffed_peak = peak_of(lambda: _game_page(stuffed, "all", 1))
    # 40 MB in the file; the page holds at most GAME_PAGE_NOTES_BYTES of it (and a line at a time to read).
    assert stuffed_peak < plain_peak + 4 * GAME_PAGE_NOTES_BYTES + (4 << 20), (plain_peak, stuffed_peak)


def test_the_page_says_how_much_of_which_seat_it_leaves_out_and_keeps_the_rest(tmp_path: Path) -> None:
    stuffed = stuffed_replay(tmp_path / "stuffed.jsonl", log_bytes=2 << 20)
    data = build_viewer_data(stuffed, notes_bytes=GAME_PAGE_NOTES_BYTES)
    (left,) = data.left_out
    written = [r for r in read_replay(stuffed) if isinstance(r, LogRecord)]
    kept = [line for step in data.views["1"] for line in step["logs"]]
    assert left.seat == 1 and left.lines == sum(r.seat == 1 for r in written) - len(kept)
    assert sum(len(encode_record(LogRecord(seat=1, request=2, message=m))) + 1 for m in kept) <= GAME_PAGE_NOTES_BYTES
    assert left.bytes > (2 << 20) - GAME_PAGE_NOTES_BYTES
    # The other seats' lines are all there.
    assert sum(len(step["logs"]) for step in data.views["0"]) == sum(r.seat == 0 for r in written) > 0
    page = _game_page(stuffed, "all", 1)
    assert f"This page leaves out {left.lines:,} of seat 1&#39;s log lines and rejected actions" in page
    assert "This page leaves out" not in _game_page(stuffed, "0", 1)  # seat 0's page: nothing of its left out
    assert data.problem is None and data.final is not None


async def test_the_ladders_game_page_of_a_stuffed_replay_is_served_with_the_notice(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        store: LadderStore = server.ladder.store
        versions = []
        for name in ("ann", "bob", "cat"):
            entrant = store.entrant(name)
            assert entrant is not None
            version = store.add_version(entrant.id, name * 16, (25.0, 8.3), per_hour=5)
            store.decide(version.id, accepted=True, reason="ok", report="{}")
            versions.append(version.id)
        store.add_table(1, versions, [versions])
        started = store.start_next()
        assert started is not None
        server.ladder.paths.replays.mkdir(parents=True, exist_ok=True)
        replay = stuffed_replay(server.ladder.paths.replays / "game.jsonl", log_bytes=4 << 20)
        result = verify_replay(read_replay(replay))
        timing = SeatTiming(decisions=1, total_ms=1.0, max_ms=1.0, bank_left_ms=1.0)
        record = MatchRecord(match="m", game="vendetta", seed=started[1], variants={}, names=["a", "b", "c"],
                             result=result, timings=[timing] * 3, seconds=1.0, replay=str(replay))  # fmt: skip
        store.finish(started[0], record)
        answer = await http.get(f"/games/game-{started[0]}.html")
        assert answer.status_code == 200
        assert "This page leaves out" in answer.text and "of seat 1&#39;s log lines" in answer.text
        assert len(answer.content) < 1 << 20
        # The owner's download of its seat's view is built the same way, and says what it leaves out.
        owner = {"authorization": f"Bearer {server.tokens['bob']}"}
        view = await http.get(f"/games/game-{started[0]}.seat-1.jsonl", headers=owner)
        assert view.status_code == 200, view.text
        header = msgspec.json.decode(view.content.splitlines()[0])
        assert header["left_out"][0]["seat"] == 1 and header["left_out"][0]["lines"] > 0
        assert len(view.content) < 4 << 20


def test_the_anonymous_page_cache_stays_within_its_bytes_dropping_the_oldest() -> None:
    cache = PageCache(max_age_s=60.0, max_entries=100, max_bytes=1 << 20)
    page = b"x" * (100 << 10)
    for number in range(30):
        cache.put(f"/games/game-{number}.html", 200, page, "text/html")
    kept = [number for number in range(30) if cache.get(f"/games/game-{number}.html") is not None]
    assert kept == list(range(20, 30))  # ten pages of 100 KiB fit in 1 MiB: the newest ten
    cache.put("/games/huge.html", 200, b"x" * (200 << 10), "text/html")  # over an eighth of the cache
    assert cache.get("/games/huge.html") is None and cache.get("/games/game-29.html") is not None
    cache.put("/games/game-29.html", 200, b"y", "text/html")  # kept again: its old body's bytes are given back
    cache.put("/games/new.html", 200, page, "text/html")
    assert cache.get("/games/game-29.html") == (200, b"y", "text/html")
    assert cache.get("/games/game-20.html") is not None  # so there was room for the new page without it
