"""The seasons' pages: ``/seasons`` (every season, each closed one's final standings) and each final's report.

A final's report is the tournament's own page (``tournaments.hosting.finals``),
written under ``LADDER-data/seasons/N/``: ``/seasons/N/report.html`` and its
viewer pages ``/seasons/N/report-games/*.html``. Only those HTML files are
served, by a name that must match exactly: the final's store and replays beside
them are the host's.
"""

from __future__ import annotations

import re

import trio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ladder.final import season_folder
from ladder.web.site import PAGE_HEADERS, not_found, page, site

__all__ = ["routes"]

_REPORT_FILE = re.compile(r"report\.html|report-games/[A-Za-z0-9_.-]{1,200}\.html")


async def seasons(request: Request) -> Response:
    ladder = site(request).ladder
    return page(
        request,
        "seasons.html.j2",
        title="Seasons",
        seasons=list(reversed(ladder.seasons.seasons())),
        closed=ladder.season_closed(),
    )


async def report_file(request: Request) -> Response:
    ladder = site(request).ladder
    number, name = request.path_params["number"], request.path_params["name"]
    season = ladder.seasons.season(number)
    if season is None or season.published is None or _REPORT_FILE.fullmatch(name) is None or ".." in name:
        return not_found(request)
    path = season_folder(ladder.paths, number) / name
    try:
        data = await trio.to_thread.run_sync(path.read_bytes)
    except OSError:
        return not_found(request)
    return Response(data, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


routes = [
    Route("/seasons", seasons),
    Route("/seasons/{number:int}/{name:path}", report_file),
]
