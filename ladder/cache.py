"""A short-lived cache of what anonymous readers get: the same page for everyone, rendered once a second.

Fifty people watching a leaderboard would otherwise each have it rendered
from the store, on the Trio thread that also referees the games. A page
without a token is the same for every reader, so it is kept for
``max_age_s`` (a second by default: a reader never sees standings older than
that) and served from memory. Responses to requests that carry a token are
never kept: they may hold what only their owner may read.
"""

from __future__ import annotations

import time

__all__ = ["PageCache"]


class PageCache:
    def __init__(self, max_age_s: float = 1.0, max_entries: int = 1000) -> None:
        self.max_age_s = max_age_s
        self.max_entries = max_entries
        self._entries: dict[str, tuple[float, int, bytes, str]] = {}

    def get(self, key: str) -> tuple[int, bytes, str] | None:
        """(status, body, media type) of a fresh entry, or None."""
        entry = self._entries.get(key)
        if entry is None or time.monotonic() - entry[0] > self.max_age_s:
            return None
        return entry[1], entry[2], entry[3]

    def put(self, key: str, status: int, body: bytes, media_type: str) -> None:
        if len(self._entries) >= self.max_entries:
            # Addresses are chosen by readers: a flood of distinct ones empties the cache, never grows it.
            self._entries.clear()
        self._entries[key] = (time.monotonic(), status, body, media_type)
