"""What an entrant reads to act on a version: its build output and its check-bot report, to its owner only.

- ``/entrants/NAME/versions/N``: the version's state and reason, its whole
  build output (bounded as kept, ``ladder.build_logs``) and every check of
  its check-bot report, passed ones included, with links to download both.
- ``/entrants/NAME/versions/N/build.txt``: the build output as a file.

Anyone else gets the 404 of a version that does not exist, as for the other
owner-only pages. An empty output or a version whose build never ran says so
in words, never as a blank page. (A game's stderr is ``/games/N/stderr/S``,
``ladder.web.pages``; the report's JSON is the API's.)
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ladder.build_logs import build_log
from ladder.store import VersionRow
from ladder.web.auth import owns
from ladder.web.site import PAGE_HEADERS, not_found, page, site

__all__ = ["routes"]


def _owned_version(request: Request) -> VersionRow | None:
    """The version the address names, when the reader owns it; None for anyone else and for none at all."""
    name, number = request.path_params["name"], request.path_params["number"]
    if not owns(request, name):
        return None
    return next((v for v in site(request).store.versions(entrant=name) if v.number == number), None)


def _no_output(version: VersionRow) -> str:
    """Words for a version that has no build output kept."""
    if version.state in ("queued", "checking"):
        return f"Version {version.number} has not been built yet: it is {version.state}."
    return (
        f"No build ran for version {version.number}: its bot.toml has no build command, it was refused before "
        "its build could start (the reason says why), or it was checked before this ladder kept build output."
    )


async def version_page(request: Request) -> Response:
    version = _owned_version(request)
    if version is None:
        return not_found(request)
    output = build_log(site(request).ladder.paths, version.id)
    text = site(request).store.report(version.id)
    report: dict[str, Any] = msgspec.json.decode(text) if text else {}
    name = version.entrant
    return page(
        request,
        "version.html.j2",
        title=f"{name}, version {version.number}",
        version=version,
        output=output,
        no_output=_no_output(version) if output is None else "",
        checks=report.get("checks") or [],
        report_summary=report if "passed" in report else None,
        build_file=f"/entrants/{name}/versions/{version.number}/build.txt",
        report_file=f"/api/entrants/{name}/versions/{version.number}/report",
    )


async def build_download(request: Request) -> Response:
    version = _owned_version(request)
    if version is None:
        return not_found(request)
    output = build_log(site(request).ladder.paths, version.id)
    if output is None:
        text = _no_output(version) + "\n"
    elif not output:
        text = f"(the build of version {version.number} ran and wrote nothing)\n"
    else:
        text = output
    filename = f"{version.entrant}-v{version.number}-build.txt"
    headers = {**PAGE_HEADERS, "cache-control": "no-store", "content-disposition": f'inline; filename="{filename}"'}
    return Response(text, media_type="text/plain; charset=utf-8", headers=headers)


routes = [
    Route("/entrants/{name}/versions/{number:int}", version_page),
    Route("/entrants/{name}/versions/{number:int}/build.txt", build_download),
]
