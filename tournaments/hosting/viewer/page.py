"""Viewer pages: one self-contained HTML file per view of a replay.

``game.html`` shows everything; ``game.seat-N.html`` shows what seat N knew at
each step and holds nothing more (its data is the engine's view for that seat),
so a bot author can publish or read a seat's page without leaking the others'
cards. A page written alone (``famiglia replay view``) carries its data, the
generic player (``static/viewer.js``), its styles and the game's board script
(its own ``board.js``, or the generic tables of presentation.py), and fetches
nothing. The pages of a report carry only their game's
data (packed, see ``templating.packed_json``) and load the player, the styles
and the board scripts from one folder of files shared by every game
(``write_assets``): a thousand games do not repeat them a thousand times.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from referee.games import get_rules
from tournaments.hosting.viewer.build import ViewerData, build_viewer_data, no_cycle_collection
from tournaments.hosting.viewer.presentation import presentation_for
from tournaments.hosting.viewer.reading import LeftOut
from tournaments.hosting.viewer.templating import environment, package_text, packed_json

__all__ = ["ASSETS", "SEAT_COLOURS", "board_file", "render_view", "seat_page", "write_assets", "write_viewer"]

ASSETS = "assets"
"""The folder beside a report's viewer pages that holds the files they share."""

# Okabe-Ito: told apart with the common colour-vision deficiencies; every use
# also prints the seat's name beside the colour.
SEAT_COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")


def seat_page(out: Path, seat: int) -> Path:
    """Where seat ``seat``'s page of the viewer written to ``out`` goes."""
    return out.with_name(f"{out.stem}.seat-{seat}{out.suffix or '.html'}")


def board_file(game: str) -> str:
    """The shared file name of a game's board script (a plug-in's name may hold any character)."""
    return "board-" + re.sub(r"[^a-z0-9_-]", "_", game.lower()) + ".js"


def _board_script(game: str) -> str:
    """The game's own board.js, or the generic tables; "" when the game cannot be loaded."""
    try:
        return presentation_for(get_rules(game)).board_script
    except (ValueError, ImportError, OSError):
        return ""  # the page then says the board cannot be drawn


def render_view(
    data: ViewerData,
    view: str,
    out: Path,
    *,
    assets: str | None = None,
    seat_tabs: Collection[int] | None = None,
    site_links: Sequence[tuple[str, str]] = (),
) -> str:
    """The HTML of one view ("all" or a seat number as text).

    ``assets``: the folder (relative to the page) of the files ``write_assets``
    wrote, which the page then loads; None puts everything in the page.
    ``seat_tabs``: the seats whose pages the reader may open, given a tab each
    (None: every seat, as beside a written viewer); a site serving the pages
    to readers who may open only some (the ladder) names those.
    ``site_links``: (label, address) pairs of a site the page is part of,
    shown above the game as a way back to it.
    """
    links = [{"label": "everything", "href": out.name, "current": view == "all", "seat": None}]
    for seat, name in enumerate(data.seats):
        if seat_tabs is None or seat in seat_tabs or view == str(seat):
            links.append({"label": f"seat {seat} {name}", "href": seat_page(out, seat).name,
                          "current": view == str(seat), "seat": seat})  # fmt: skip
    payload: dict[str, Any] = {
        "game": data.game,
        "match": data.match,
        "seats": data.seats,
        "colours": list(SEAT_COLOURS[: len(data.seats)]),
        "variants": data.variants,
        "view": None if view == "all" else int(view),
        "steps": data.views.get(view, []),
        "final": data.final,
        "problem": None if data.problem is None else {"line": data.problem.line, "message": data.problem.message},
    }
    title = f"{data.game} {data.match}"
    left_out = [_left_out_note(data, left) for left in data.left_out if view in ("all", str(left.seat))]
    if view != "all":
        title += f" (seat {view}'s view)"
    return (
        environment()
        .get_template("viewer.html.j2")
        .render(
            title=title,
            data=data,
            view=view,
            links=links,
            left_out=left_out,
            site_links=site_links,
            payload=packed_json(payload),
            colours=SEAT_COLOURS,
            assets=assets,
            board_file=board_file(data.game),
            style="" if assets else package_text("viewer.css"),
            player_script="" if assets else package_text("viewer.js"),
            board_script="" if assets else _board_script(data.game),
        )
    )


def _left_out_note(data: ViewerData, left: LeftOut) -> str:
    """The page's words for what it leaves out of one seat's output."""
    cap = f"{(data.notes_bytes or 0) >> 10:,} KiB"
    return (
        f"This page leaves out {left.lines:,} of seat {left.seat}'s log lines and rejected actions "
        f"({_size(left.bytes)} of the replay): a page here holds at most {cap} of each seat's."
    )


def _size(count: int) -> str:
    return f"{count / (1 << 20):,.1f} MiB" if count >= 1 << 20 else f"{count / 1024:,.1f} KiB"


def write_viewer(replay: Path, out: Path, *, assets: str | None = None, strict: bool = False) -> list[Path]:
    """Write every view of ``replay`` beside ``out``; the files written, ``out`` first.

    ``assets`` as for ``render_view``. NotAReplay (a ValueError) when
    ``replay`` is not a replay at all; with ``strict``, NoGameToDraw (a
    NotAReplay) when its header is of a game not installed here or of another
    game than its records, and nothing is written.
    """
    # The collector is paused until the game's snapshots are freed again (see
    # no_cycle_collection): resumed before that, it would first scan
    # every one of them, for nothing.
    with no_cycle_collection():
        pages = _render_pages(replay, out, assets, strict)
    # ``out`` last: once it is there, so is every page of its replay (a report keeps such pages).
    for path, html in pages:
        _write_atomically(path, html)
    return [out, *(path for path, _ in pages[:-1])]


def _render_pages(replay: Path, out: Path, assets: str | None, strict: bool) -> list[tuple[Path, str]]:
    """Every page of ``replay``, each seat's first and ``out`` last; the snapshots are freed on return."""
    data = build_viewer_data(replay, strict=strict)
    seats = [(str(seat), seat_page(out, seat)) for seat in range(len(data.seats))]
    return [(path, render_view(data, view, out, assets=assets)) for view, path in [*seats, ("all", out)]]


def write_assets(folder: Path, games: Iterable[str]) -> list[Path]:
    """The files the pages written with ``assets`` share: the player, its styles, each game's board.

    A game without a board.js of its own gets the generic tables; one that cannot be
    loaded gets none, and its pages say so.
    """
    files = {"viewer.css": package_text("viewer.css"), "viewer.js": package_text("viewer.js")}
    for game in sorted(set(games)):
        if script := _board_script(game):
            files[board_file(game)] = script
    written = []
    for name, text in files.items():
        _write_atomically(folder / name, text)
        written.append(folder / name)
    return written


def _write_atomically(path: Path, text: str) -> None:
    """Written beside and renamed into place: a reader never sees half a page.

    Owner-only (0600, new folders 0700), like the replay it comes from: a page
    holds the whole deal, and a sandboxed bot of the same tournament, running
    as another user, must not read the deal of a game whose seats are rotated
    and played again on the same seed. Publishing the pages is the host's act.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
