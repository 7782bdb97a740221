"""A Dask cluster's identity: the scheduler proves it was started for this host's famiglia.

A Dask scheduler answers whoever connects, and a client or worker joins
whatever scheduler listens at the address it was given: if another program
started one on that port first, a tournament, a ladder or a worker would play
there without a word. Dask's TLS settles who may connect, but a plain tcp://
cluster (one machine, a private network) has nothing that names it.

The identity is a secret the host, the workers and the scheduler share, in the
``FAMIGLIA_CLUSTER_SECRET`` environment variable. The scheduler is started with
this module as a preload (``dask scheduler --preload
tournaments.hosting.executors.cluster_identity``), which adds one handler to it:
given a fresh random challenge, it answers the challenge's HMAC-SHA256 under the
secret. The host and ``famiglia worker start`` send a challenge of their own
before they join, and refuse a scheduler whose answer is missing (one started
without the preload: another program's) or wrong (another secret). The secret
itself never crosses the wire, and an answer cannot be replayed to another
challenge.

Without the variable on the host, a scheduler that proves an identity is
refused (it was started for someone else's runs), and one that proves none is
taken as before: a host that sets no secret asked for no identity.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from typing import Any

from distributed.comm import connect
from distributed.security import Security

from tournaments.hosting.executors.asyncio_apart import run_apart

__all__ = ["OP", "PRELOAD", "SECRET_VARIABLE", "answer", "cluster_secret", "dask_setup", "identity_problem"]

SECRET_VARIABLE = "FAMIGLIA_CLUSTER_SECRET"
PRELOAD = "tournaments.hosting.executors.cluster_identity"
OP = "famiglia_cluster_identity"
"""The scheduler handler's name: what a challenge is sent as."""
_MIN_SECRET = 16
_CHALLENGE_CHARS = 64
_HOW = (
    f"start it with {SECRET_VARIABLE} set to this host's secret and `dask scheduler --preload {PRELOAD}` "
    "(docs/distributed.md, Cluster identity)"
)


def cluster_secret() -> bytes | None:
    """The secret from ``FAMIGLIA_CLUSTER_SECRET``; None when unset or empty; ValueError when too short to
    be one (a guessable secret proves nothing)."""
    value = os.environ.get(SECRET_VARIABLE, "").strip()
    if not value:
        return None
    if len(value) < _MIN_SECRET:
        raise ValueError(
            f"{SECRET_VARIABLE} is {len(value)} characters long: give at least {_MIN_SECRET}, for example "
            "the output of `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`"
        )
    return value.encode()


def answer(secret: bytes, challenge: str) -> str:
    """The proof of holding ``secret`` for ``challenge``."""
    return hmac.new(secret, b"famiglia-cluster:" + challenge.encode(), hashlib.sha256).hexdigest()


def dask_setup(scheduler: Any) -> None:
    """Dask's preload hook, run in the scheduler as it starts: add the handler that answers challenges."""
    secret = cluster_secret()
    if secret is None:
        raise ValueError(
            f"{PRELOAD}: set {SECRET_VARIABLE} to the cluster's secret before starting the scheduler "
            "(docs/distributed.md, Cluster identity)"
        )

    def prove(comm: object, challenge: object = None) -> str:
        # Anyone may ask: a bounded string gets its proof, anything else none.
        if not isinstance(challenge, str) or not 0 < len(challenge) <= _CHALLENGE_CHARS:
            return ""
        return answer(secret, challenge)

    scheduler.handlers[OP] = prove


async def _ask(address: str, security: Security, challenge: str, timeout_s: float) -> object:
    comm = await connect(address, timeout=timeout_s, **security.get_connection_args("client"))
    try:
        await comm.write({"op": OP, "challenge": challenge, "reply": True})
        return await comm.read()
    finally:
        await comm.close()


def identity_problem(address: str, security: Security, timeout_s: float) -> str | None:
    """Why the scheduler at ``address`` is not the one this host's runs were meant for, in a line; None
    when it is (or when neither side has an identity). Raises what connecting raises (OSError, TimeoutError)."""
    secret = cluster_secret()
    challenge = secrets.token_hex(_CHALLENGE_CHARS // 2)
    try:
        reply = run_apart(lambda: _ask(address, security, challenge, timeout_s), timeout_s)
    except TimeoutError:
        raise TimeoutError(f"no answer to the cluster identity challenge within {timeout_s:g} s") from None
    proved = isinstance(reply, str) and bool(reply)  # a scheduler without the handler answers None
    if secret is None:
        if proved:
            return (
                f"the Dask scheduler at {address} was started with a famiglia cluster secret and this host has "
                f"none: set {SECRET_VARIABLE} to the same secret here (docs/distributed.md, Cluster identity)"
            )
        return None
    if not proved:
        return (
            f"the Dask scheduler at {address} was not started for this famiglia (it proves no cluster secret; "
            f"another program may have started it on that port): {_HOW}"
        )
    if not hmac.compare_digest(str(reply), answer(secret, challenge)):
        return (
            f"the Dask scheduler at {address} was started with another cluster secret than this host's "
            f"{SECRET_VARIABLE}: {_HOW}"
        )
    return None
