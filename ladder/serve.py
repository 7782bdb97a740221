"""``famiglia ladder serve``: the web app and the match loop in one Trio world.

Hypercorn's Trio worker serves the Starlette app in the same Trio run as the
ladder's loops, so a request reads the store between two of the loop's
steps, never in the middle of one, and a submission is handed to the intake
without a thread or a queue between processes. One server per ladder: the
store's lock (``tournaments.store.hold_store``) refuses a second one at once.

Stopping: SIGTERM (systemd's stop, ``kill``) ends the server as its end of
``--stop-after`` does, games in play going back to pending; SIGINT stays Ctrl-C
(exit 130). Both are listened for even when the server inherited SIGINT
ignored, as a job started with ``&`` from a script does.
"""

from __future__ import annotations

import signal
from collections.abc import Callable

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from ladder.config import LadderConfig, LadderPaths
from ladder.loop import Ladder
from ladder.players import GamePlayer
from ladder.web.app import make_app
from tournaments.store import hold_store

__all__ = ["serve_ladder"]


async def serve_ladder(
    config: LadderConfig,
    paths: LadderPaths,
    *,
    host: str,
    port: int,
    stop_after: int | None = None,
    announce: Callable[[str], None] = print,
    player: GamePlayer | None = None,
) -> int:
    """Serve until cancelled (Ctrl-C) or, with ``stop_after``, until that many games were played; games played.

    ``player``: who plays the games (``ladder.player_choice.choose_player``); default: this process.
    """
    lock = hold_store(paths.db)
    try:
        ladder = Ladder(config, paths, stop_after=stop_after, player=player)
        web = Config()
        web.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
        web.accesslog = None
        web.errorlog = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stop_on_signals, nursery.cancel_scope, announce)
            await nursery.start(ladder.run_until_stopped, nursery.cancel_scope)
            binds = await nursery.start(hypercorn_serve, make_app(ladder), web)
            for bind in binds:
                announce(f"serving {config.name!r} on {bind}")
        return ladder.played
    finally:
        try:
            if player is not None:
                with trio.CancelScope(shield=True):
                    await player.close()
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
