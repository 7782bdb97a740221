"""A viewer page served by a site (the ladder): links back to it, and tabs only for the seats its reader may open.

Written alone (``famiglia replay view``) a page keeps every seat's tab and no site links.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.tournaments.replay_factory import HOSTILE, vendetta_replay
from tournaments.hosting.viewer import build_viewer_data
from tournaments.hosting.viewer.page import render_view


def tabs(html: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)" data-view-link', html)


def test_alone_a_page_has_a_tab_for_every_seat_and_no_site_links(tmp_path: Path) -> None:
    data = build_viewer_data(vendetta_replay(tmp_path / "g.jsonl"))
    html = render_view(data, "all", Path("g.html"))
    assert tabs(html) == ["g.html", "g.seat-0.html", "g.seat-1.html", "g.seat-2.html"]
    assert 'class="site"' not in html


def test_a_site_s_page_shows_only_the_readers_seats_and_links_back(tmp_path: Path) -> None:
    data = build_viewer_data(vendetta_replay(tmp_path / "g.jsonl"))
    links = [("club: leaderboard", "/"), (HOSTILE, "/entrants/x")]
    stranger = render_view(data, "all", Path("game-4.html"), seat_tabs=set(), site_links=links)
    assert tabs(stranger) == []  # no tab that would answer 404, and no lone "everything" tab either
    assert 'aria-label="choose a view"' not in stranger
    site = stranger.split('<nav class="site"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'href="([^"]+)"', site) == ["/", "/entrants/x"]
    assert HOSTILE not in stranger  # a name in a link is text
    owner = render_view(data, "1", Path("game-4.html"), seat_tabs={1}, site_links=links)
    assert tabs(owner) == ["game-4.html", "game-4.seat-1.html"]
