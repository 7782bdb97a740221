"""Warm processes: reused across games, never for a deal they have already played."""

from __future__ import annotations

import trio

from referee.bots import load_bot
from referee.channel import DeadBot
from referee.seats import open_pool
from referee.settings import RefereeSettings
from tests.conftest import TEST_BOTS


async def test_a_warm_process_never_plays_the_same_deal_twice() -> None:
    # Duplicate deals replay one deal with the seats rotated; a process that
    # played the first game would know every hidden card of the next.
    passer = load_bot(str(TEST_BOTS / "passer"))
    async with open_pool(RefereeSettings(grace_ms=100)) as pool:
        first = await pool.acquire(passer, deal=5)
        pool.release(first, passer)
        again = await pool.acquire(passer, deal=5)
        assert again is not first  # a fresh process for a deal the warm one knows
        pool.release(again, passer)
        other = await pool.acquire(passer, deal=6)
        assert other in (first, again)  # warm processes still serve other deals
        pool.release(other, passer)
        assert pool.started == 2
        untracked = await pool.acquire(passer)
        assert untracked in (first, again)  # without a deal, any idle process
        pool.release(untracked, passer)


async def test_a_closing_pool_starts_no_process_and_its_block_ends() -> None:
    # A game still in play when its referee stops may ask for a replacement seat
    # (its warm process was just closed). The pool must not start one: it would
    # outlive the pool and hold the block open (found on a Dask worker's Ctrl-C).
    passer = load_bot(str(TEST_BOTS / "passer"))
    with trio.fail_after(60):
        async with open_pool(RefereeSettings(grace_ms=100)) as pool:
            busy = await pool.acquire(passer, deal=1)
            pool.close_all()
            replacement = await pool.acquire(passer, deal=1)
            assert isinstance(replacement, DeadBot)
            assert "the referee is stopping" in str(replacement.error)
            pool.release(busy, passer)  # a game ending after the close gives nothing back to reuse
            assert pool.started == 1
