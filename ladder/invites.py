"""Invite codes: what lets a stranger register themselves as an entrant.

A code is multi-use with a limit and an expiry, not single-use: a host hands
one code to a class or a club, and the limit bounds what a leaked code costs.
The store keeps only the code's hash, as it does for tokens; the code itself
is printed once by ``famiglia ladder invite``.
"""

from __future__ import annotations

import datetime
import hmac

from ladder.store import LadderStore, hash_token

__all__ = ["InviteRefused", "add_invite", "redeem_invite", "revoke_invites"]


class InviteRefused(ValueError):
    """A registration the ladder does not take; its message is safe to show the person registering."""


def _now() -> float:
    return datetime.datetime.now(datetime.UTC).timestamp()


def add_invite(store: LadderStore, code: str, uses: int, days: float) -> None:
    with store.transaction():
        store.db.execute(
            "INSERT INTO invite VALUES (?, ?, ?, ?)",
            (hash_token(code), uses, _now() + days * 86400, datetime.datetime.now(datetime.UTC).isoformat()),
        )


def redeem_invite(store: LadderStore, code: str, name: str, token: str) -> None:
    """Register ``name`` with ``token`` if ``code`` is live and the name free; one transaction.

    Wrong, used-up and expired codes are refused with the same words, so a guesser
    learns nothing about which codes once existed.
    """
    db = store.db
    wanted = hash_token(code)
    with store.transaction():
        found: str | None = None
        for stored, uses_left, expires_at in db.execute("SELECT code_hash, uses_left, expires_at FROM invite"):
            if hmac.compare_digest(stored, wanted) and uses_left > 0 and expires_at > _now():
                found = stored
        if found is None:
            raise InviteRefused("this invite code is not valid; ask the host for a current one")
        try:
            store.insert_entrant(name, token)
        except ValueError as exc:
            raise InviteRefused(str(exc)) from None
        db.execute("UPDATE invite SET uses_left = uses_left - 1 WHERE code_hash = ?", (found,))


def revoke_invites(store: LadderStore) -> int:
    """Spend every live code at once (a code leaked); how many were live. Entrants already registered stay."""
    with store.transaction():
        cursor = store.db.execute("UPDATE invite SET uses_left = 0 WHERE uses_left > 0 AND expires_at > ?", (_now(),))
    return cursor.rowcount
