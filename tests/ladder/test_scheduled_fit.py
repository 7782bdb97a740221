"""The scheduled Plackett-Luce fit: made off the event loop, shown on the leaderboard beside the live rating."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import msgspec
import pytest
import trio

import ladder.loop
from ladder.store import LadderStore
from ladder.views import FitStanding
from tests.ladder.server import running_server


def _finished_games(store: LadderStore, count: int) -> None:
    """``count`` finished 3-seat games among ann, bob and cat, written as the loop would leave them
    (no bots played: the fit reads only seats and ranks). ann always wins, cat always loses."""
    ids = []
    for name in ("ann", "bob", "cat"):
        entrant = store.entrant(name)
        assert entrant is not None
        version = store.add_version(entrant.id, "0" * 64, (25.0, 25 / 3), per_hour=5)
        store.decide(version.id, accepted=True, reason="", report="")
        ids.append(version.id)
    with store.transaction():
        table = store.db.execute("INSERT INTO tables (seed, members) VALUES (1, ?)", (msgspec.json.encode(ids),))
        for _ in range(count):
            game = store.db.execute(
                "INSERT INTO game (table_id, seating, state, finished) VALUES (?, ?, 'done', '2026-01-01T00:00:00')",
                (table.lastrowid, msgspec.json.encode(ids)),
            )
            for seat, version_id in enumerate(ids):
                store.db.execute(
                    "INSERT INTO seat (game, seat, version, rank, score, termination, reason, mu_after) "
                    "VALUES (?, ?, ?, ?, 0, NULL, NULL, 25.0)",
                    (game.lastrowid, seat, version_id, seat),
                )


async def _page(http: httpx.AsyncClient, attempt: int) -> str:
    answer = await http.get(f"/?fresh={attempt}")  # a new address each time: past the one-second page cache
    assert answer.status_code == 200
    return answer.text


async def test_the_leaderboard_shows_the_fit_made_once_games_finished(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        assert "no fit yet" in await _page(http, 0)
        _finished_games(server.ladder.store, 8)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.ladder._refitter)
            with trio.fail_after(60):
                while server.ladder.fit is None:
                    await trio.sleep(0.02)
            nursery.cancel_scope.cancel()
        fit = server.ladder.fit
        assert fit.games == 8 and [row.entrant for row in fit.rows] == ["ann", "bob", "cat"]
        text = await _page(http, 1)
        assert f'made <time datetime="{fit.fitted}"' in text and "over 8 games" in text
        best = fit.rows[0]
        assert f"{best.rating:.0f} <small>{best.lower:.0f} – {best.upper:.0f}</small>" in text
        shown = (await http.get("/api/standings")).json()
        assert shown[0]["fitted"]["rating"] == best.rating


async def test_a_fit_in_progress_does_not_hold_up_a_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    started = threading.Event()

    def slow_fit(*args: object) -> list[FitStanding]:
        started.set()
        release.wait(60)  # a fit of a large ladder, held until the page was served
        return []

    monkeypatch.setattr(ladder.loop, "fit_standings", slow_fit)
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url, timeout=10) as http,
    ):
        _finished_games(server.ladder.store, 3)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.ladder._refitter)
            with trio.fail_after(30):
                while not started.is_set():
                    await trio.sleep(0.02)
                assert "no fit yet" in await _page(http, 2)  # served while the fit still runs
            release.set()
            with trio.fail_after(30):
                while server.ladder.fit is None:
                    await trio.sleep(0.02)
            nursery.cancel_scope.cancel()


def test_the_twentieth_finished_game_asks_for_a_refit(tmp_path: Path) -> None:
    from ladder.config import LadderPaths, load_ladder
    from tests.ladder.helpers import write_ladder

    path = write_ladder(tmp_path)
    loop = ladder.loop.Ladder(load_ladder(path), LadderPaths.beside(path))
    assert loop.config.rating.fit_every == 20  # the default
    for _ in range(19):
        loop.count_for_fit()
    assert not loop._fit_due.is_set()
    loop.count_for_fit()
    assert loop._fit_due.is_set()


async def test_the_fit_api_makes_one_fit_at_a_time_and_again_only_after_a_game_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anyone may ask for /api/standings/fit, and at a large contest's size a fit is a minute of CPU: requests
    at once share one fit, and a request after them gets it again until a game finishes."""
    import ladder.web.api
    from ladder.views import fit_standings

    fits: list[int] = []

    def counted_fit(*args: object) -> list[FitStanding]:
        fits.append(1)
        return fit_standings(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ladder.web.api, "fit_standings", counted_fit)
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url, timeout=30) as http,
    ):
        _finished_games(server.ladder.store, 6)
        answers: list[httpx.Response] = []

        async def ask() -> None:
            answers.append(await http.get("/api/standings/fit"))

        async with trio.open_nursery() as nursery:
            for _ in range(4):
                nursery.start_soon(ask)
        assert len(fits) == 1 and len({a.content for a in answers}) == 1
        assert [row["entrant"] for row in answers[0].json()] == ["ann", "bob", "cat"]
        await ask()
        assert len(fits) == 1  # no game finished since: the same fit
        _finished_games(server.ladder.store, 1)
        fresh = (await http.get("/api/standings/fit")).json()
        assert len(fits) == 2 and len(fresh) == 6  # the new versions, with their one game, beside the old


async def test_a_fit_that_fails_leaves_the_ladder_serving_with_its_last_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """At two million games bench/ladder_scale.py's fit diverged (NaN in Newton's step: scipy's ValueError):
    the refitter must not take the server down with it, nor may /api/standings/fit answer with a traceback."""
    import ladder.web.api

    def diverging_fit(*args: object) -> list[FitStanding]:
        raise ValueError("array must not contain infs or NaNs")

    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url, timeout=30) as http,
    ):
        _finished_games(server.ladder.store, 3)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.ladder._refitter)
            with trio.fail_after(30):
                while server.ladder.fit is None:
                    await trio.sleep(0.02)
            kept = server.ladder.fit
            monkeypatch.setattr(ladder.loop, "fit_standings", diverging_fit)
            monkeypatch.setattr(ladder.web.api, "fit_standings", diverging_fit)
            _finished_games(server.ladder.store, 1)
            server.ladder._fit_due.set()
            with trio.fail_after(30):
                while "the scheduled fit of 4 games failed" not in capsys.readouterr().out:
                    await trio.sleep(0.05)
            assert server.ladder.fit is kept and "over 3 games" in await _page(http, 3)  # the last fit, shown
            refused = await http.get("/api/standings/fit")
            assert refused.status_code == 503 and "the fit of 4 games failed (ValueError)" in refused.json()["error"]
            nursery.cancel_scope.cancel()
