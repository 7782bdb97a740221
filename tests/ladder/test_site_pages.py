"""The ladder's pages as a competition site, over real HTTP: the board, an entrant's chart and matchups per
version with their games, and the replay viewer inside the site."""

from __future__ import annotations

import html
import re
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from ladder.views import standings
from ladder.web.look import band_scale
from tests.ladder.helpers import seed_history, seed_viewable_game
from tests.ladder.server import logged_in, running_server


def rows_of(page: str) -> list[str]:
    body = page.split('<table id="standings">', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr class=.*?</tr>", body, re.DOTALL)


async def test_the_board_marks_the_top_three_and_shows_each_rating_beside_its_band(tmp_path: Path) -> None:
    async with running_server(tmp_path, ()) as server, httpx.AsyncClient(base_url=server.url) as http:
        seed_history(server.ladder.store)
        board = (await http.get("/")).text
        expected = standings(server.ladder.store)
        rows = rows_of(board)
        assert len(rows) == len(expected) == 5
        scale = band_scale(expected)
        for row, want in zip(rows, expected, strict=True):
            assert f'data-entrant="{want.entrant}"' in row
            assert ("podium" in row.split(">", 1)[0]) == (want.rank <= 3)
            assert f'<strong class="figure">{want.rating:.2f}</strong>' in row
            assert f"{want.low:.2f} – {want.high:.2f}" in row  # the band printed as precisely as the rating
            interval = re.search(r'class="interval" style="left: ([\d.]+)%; width: ([\d.]+)%"', row)
            dot = re.search(r'class="dot" style="left: ([\d.]+)%"', row)
            assert interval is not None and dot is not None
            assert float(interval.group(1)) == pytest.approx(scale.at(want.low), abs=0.01)
            assert float(interval.group(1)) + float(interval.group(2)) == pytest.approx(scale.at(want.high), abs=0.02)
            assert float(dot.group(1)) == pytest.approx(scale.at(want.rating), abs=0.01)
            assert '<span class="badge good" title="this version is active">active</span>' in row
        ann = next(row for row in rows if 'data-entrant="ann"' in row)
        said = re.search(r'<time datetime="([^"]+)" title="([^"]+)">([^<]+)</time>', ann)
        assert said is not None and said.group(3) == "3 hours ago"
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", said.group(2))
        assert "2 days ago" in next(row for row in rows if 'data-entrant="bob"' in row)
        assert board.count('id="rating-rule"') == 1  # the one explanation, under the board


async def test_an_entrant_page_charts_every_version_and_its_matchup_cells_open_their_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ladder.web import pages

    async with running_server(tmp_path, ()) as server, httpx.AsyncClient(base_url=server.url) as http:
        store = server.ladder.store
        seed_history(store)
        page = (await http.get("/entrants/ann")).text
        chart = page.split('<svg id="rating-chart"', 1)[1].split("</svg>", 1)[0]
        versions = re.findall(r'<polyline [^>]*data-version="(\d)"', chart)
        assert versions == ["1", "2"]  # every version; the active one last, over the other
        assert 'stroke="#0072B2" stroke-width="2.5" data-version="2"' in chart
        caption = html.unescape(page.split('id="rating-chart-caption">', 1)[1].split("</figcaption>", 1)[0])
        assert caption.startswith("Version 2 (active): mu fell from ") and "over 6 games" in caption  # it lost all six
        assert "Earlier versions in grey: v1." in caption
        assert len(re.findall(r"<polygon ", chart)) == 2  # a band per version

        cells = re.findall(r'href="(/entrants/ann/games\?opponent=(\w+)&amp;version=(\d))"', page)
        assert {(o, v) for _, o, v in cells} == {
            ("bob", "2"), ("cat", "2"), ("dan", "2"), ("eve", "2"),
            ("bob", "1"), ("cat", "1"), ("dan", "1"), ("eve", "1"),
        }  # fmt: skip
        for address, opponent, version in cells:
            listed = await http.get(html.unescape(address))
            assert listed.status_code == 200
            shown = [
                int(n)
                for n in re.findall(r'<td class="num game-id"><span class="narrow">game </span>(\d+)', listed.text)
            ]
            wanted = store.games(entrant="ann", version_number=int(version), opponent=opponent)
            assert shown == [g.id for g in wanted] and shown
            assert f"against {opponent}" in listed.text

        monkeypatch.setattr(pages, "_GAMES_PAGE", 4)
        first = (await http.get("/entrants/ann/games")).text
        older = re.search(r'<a id="older" rel="next" href="([^"]+)"', first)
        assert older is not None
        second = (await http.get(html.unescape(older.group(1)))).text
        ids = [int(n) for n in re.findall(r"game </span>(\d+)", first + second)]
        assert ids == sorted(ids, reverse=True) and len(ids) == len(set(ids)) == 8

        wrong = await http.get("/entrants/ann/games?version=two")
        assert wrong.status_code == 400 and "version and before take a number" in wrong.text
        assert (await http.get("/entrants/nobody/games")).status_code == 404
        hostile = await http.get("/entrants/ann/games", params={"opponent": "<script>alert(1)</script>"})
        assert hostile.status_code == 200 and "<script>alert(1)" not in hostile.text and "No games yet." in hostile.text


async def test_a_game_page_links_back_to_the_ladder_and_its_entrants_and_offers_only_the_reader_s_seats(
    tmp_path: Path,
) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        game = seed_viewable_game(server.ladder.store, server.ladder.paths.replays, ["ann", "bob", "cat"])
        stranger = (await http.get(f"/games/game-{game}.html")).text
        site = stranger.split('<nav class="site"', 1)[1].split("</nav>", 1)[0]
        assert re.findall(r'href="([^"]+)"', site) == ["/", "/entrants/bob", "/entrants/ann", "/entrants/cat"]
        assert "test ladder: leaderboard" in site
        assert "seat-" not in stranger.split("</header>", 1)[0]  # not one tab that would answer 404

        ann = logged_in(server, "ann")
        mine = (await http.get(f"/games/game-{game}.html", headers=ann)).text
        assert re.findall(r'href="(game-\d+\.seat-\d\.html)"', mine) == [f"game-{game}.seat-0.html"]
        seat = await http.get(f"/games/game-{game}.seat-0.html", headers=ann)
        assert seat.status_code == 200 and 'aria-current="page"' in seat.text
        for address in re.findall(r'href="(game-\d+\.seat-\d\.html)"', mine):
            assert (await http.get(f"/games/{address}", headers=ann)).status_code == 200  # every tab opens
        assert (await http.get(f"/games/game-{game}.seat-1.html", headers=ann)).status_code == 404


async def test_a_ladder_without_games_says_so_on_every_page(tmp_path: Path) -> None:
    async with running_server(tmp_path, ("ann",)) as server, httpx.AsyncClient(base_url=server.url) as http:
        board = await http.get("/")
        # Every entrant is listed (issue 40): ann, with no version yet, unranked.
        assert board.status_code == 200 and 'class="unranked" data-entrant="ann"' in board.text
        assert "no version yet" in board.text
        mine = await http.get("/entrants/ann", headers=logged_in(server, "ann"))
        assert mine.status_code == 200 and "No version of ann is playing now." in mine.text
        assert 'id="rating-chart"' not in mine.text and mine.text.count("No games yet.") == 2  # matchups, games
        games = await http.get("/entrants/ann/games")
        assert games.status_code == 200 and "No games yet." in games.text and 'id="older"' not in games.text
        assert (await http.get("/entrants/ann/versions/1", headers=logged_in(server, "ann"))).status_code == 404


async def test_entrant_pages_read_the_board_at_most_once_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ladder.web import site as shared

    reads: list[int] = []
    real = shared.standings
    monkeypatch.setattr(shared, "standings", lambda *given: reads.append(1) or real(*given))
    now = [1000.0]
    monkeypatch.setattr(shared, "time", SimpleNamespace(monotonic=lambda: now[0]))
    async with running_server(tmp_path, ()) as server, httpx.AsyncClient(base_url=server.url) as http:
        seed_history(server.ladder.store)
        for name in ("ann", "bob", "cat", "ann"):
            assert (await http.get(f"/entrants/{name}", headers=logged_in(server, name))).status_code == 200
        assert len(reads) == 1  # four pages, as many entrants polling theirs, one read of the board
        eve = logged_in(server, "eve")  # the owner's page: never the anonymous page cache's copy
        before = re.search(r'rank <span class="big">(\d)</span>', (await http.get("/entrants/eve", headers=eve)).text)
        server.ladder.store.retire("bob")  # the board changes: eve moves up a place
        now[0] += 1.5
        after = re.search(r'rank <span class="big">(\d)</span>', (await http.get("/entrants/eve", headers=eve)).text)
        assert before is not None and after is not None and int(after.group(1)) == int(before.group(1)) - 1
        assert len(reads) == 2


async def test_a_large_board_is_shown_a_page_of_rows_at_a_time_with_every_row_in_the_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ladder.store import new_token
    from ladder.web import pages

    monkeypatch.setattr(pages, "BOARD_PAGE_ROWS", 4)  # 10 entrants: pages of 4, 4 and 2 rows
    async with running_server(tmp_path, ()) as server, httpx.AsyncClient(base_url=server.url) as http:
        seed_history(server.ladder.store)  # 5 entrants with versions and games
        for n in range(5):
            server.ladder.store.add_entrant(f"late{n}", new_token())  # no version yet: unranked, listed last
        expected = [row.entrant for row in standings(server.ladder.store)]
        shown = []
        for number in (1, 2, 3):
            board = (await http.get(f"/?page={number}")).text
            shown += [re.search(r'data-entrant="([^"]+)"', row).group(1) for row in rows_of(board)]  # type: ignore[union-attr]
            assert f"page {number} of 3" in board
            assert ('rel="next"' in board) == (number < 3) and ('rel="prev"' in board) == (number > 1)
        assert shown == expected  # every row once, in the board's order
        assert rows_of((await http.get("/")).text) == rows_of((await http.get("/?page=1")).text)
        assert [row["entrant"] for row in (await http.get("/api/standings")).json()] == expected
        assert (await http.get("/?page=4")).status_code == 404
        refused = await http.get("/?page=two")
        assert refused.status_code == 400 and "page takes a number" in refused.text


async def test_an_entrant_page_lists_the_opponents_it_met_most_and_says_how_many_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ladder.views import entrant_view
    from ladder.web import pages

    monkeypatch.setattr(pages, "MATCHUP_ROWS", 2)
    async with running_server(tmp_path, ()) as server, httpx.AsyncClient(base_url=server.url) as http:
        seed_history(server.ladder.store)
        view = entrant_view(server.ladder.store, "ann", owner=False)
        assert view is not None and len(view.matchups) > 2
        most = sorted(view.matchups, key=lambda m: -m.games)[:2]
        text = (await http.get("/entrants/ann")).text
        table = text.split('<table id="matchups"', 1)[1].split("</table>", 1)[0]
        listed = re.findall(r'<tr><td><a href="/entrants/([^"]+)">', table)
        assert listed == sorted(m.opponent for m in most)  # the two met most, in name order
        assert f"{len(view.matchups) - 2} more opponent" in text and 'href="/api/entrants/ann"' in text
        every = (await http.get("/api/entrants/ann")).json()["matchups"]
        assert [m["opponent"] for m in every] == [m.opponent for m in view.matchups]  # the API lists every one
