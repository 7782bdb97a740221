"""A ladder's web app served over real HTTP inside the test's Trio run, for httpx to talk to."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from ladder.config import LadderPaths, load_ladder
from ladder.loop import Ladder
from ladder.web.app import make_app
from ladder.web.guard import Throttle
from tests.ladder.helpers import write_ladder


class Running(msgspec.Struct, kw_only=True):
    url: str
    ladder: Ladder
    tokens: dict[str, str]


@asynccontextmanager
async def running_server(
    folder: Path, entrants: tuple[str, ...] = ("ann", "bob"), *, play: bool = False, throttle: Throttle | None = None
) -> AsyncIterator[Running]:
    """Serve a fresh ladder on a free port of 127.0.0.1; with ``play``, its submissions' checks and match loop run too."""
    from ladder.store import new_token

    path = write_ladder(folder)
    ladder = Ladder(load_ladder(path), LadderPaths.beside(path))
    tokens = {}
    for name in entrants:
        tokens[name] = new_token()
        ladder.store.add_entrant(name, tokens[name])
    web = Config()
    web.bind = ["127.0.0.1:0"]
    web.accesslog = web.errorlog = None
    async with trio.open_nursery() as nursery:
        if play:
            await nursery.start(ladder.run)
        binds = await nursery.start(serve, make_app(ladder, throttle=throttle), web)
        yield Running(url=binds[0], ladder=ladder, tokens=tokens)
        nursery.cancel_scope.cancel()


def bearer(token: str) -> dict[str, str]:
    """The header an entrant's script sends its token in."""
    return {"authorization": f"Bearer {token}"}


def logged_in(server: Running, name: str) -> dict[str, str]:
    """The cookie header of a browser in which ``name`` logged in: a session of its, as /login opens."""
    from ladder.sessions import open_session

    entrant = server.ladder.store.entrant(name)
    assert entrant is not None
    return {"cookie": f"ladder_token={open_session(server.ladder.store, entrant.id)}"}
