"""Entrants' login sessions and token replacement: the browser never holds the token itself.

The login cookie used to be the raw token for 30 days: whoever read it (a
shared machine, a leaked backup of a browser profile) held the entrant's
uploads for good. Now ``/login`` opens a session: a random id, kept in the
store only as its SHA-256, expiring after ``SESSION_DAYS``; the cookie holds
that id. Replacing a token (the entrant's own rotation, or the host's
``famiglia ladder reset-token``) ends every session of the entrant in the
same transaction, so a lost or leaked token and every browser it was used in
are cut off at once, and the entrant keeps its name and history.

Like ``ladder.invites``, a module that works on a table of its own in the
ladder's store (``session``, declared with the store's schema).
"""

from __future__ import annotations

import time

from ladder.store import EntrantRow, LadderStore, hash_token, new_token

__all__ = ["SESSION_DAYS", "close_session", "entrant_of_session", "open_session", "replace_token"]

SESSION_DAYS = 30


def open_session(store: LadderStore, entrant: int) -> str:
    """A new session of ``entrant``: its id, for the cookie; only the hash is kept."""
    session = new_token()
    with store.transaction():
        # Expired sessions are swept here, where sessions are made, not on every request.
        store.db.execute("DELETE FROM session WHERE expires_at <= ?", (time.time(),))
        store.db.execute(
            "INSERT INTO session VALUES (?, ?, ?)", (hash_token(session), entrant, time.time() + SESSION_DAYS * 86400)
        )
    return session


def entrant_of_session(store: LadderStore, session: str) -> EntrantRow | None:
    """The entrant whose live session ``session`` is, or None (unknown, expired, or ended by a new token)."""
    row = store.db.execute(
        "SELECT e.id, e.name, e.created FROM session s JOIN entrant e ON e.id = s.entrant "
        "WHERE s.id_hash = ? AND s.expires_at > ?",
        (hash_token(session), time.time()),
    ).fetchone()
    return None if row is None else EntrantRow(id=row[0], name=row[1], created=row[2])


def close_session(store: LadderStore, session: str) -> None:
    """End one session (logging out)."""
    with store.transaction():
        store.db.execute("DELETE FROM session WHERE id_hash = ?", (hash_token(session),))


def replace_token(store: LadderStore, name: str) -> str:
    """A new token for the entrant ``name``, printed once by the caller; the old token and every session
    end with it. ValueError when there is no such entrant."""
    token = new_token()
    with store.transaction():
        row = store.db.execute("SELECT id FROM entrant WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise ValueError(f"there is no entrant named {name!r}")
        store.db.execute("UPDATE entrant SET token_hash = ? WHERE id = ?", (hash_token(token), row[0]))
        store.db.execute("DELETE FROM session WHERE entrant = ?", (row[0],))
    return token
