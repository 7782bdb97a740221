"""Run one of Dask's asyncio exchanges to its end from synchronous code, whatever the calling thread runs.

``asyncio.run`` refuses a thread that runs an event loop already: a notebook's,
or one another library left running there. The exchanges before a host joins a
cluster (its handshake, the cluster identity's challenge) are short, so each gets
a fresh thread and a fresh loop of its own, and the caller waits for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["run_apart"]

T = TypeVar("T")


def run_apart(exchange: Callable[[], Coroutine[Any, Any, T]], timeout_s: float) -> T:
    """``exchange()`` run on its own loop in its own thread, within ``timeout_s`` (TimeoutError past it);
    what it returns, or what it raises."""

    def run() -> T:
        return asyncio.run(asyncio.wait_for(exchange(), timeout_s))

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="famiglia-dask-exchange") as pool:
        return pool.submit(run).result()
