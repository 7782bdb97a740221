"""``famiglia ladder serve``: the web app and the match loop in one Trio world.

Hypercorn's Trio worker serves the Starlette app in the same Trio run as the
ladder's loops, so a request reads the store between two of the loop's
steps, never in the middle of one, and a submission is handed to its check
without a thread or a queue between processes. One server per ladder: the
store's lock (``tournaments.hosting.storage.hold_store``) refuses a second one at once.

Stopping: SIGTERM (systemd's stop, ``kill``) ends the server as its end of
``--stop-after`` does, games in play going back to pending; SIGINT stays Ctrl-C
(exit 130). Both are listened for even when the server inherited SIGINT
ignored, as a job started with ``&`` from a script does.
"""

from __future__ import annotations

import errno
import signal
import socket
from collections.abc import Callable
from functools import partial

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from ladder.config import LadderConfig, LadderPaths
from ladder.loop import Ladder
from ladder.web.app import make_app
from ladder.webhooks import deliver_webhooks
from tournaments.hosting.executors.base import Executor
from tournaments.hosting.storage import hold_store

__all__ = ["check_address", "serve_ladder"]


def check_address(host: str, port: int) -> None:
    """ValueError with one line naming ``host`` or ``port`` when the server could not listen there.

    Called before anything is created or reached (the store, a Dask scheduler), so a
    mistyped host or a port in use costs the host nothing to undo. A port taken between
    this check and the server's own bind still fails, as before, only less helpfully.
    """
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError):
        raise ValueError(
            f"--host {host!r}: no such host or address; give an address of this machine "
            "(127.0.0.1 for this machine alone, 0.0.0.0 for every network)"
        ) from None
    for family, kind, protocol, _, address in addresses:
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server's own bind does
            try:
                probe.bind(address)
            except OSError as exc:
                raise ValueError(_cannot_listen(host, port, exc)) from None


def _cannot_listen(host: str, port: int, exc: OSError) -> str:
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return f"--port {port}: {where} is in use (another server?); choose another port, or --port 0 for any free one"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"--host {host!r}: not an address of this machine; try 127.0.0.1 or 0.0.0.0"
    if exc.errno == errno.EACCES:
        return f"--port {port}: this user may not listen on ports below 1024; choose 1024 or above"
    return f"cannot listen on {where}: {exc.strerror or exc}"


async def serve_ladder(
    config: LadderConfig,
    paths: LadderPaths,
    *,
    host: str,
    port: int,
    stop_after: int | None = None,
    announce: Callable[[str], None] = print,
    executor: Executor | None = None,
) -> int:
    """Serve until cancelled (Ctrl-C) or, with ``stop_after``, until that many games were played; games played.

    ``executor``: who plays the games (``tournaments.hosting.executors.choice.executor_for``); default: this
    process. It is opened and closed with the match loop.
    """
    lock = hold_store(paths.db)
    try:
        ladder = Ladder(config, paths, stop_after=stop_after, executor=executor)
        web = Config()
        web.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
        web.accesslog = None
        web.errorlog = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stop_on_signals, nursery.cancel_scope, announce)
            if config.notifications.webhooks:
                nursery.start_soon(
                    partial(deliver_webhooks, ladder.store, private_addresses=config.notifications.private_addresses)
                )
            await nursery.start(ladder.run_until_stopped, nursery.cancel_scope)
            binds = await nursery.start(hypercorn_serve, make_app(ladder), web)
            for bind in binds:
                announce(f"serving {config.name!r} on {bind}")
        return ladder.played
    finally:
        lock.release()


async def _stop_on_signals(scope: trio.CancelScope, announce: Callable[[str], None]) -> None:
    """SIGTERM cancels ``scope`` (a clean stop, exit 0); SIGINT raises KeyboardInterrupt, as Ctrl-C does."""
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        async for number in received:
            if number == signal.SIGINT:
                raise KeyboardInterrupt
            announce("SIGTERM: stopping; games in play are played again at the next start")
            scope.cancel()
            return
