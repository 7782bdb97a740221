"""Vendetta's fast encoding gives exactly what the straightforward one gives (tests/training/vendetta_reference.py).

The environments read a view once per decision and build each step's vector
and mask from what the steps share (VendettaSteps), and the AEC environment
reads the view the state refills in place. None of it may change what an
agent observes: every array is compared byte for byte with the reference,
built from scratch from a copy of the view, over many random games.
"""

from __future__ import annotations

import random

import msgspec
import numpy as np
import pytest

from referee.games import get_rules
from referee.games.base import SeededChance
from referee.games.vendetta.encoding import ACTION_SIZE, VendettaEncoding
from tests.training.vendetta_reference import ReferenceEncoding
from training.aec import IllegalStep, env

_encode = msgspec.json.encode
VARIANTS = [{}, {"setup": "dealt-only", "control": "majority"}]


@pytest.mark.parametrize("n_players", [3, 4, 5])
@pytest.mark.parametrize("variants", VARIANTS)
def test_the_environments_vectors_masks_and_placements_equal_the_straightforward_ones(
    n_players: int, variants: dict[str, str]
) -> None:
    reference = ReferenceEncoding(n_players)
    game = env("vendetta", n_players, variants)
    rng = random.Random(n_players)
    steps = 0
    for seed in range(8):
        game.reset(seed=seed)
        for agent in game.agent_iter():
            seen, _, done, cut, _ = game.last()
            if done or cut:
                game.step(None)
                continue
            state, asked = game.state, game.asked
            assert state is not None and asked is not None
            seat, decision, chosen = asked.decision.seat, asked.decision, list(asked.chosen)
            view = state.view(seat)  # a copy, as the reference reads it
            expected = reference.observe(view, decision, chosen)
            assert seen["observation"].tobytes() == expected.tobytes(), f"seed {seed}, steps {chosen}"
            assert seen["action_mask"].tobytes() == reference.mask(decision, chosen).tobytes()
            if steps % 5 == 0:  # the seats not asked see the view alone
                for other in game.agents:
                    if other != agent:
                        other_seat = game.possible_agents.index(other)
                        plain = reference.observe(state.view(other_seat), None)
                        assert game.observe(other)["observation"].tobytes() == plain.tobytes()
            step = rng.choice(np.flatnonzero(seen["action_mask"]).tolist())
            made = reference.action(decision, [*chosen, step])
            twin = state.copy() if made is not None else None  # the same future draws as the game
            game.step(step)
            if twin is not None:  # the placement the environment played is the reference's
                twin.apply(seat, made)
                assert [_encode(twin.view(s)) for s in range(n_players)] == [
                    _encode(state.view(s)) for s in range(n_players)
                ]
            else:
                assert game.asked is asked, "the decision went on to the next step"
            steps += 1
    assert steps > 500  # some hundred decisions at the least


@pytest.mark.parametrize("variants", VARIANTS)
def test_the_encodings_own_calls_equal_the_straightforward_ones_with_forfeits_and_any_numbers(
    variants: dict[str, str],
) -> None:
    """``observe``/``mask``/``action`` called directly (a policy bot, a user), on views with forfeited
    seats, and with steps of any number, masked or not: the same arrays, or the same error."""
    rules = get_rules("vendetta")
    config = rules.config(variants)
    rng = random.Random(5)
    compared = 0
    for n in (3, 4, 5):
        fast, reference = VendettaEncoding(n), ReferenceEncoding(n)
        for seed in range(4):
            state = rules.new_game(n, config, SeededChance(seed))
            turn = 0
            while (decision := state.decision()) is not None:
                turn += 1
                if turn == 40 and n > 2:  # a forfeit, so the views hold forfeited seats
                    state.forfeit(rng.randrange(n))
                    continue
                view = state.view(decision.seat)
                as_json = msgspec.to_builtins(view)  # the view as a request carries it
                for _ in range(3):
                    chosen = [rng.randrange(ACTION_SIZE) for _ in range(rng.randrange(6))]
                    for call in ("observe", "mask", "action"):
                        args = (view, decision, chosen) if call == "observe" else (decision, chosen)
                        got, want = _outcome(fast, call, args), _outcome(reference, call, args)
                        assert got == want, f"{call}{chosen}: {got} != {want}"
                    assert _outcome(fast, "observe", (as_json, decision, chosen)) == _outcome(
                        reference, "observe", (view, decision, chosen)
                    )
                    compared += 1
                assert fast.observe(view, None).tobytes() == reference.observe(view, None).tobytes()
                state.apply(decision.seat, state.random_action(rng))
    assert compared > 1_000


def _outcome(encoding: object, call: str, args: tuple[object, ...]) -> object:
    """What a call gives, as bytes (an array) or JSON (an action), or the kind of error it raises."""
    try:
        result = getattr(encoding, call)(*args)
    except (IndexError, ValueError) as exc:
        return type(exc).__name__
    if isinstance(result, np.ndarray):
        return (result.dtype.str, result.tobytes())
    return msgspec.json.encode(result)


def test_an_agent_that_changes_the_arrays_it_observed_changes_neither_the_game_nor_its_next_observation() -> None:
    game = env("vendetta", 4)
    game.reset(seed=3)
    seen = game.last()[0]
    kept = seen["observation"].copy()
    refused = int(np.flatnonzero(seen["action_mask"] == 0)[0])
    seen["observation"][:] = 7.0  # a careless agent writes into what it was given
    seen["action_mask"][:] = 1
    again = game.last()[0]
    assert again["observation"].tobytes() == kept.tobytes()
    assert again["action_mask"][refused] == 0
    with pytest.raises(IllegalStep):
        game.step(refused)  # the mask it overwrote allowed it; the game's own did not
