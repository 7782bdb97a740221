"""Warm processes: reused across games, never for a deal they have already played."""

from __future__ import annotations

from referee.bots import load_bot
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
