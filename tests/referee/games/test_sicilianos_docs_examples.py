"""The examples docs/sicilianos.md gives in numbers: how money moves in a gang war (G8, G9, E3), ties (G7).

Random games are played to the end; for every war the seats' clean and dirty
money before the war's first card and after its result are compared with the
table in the docs: a lone winner with stake s gains 2s of clean money (s of it
from the bank), allies' stakes both go to the launderer with nothing from the
bank, a loser's stake goes to the bank, and losing a stake still raises the score.
"""

from __future__ import annotations

import random

from referee.games import get_rules
from referee.games.base import SeededChance
from referee.games.sicilianos import pick_option
from referee.games.sicilianos.messages import Joined, Laundered, StakesLost, WarResolved, WarStarted
from referee.games.sicilianos.state import SicilianosState


def _money(state: SicilianosState) -> tuple[list[int], list[int]]:
    return list(state.clean), state.dirty()


def test_g8_g9_money_moves_as_the_docs_say_and_a_lost_stake_raises_the_score() -> None:
    rules = get_rules("sicilianos")
    lone = allied = lost = 0
    for seed in range(40):
        state = rules.new_game(3 + seed % 4, rules.config({}), SeededChance(seed))
        assert isinstance(state, SicilianosState)
        rng = random.Random(seed)
        before: tuple[list[int], list[int]] | None = None
        stakes: dict[int, int] = {}
        winners: list[int] = []
        while not state.is_over():
            if state.war is None:
                before = _money(state)
            decision = state.decision()
            assert decision is not None
            events = state.apply(decision.seat, pick_option(decision, rng))
            for event in events:
                if isinstance(event, WarStarted):
                    stakes = {event.seat: event.note}
                elif isinstance(event, Joined):
                    stakes[event.seat] = event.note
                elif isinstance(event, WarResolved):
                    winners = event.winners  # allies choose their spoils in a later step
            if not any(isinstance(e, StakesLost | Laundered) for e in events):
                continue
            assert before is not None
            clean_before, dirty_before = before
            clean_after, dirty_after = _money(state)
            for seat, stake in stakes.items():
                # The stake left the hand: dirty money is down by exactly the stake.
                assert dirty_before[seat] - dirty_after[seat] == stake
            laundered = [e for e in events if isinstance(e, Laundered)]
            if len(winners) == 1:
                (winner,) = winners
                assert clean_after[winner] - clean_before[winner] == 2 * stakes[winner]
                assert laundered == [Laundered(winner, 2 * stakes[winner], stakes[winner])]
                lone += 1
            elif len(winners) == 2:
                (entry,) = laundered
                assert entry.from_bank == 0 and entry.amount == stakes[winners[0]] + stakes[winners[1]]
                assert clean_after[entry.seat] - clean_before[entry.seat] == entry.amount
                allied += 1
            for seat, stake in stakes.items():
                if seat in winners:
                    continue
                assert clean_after[seat] == clean_before[seat]
                # score = clean - dirty, so the lost stake raised it by the stake.
                gain = (clean_after[seat] - dirty_after[seat]) - (clean_before[seat] - dirty_before[seat])
                assert gain == stake
                lost += 1
    assert lone > 20 and lost > 20 and allied > 0, (lone, allied, lost)


def test_g7_every_tie_cancels_so_the_docs_example_10_10_6_6_3_is_won_by_the_3() -> None:
    from referee.games.sicilianos.war import winning_seat

    assert winning_seat({0: 10, 1: 10, 2: 6, 3: 6, 4: 3}) == 4


def test_h2_a_game_with_one_seat_left_ends_at_once_with_that_seat_the_winner() -> None:
    rules = get_rules("sicilianos")
    state = rules.new_game(4, rules.config({}), SeededChance(5))
    state.forfeit(1)
    state.forfeit(3)
    assert not state.is_over()
    state.forfeit(0)
    outcome = state.outcome()
    assert outcome.ended_by == "forfeits" and outcome.winners == [2]
    assert outcome.ranks == [2, 4, 1, 3]  # forfeited 1, 3, then 0: the later forfeit ranks higher
