"""The replay viewer: self-contained HTML pages that replay a game move by move."""

from tournaments.hosting.viewer.build import NoGameToDraw, NotAReplay, NoViewer, ViewerData, build_viewer_data
from tournaments.hosting.viewer.page import render_view, seat_page, write_viewer

__all__ = [
    "NoGameToDraw",
    "NoViewer",
    "NotAReplay",
    "ViewerData",
    "build_viewer_data",
    "render_view",
    "seat_page",
    "write_viewer",
]
