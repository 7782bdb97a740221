"""The contract every game must keep, as checks a game's author runs on their own game.

famiglia's referee, replays, duplicate games and search bots rely on properties
that no type checker sees: the same seed gives the same game, the deal does not
depend on the play and a stream's n-th draw means one thing, a copy is
independent, an illegal action changes nothing, a recording of the chance draws
replays the game, neither a view nor what a seat is sent shows anything hidden,
every game ends with a valid ranking. The checks of hidden information deal
chance again themselves (referee/games/redeal.py) rather than trust the game to say what is
hidden, and make the secret choices a game declares again (referee/games/rechoose.py: a
sealed bid played with another card). Each ``check_*`` function plays random legal games of the game it is
given and raises ``ContractBroken`` (an AssertionError, so test runners show it
as a failed assertion) saying what broke, with the seed to reproduce it. The
contract stands above the match in the referee package: one of its checks
writes a replay through the referee's own recorder and verifies it.
``check_game`` runs them all over table sizes and seeds; famiglia's own test
suite runs it over every registered game, and docs/writing-a-game.md shows a
host how to run it over theirs.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from protocol.messages import TimeControl
from referee.games.base import (
    Chance,
    ChanceDraw,
    GameRules,
    GameState,
    IllegalAction,
    Outcome,
    RecordingChance,
    ScriptedChance,
    SeededChance,
)
from referee.games.rechoose import ChoiceTwin, choice_twins, secret_steps
from referee.games.redeal import Position, Trace, draw_name, hidden_twins, play_trace, reach, seats_text
from referee.match import result_of
from referee.match.recorder import ReplayRecorder
from referee.replay import REPLAY_FORMAT, Header, SeatInfo, encode_raw, read_replay, verify_replay

__all__ = [
    "CHECKS",
    "ContractBroken",
    "Playout",
    "check_chance_means_the_same",
    "check_copy_is_independent",
    "check_duplicate_deals",
    "check_events_reveal_nothing_hidden",
    "check_game",
    "check_illegal_actions_change_nothing",
    "check_random_playouts_end",
    "check_replays_verify",
    "check_same_seed_same_game",
    "check_scripted_chance_reproduces",
    "check_transient_view_is_the_view",
    "check_views_leak_nothing",
    "game_config",
    "play_random",
]

# A random game that makes more decisions than this is taken not to end.
MAX_DECISIONS = 100_000
# How many chance draws the hidden-information checks deal again, per seat and game:
# each costs one replay of the game.
REDEALS_PER_SEAT = 4
# How many draws of each stream the chance-meaning check deals again, per game.
REDEALS_PER_STREAM = 4
# How many secret choices of a game (GameRules.secret_choices) the checks of hidden
# information make again: each costs one replay of the game up to that choice.
CHOICES_PER_GAME = 8

_encode = msgspec.json.Encoder().encode


class ContractBroken(AssertionError):
    """A game does not keep a property every famiglia game must keep."""


def game_config(rules: GameRules, config: Any = None) -> Any:
    """The configuration a check plays with: ``config`` when it is one of the game's
    (a configuration Struct), the game's parsing of a mapping of variant texts
    (``{"hand": "5"}``), or the defaults for None. UnknownVariant or TypeError,
    in one line, for anything else."""
    if config is None:
        return rules.config({})
    if isinstance(config, Mapping):
        return rules.config({str(key): str(value) for key, value in config.items()})
    rules.check_config(config)
    return config


def _require(condition: bool, rules: GameRules, what: str) -> None:
    if not condition:
        raise ContractBroken(f"{rules.name}: {what}")


@dataclass
class Playout:
    """One random game as played: the deal's events and each step's seat and action
    (None for a forfeit), the events each step caused (all encoded), the chance
    draws, and the outcome."""

    dealt: bytes = b"[]"
    steps: list[tuple[int, Any]] = field(default_factory=list)
    events: list[bytes] = field(default_factory=list)
    draws: list[ChanceDraw] = field(default_factory=list)
    outcome: Outcome | None = None


def play_random(
    rules: GameRules,
    n_players: int,
    config: Any,
    chance: Chance,
    rng: random.Random,
    *,
    forfeits: Mapping[int, int] | None = None,
    script: list[tuple[int, Any]] | None = None,
) -> tuple[GameState, Playout]:
    """Play a game to its end: random legal actions from ``rng``, or the steps of
    ``script`` in order; ``forfeits`` maps a step number to the seat that forfeits
    there. Checks on the way that ``decision()`` never names a forfeited seat and
    that the game ends within MAX_DECISIONS."""
    recording = RecordingChance(chance)
    state = rules.new_game(n_players, config, recording)
    played = Playout(dealt=_encode(state.deal_events))
    planned = iter(script) if script is not None else None
    while (decision := state.decision()) is not None:
        step = len(played.steps)
        _require(step < MAX_DECISIONS, rules, f"a random game did not end within {MAX_DECISIONS} decisions")
        _require(not state.forfeited[decision.seat], rules, f"decision() names seat {decision.seat}, which forfeited")
        if planned is not None:
            seat, action = next(planned)
        elif forfeits and step in forfeits and not state.forfeited[forfeits[step]]:
            seat, action = forfeits[step], None
        else:
            seat, action = decision.seat, state.random_action(rng)
        events = state.forfeit(seat) if action is None else state.apply(seat, action)
        played.steps.append((seat, action))
        played.events.append(_encode(events))
    _require(state.is_over(), rules, "decision() is None but the game is not over")
    _require(
        _encode(state.deal_events) == played.dealt,
        rules,
        "deal_events changed during play: fill it in __init__ only (every copy of the game shares it)",
    )
    played.draws = recording.draws
    played.outcome = state.outcome()
    return state, played


def check_same_seed_same_game(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """Two games with one seed and one sequence of choices are the same game, draw for draw."""
    config = game_config(rules, config)
    _, first = play_random(rules, n_players, config, SeededChance(seed), random.Random(seed))
    _, second = play_random(rules, n_players, config, SeededChance(seed), random.Random(seed))
    _require(first.draws == second.draws, rules, f"seed {seed}: the same play drew different chance")
    _require(first.dealt == second.dealt, rules, f"seed {seed}: the same deal gave different deal events")
    _require(first.events == second.events, rules, f"seed {seed}: the same play gave different events")
    _require(first.outcome == second.outcome, rules, f"seed {seed}: the same play gave different outcomes")


def check_duplicate_deals(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """One seed gives one deal and one sequence of draws per stream whatever the play,
    so a duplicate game (the same seed, the seats rotated) deals every seat's cards
    again: the game draws through its Chance, the draws before the first decision are
    the same, and each stream's draws agree up to the first draw whose kind or size
    the play changed (a steal from a hand of another size, say).

    What it cannot see is an engine that uses one draw for different things
    depending on the play; the game's own rule tests must pin that down."""
    config = game_config(rules, config)
    plays = []
    for players in (seed, seed + 1, seed + 2):
        chance = RecordingChance(SeededChance(seed))
        rules.new_game(n_players, config, chance)
        deal = list(chance.draws)
        _, played = play_random(rules, n_players, config, SeededChance(seed), random.Random(players))
        _require(played.draws[: len(deal)] == deal, rules, f"seed {seed}: the deal changed between two games")
        by_stream: dict[str, list[ChanceDraw]] = {}
        for draw in played.draws:
            by_stream.setdefault(draw.stream, []).append(draw)
        plays.append(by_stream)
    _require(any(plays[0].values()), rules, "the game draws no chance through its Chance; duplicate games mean nothing")
    for other in plays[1:]:
        for name in plays[0].keys() & other.keys():
            for a, b in zip(plays[0][name], other[name], strict=False):
                if (a.kind, a.n) != (b.kind, b.n):
                    break
                _require(
                    a.outcome == b.outcome,
                    rules,
                    f"seed {seed}: stream {name!r} drew differently under other play; draw it from the seed alone",
                )


def _fingerprint(state: GameState) -> bytes:
    """What any caller can see of a state: the decision, every seat's view, the end."""
    views = [state.view(seat) for seat in range(state.n_players)]
    return _encode([state.decision(), views, state.is_over()])


def _is_mutable(value: object) -> bool:
    """A value that playing could change in place (so a copy must not share it)."""
    if isinstance(value, list | dict | set | bytearray):
        return True
    if isinstance(value, msgspec.Struct):
        return not value.__struct_config__.frozen
    return False


def _attribute_names(state: object) -> list[str]:
    names = [name for cls in type(state).__mro__ for name in getattr(cls, "__slots__", ())]
    return sorted({*names, *getattr(state, "__dict__", {})})


def _shared_parts(original: GameState, clone: GameState) -> list[str]:
    """The fields (and the items of list and dict fields) that ``clone`` holds as the
    very same changeable object as ``original``: what ``_copy_into`` forgot to copy."""
    shared = []
    for name in _attribute_names(original):
        if name == "deal_events":
            continue  # shared by every copy on purpose: nothing changes it after the deal
        mine, theirs = getattr(original, name, None), getattr(clone, name, None)
        if mine is theirs:
            if _is_mutable(mine):
                shared.append(name)
            continue
        if isinstance(mine, list) and isinstance(theirs, list):
            pairs: list[tuple[str, object, object]] = [
                (f"{name}[{i}]", a, b) for i, (a, b) in enumerate(zip(mine, theirs))
            ]
        elif isinstance(mine, dict) and isinstance(theirs, dict):
            pairs = [(f"{name}[{key!r}]", mine[key], theirs[key]) for key in mine.keys() & theirs.keys()]
        else:
            continue
        shared += [where for where, a, b in pairs if a is b and _is_mutable(a)]
    return shared


def _copy_blame(rules: GameRules, original: GameState, clone: GameState, where: str, what: str) -> ContractBroken:
    """The error for a copy and its original that disturb each other, naming the shared parts."""
    shared = _shared_parts(original, clone)
    cause = (
        f"copy() shares {', '.join(shared)} with its original (the same object in both), so playing one "
        "changes the other: copy it in _copy_into"
        if shared
        else "copy() leaves the copy tied to its original: _copy_into must copy every changeable field"
    )
    return ContractBroken(f"{rules.name}: {where}: {what}: {cause}")


def check_illegal_actions_change_nothing(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """An action out of turn, after the end, by a forfeited seat, or not of the game's
    types (a dict) raises IllegalAction and changes nothing, visible or hidden; so
    does any other action the game refuses (tried: actions legal earlier in the game)."""
    config = game_config(rules, config)
    state = rules.new_game(n_players, config, SeededChance(seed))
    rng = random.Random(seed)
    seen: list[Any] = []
    step = 0
    while (decision := state.decision()) is not None:
        action = state.random_action(rng)
        if step % 7 == 0:
            where = f"seed {seed}, step {step}"
            original = _fingerprint(state)
            # First a copy that tries nothing: what the legal action does in a copy, and
            # whether playing a copy leaves the original alone (else a fault of copy(),
            # not of the refused actions, would be blamed below).
            fresh = state.copy()
            fresh_events = _encode(fresh.apply(decision.seat, action))
            if _fingerprint(state) != original:
                raise _copy_blame(rules, state, fresh, where, "playing a copy changed its original")
            trial = state.copy()
            before = _fingerprint(trial)
            # In a simultaneous step another seat still asked may answer now: its answer need not be refused.
            asked = {other.seat for other in state.decisions()}
            attempts: list[tuple[int, Any, bool]] = [
                (seat, action, seat not in asked) for seat in range(n_players) if seat != decision.seat
            ]
            attempts.append((decision.seat, msgspec.to_builtins(action), True))
            attempts.append((decision.seat, None, True))
            attempts += [(decision.seat, old, False) for old in rng.sample(seen, min(len(seen), 3))]
            for seat, attempt, must_refuse in attempts:
                try:
                    trial.apply(seat, attempt)
                except IllegalAction:
                    _require(
                        _fingerprint(trial) == before,
                        rules,
                        f"seed {seed}, step {step}: a refused {attempt!r} by seat {seat} changed the state",
                    )
                    continue
                _require(
                    not must_refuse, rules, f"seed {seed}, step {step}: seat {seat} played {attempt!r} out of turn"
                )
                trial = state.copy()  # it was legal after all: start again from the untouched state
            # Nothing hidden changed either: the same legal action gives the same events.
            trial_events = _encode(trial.apply(decision.seat, action))
            if _fingerprint(state) != original:
                raise _copy_blame(rules, state, trial, where, "playing a copy changed its original")
            if _encode(state.apply(decision.seat, action)) != fresh_events:
                raise _copy_blame(rules, state, fresh, where, "the same action gave other events in a copy")
            _require(
                trial_events == fresh_events,
                rules,
                f"{where}: refused actions changed what a legal action does next",
            )
        else:
            state.apply(decision.seat, action)
        if len(seen) < 50:
            seen.append(action)
        step += 1
    if seen:
        try:
            state.apply(0, seen[-1])
        except IllegalAction:
            pass
        else:
            raise ContractBroken(f"{rules.name}: seed {seed}: an action after the end was accepted")


def check_scripted_chance_reproduces(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """The chance draws recorded in a game, given back by a ScriptedChance with the same
    choices, replay it exactly and use every draw (what a replay holds instead of the seed)."""
    config = game_config(rules, config)
    _, recorded = play_random(
        rules, n_players, config, SeededChance(seed), random.Random(seed), forfeits={5: n_players - 1}
    )
    scripted = ScriptedChance(list(recorded.draws))
    _, again = play_random(rules, n_players, config, scripted, random.Random(), script=recorded.steps)
    _require(again.dealt == recorded.dealt, rules, f"seed {seed}: the scripted deal gave other deal events")
    _require(again.events == recorded.events, rules, f"seed {seed}: the scripted game gave other events")
    _require(again.outcome == recorded.outcome, rules, f"seed {seed}: the scripted game ended otherwise")
    _require(scripted.exhausted, rules, f"seed {seed}: the scripted game left recorded draws unused")


def check_copy_is_independent(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """``copy()`` plays on exactly like the original and never disturbs it."""
    config = game_config(rules, config)
    state = rules.new_game(n_players, config, SeededChance(seed))
    rng = random.Random(seed)
    for _ in range(20):
        if (decision := state.decision()) is None:
            break
        state.apply(decision.seat, state.random_action(rng))
    clone = state.copy()
    before = _fingerprint(state)
    _require(_fingerprint(clone) == before, rules, f"seed {seed}: a copy looks different from its original")
    a, b = random.Random(seed + 1), random.Random(seed + 1)
    clone_events = []
    while (decision := clone.decision()) is not None:
        clone_events.append(_encode(clone.apply(decision.seat, clone.random_action(a))))
    if _fingerprint(state) != before:
        raise _copy_blame(rules, state, clone, f"seed {seed}", "playing a copy changed the original")
    state_events = []
    while (decision := state.decision()) is not None:
        state_events.append(_encode(state.apply(decision.seat, state.random_action(b))))
    if clone_events != state_events:
        raise _copy_blame(rules, state, clone, f"seed {seed}", "a copy played on differently from its original")


def check_views_leak_nothing(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """A seat's view is the same in a twin game where everything hidden from that seat
    is dealt again, at every step of a random game (one seat a step, in turn): the
    view can only show what the seat may know. The view also survives its wire type.

    The twin is the game's own ``GameState.hidden_twin``: what a view must hide is
    the game's to say (a view that shows a card shows it whether or not the rules
    allow it, so no re-deal made by looking at views can tell). The check does not
    take the twin's word that it re-deals, though: where famiglia's own re-deals
    (redeal.py) prove that something is hidden from a seat (one chance draw dealt
    again leaves that seat's view as it was and changes another seat's), a twin of
    that seat that changes no other seat's view is refused as dealing nothing
    again, and so is a game that offers no twin (None). A game without hidden
    information may leave ``hidden_twin`` returning None or a plain copy; what a
    seat is sent and asked is checked against famiglia's own re-deals in
    ``check_events_reveal_nothing_hidden``.

    A secret made by a choice (a sealed bid, declared in ``GameRules.secret_choices``)
    is checked without the game's twin, so the default ``hidden_twin`` covers it
    too: famiglia plays the game again with the seat choosing another secret
    (rechoose.py), and where the events of that step tell some seat the
    difference and another seat nothing, that other seat's view after the step
    must be the same as well."""
    config = game_config(rules, config)
    _check_views_keep_what_events_keep(rules, n_players, config, seed)
    state = rules.new_game(n_players, config, SeededChance(seed))
    rng = random.Random(seed)
    decoder = msgspec.json.Decoder(rules.view_type)
    redealt = [False] * n_players  # whether a twin of the seat ever changed another seat's view
    offers_twin = False
    step = 0
    while True:
        # One seat a step, in turn: every seat is checked often, at a fraction of the cost.
        for seat in (step % n_players,):
            view = state.view(seat)
            _require(
                decoder.decode(_encode(view)) == view, rules, f"seed {seed}: a view does not survive its wire type"
            )
            twin = state.hidden_twin(seat, rng)
            if twin is None:
                continue
            offers_twin = True
            _require(
                _encode(twin.view(seat)) == _encode(view),
                rules,
                f"seed {seed}, step {step}: seat {seat}'s view changes with what is hidden from it "
                "(what GameState.hidden_twin deals again)",
            )
            redealt[seat] |= any(_encode(twin.view(s)) != _encode(state.view(s)) for s in range(n_players) if s != seat)
        if (decision := state.decision()) is None:
            break
        state.apply(decision.seat, state.random_action(rng))
        step += 1
    if all(redealt):
        return
    trace = play_trace(rules, n_players, config, SeededChance(seed), random.Random(seed))
    for seat in range(n_players):
        if redealt[seat]:
            continue
        for index, where, _, others in hidden_twins(rules, n_players, config, seed, trace, seat, REDEALS_PER_SEAT):
            twin_does = "deals nothing again (every other seat's view stays as it was)" if offers_twin else "gives None"
            raise ContractBroken(
                f"{rules.name}: seed {seed}: GameState.hidden_twin({seat}, rng) {twin_does}, "
                f"yet something is hidden from seat {seat}: dealing "
                f"{draw_name(trace, index)} again leaves seat {seat}'s view as it is and changes seat {others[0]}'s "
                f"(position {where}). A twin must deal again everything seat {seat} cannot see; one that deals "
                "nothing hides any leak of its view"
            )


def check_events_reveal_nothing_hidden(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """What a seat is sent (``GameState.events_for``) and asked (its decision, with the
    options) tells it nothing its view hides.

    famiglia builds the twins itself (redeal.py): the game replayed with one chance
    draw dealt again. While a twin leaves a seat's view as it is and changes
    another seat's, the draw is something that seat does not know and the other
    does; the events it is sent at that step (the deal's events too,
    ``GameState.deal_events``), and the decision it is asked, must then be the
    same in the twin. Events may still make public what is no longer
    anyone's secret (the dice shown at a challenge): such a draw changes no seat's
    view after the step, so it is not held against the events; nor is what the
    last step of a game shows (rules often show every hand at the end).

    Secrets made by choices (``GameRules.secret_choices``) are checked on twins
    where one seat chose another secret (rechoose.py): while such a twin leaves
    a seat's view as it is, what the seat is sent must be the same in the twin
    (a sealed bid's event may not tell the other bidders the bid)."""
    config = game_config(rules, config)
    trace = play_trace(rules, n_players, config, SeededChance(seed), random.Random(seed))
    _check_events_keep_hidden_choices(rules, n_players, config, seed, trace)
    for seat in range(n_players):
        for index, where, twin, others in hidden_twins(rules, n_players, config, seed, trace, seat, REDEALS_PER_SEAT):
            game = trace.positions[where]
            step = f"step {where - 1}" if where else "the deal"
            if game.over:
                continue
            if twin.sent[seat] != game.sent[seat]:
                sent = game.sent_events[seat]
                differing = [e for e, t in zip(sent, twin.sent_events[seat], strict=False) if _encode(e) != _encode(t)]
                shown = differing[0] if differing else sent
                raise ContractBroken(
                    f"{rules.name}: seed {seed}, {step}: seat {seat} is sent {shown!r}, which tells it what its "
                    f"view hides: dealing {draw_name(trace, index)} again leaves seat {seat}'s view as it is but "
                    f"changes seat {others[0]}'s, and changes this event. GameState.events_for({seat}, events) must "
                    f"leave out (or blank) what seat {seat} may not know"
                )
            if twin.asked[seat] != game.asked[seat]:
                raise ContractBroken(
                    f"{rules.name}: seed {seed}, position {where}: seat {seat}'s decision tells it what its view "
                    f"hides: dealing {draw_name(trace, index)} again leaves seat {seat}'s view as it is but "
                    f"changes seat {others[0]}'s, and changes the decision (its kind or options) seat {seat} is asked"
                )


def _check_secret_fields_exist(rules: GameRules, trace: Trace) -> None:
    """Every field ``GameRules.secret_choices`` names is a field of the actions of its decision kind:
    a misspelt one would leave nothing to choose again, and the check would pass in silence."""
    for step, secret in secret_steps(rules, trace):
        if secret is None:
            continue  # a simultaneous answer, secret as a whole: no field to name
        seat, action = trace.steps[step]
        fields = msgspec.to_builtins(action)
        fields = fields if isinstance(fields, dict) else {}
        missing = [name for name in secret if name not in fields]
        kind = msgspec.json.decode(trace.positions[step].asked[seat])["kind"]
        _require(
            not missing,
            rules,
            f"secret_choices names {', '.join(map(repr, missing))} for a {kind!r} decision, but its action "
            f"{msgspec.to_builtins(action)!r} has no such field (its fields: {', '.join(fields) or 'none'})",
        )


def _check_events_keep_hidden_choices(rules: GameRules, n_players: int, config: Any, seed: int, trace: Trace) -> None:
    """``check_events_reveal_nothing_hidden`` for secret choices (``GameRules.secret_choices``): on
    each choice twin, what every seat but the chooser is sent while its view is as in the game.

    A seat's decision is not held against a choice, unlike a draw: a rule may show a seat, as it
    decides, what others chose (a Sicilianos seat taking a business looks through the pile the
    others took theirs from). Once its view or its decision differs, the choice is revealed to it."""
    _check_secret_fields_exist(rules, trace)
    for twin in choice_twins(rules, n_players, config, seed, trace, CHOICES_PER_GAME):
        watching = [seat for seat in range(n_players) if seat != twin.seat]
        for where, mine in enumerate(twin.positions, start=twin.step + 1):
            game = trace.positions[where]
            if twin.whole and twin.seat in mine.held:
                _check_answer_held(rules, seed, where, twin, mine, game)
            for seat in watching:
                if game.over or mine.views[seat] != game.views[seat] or mine.sent[seat] == game.sent[seat]:
                    continue
                differing = [
                    e
                    for e, t in zip(game.sent_events[seat], mine.sent_events[seat], strict=False)
                    if _encode(e) != _encode(t)
                ]
                shown = differing[0] if differing else game.sent_events[seat]
                raise ContractBroken(
                    f"{rules.name}: seed {seed}, step {where - 1}: seat {seat} is sent {shown!r}, which tells it "
                    f"another seat's secret choice: {twin.changed()} leaves seat {seat}'s view as it is but changes "
                    f"this event. GameState.events_for({seat}, events) must leave out (or blank) another seat's "
                    "secret until the game reveals it"
                )
            watching = [
                seat
                for seat in watching
                if mine.views[seat] == game.views[seat] and mine.asked[seat] == game.asked[seat]
            ]
            if not watching:
                break


def _check_answer_held(
    rules: GameRules, seed: int, where: int, twin: ChoiceTwin, mine: Position, game: Position
) -> None:
    """While a simultaneous step waits for other answers, nothing another seat sees or is asked may
    depend on an answer already given: not its view, not its decision, not its events."""
    for seat in range(len(game.views)):
        if seat == twin.seat:
            continue
        for what, ours, theirs in (
            ("view", mine.views, game.views),
            ("decision", mine.asked, game.asked),
            ("events", mine.sent, game.sent),
        ):
            if ours[seat] != theirs[seat]:
                raise ContractBroken(
                    f"{rules.name}: seed {seed}, position {where}: seat {seat}'s {what} shows another seat's answer to "
                    f"a simultaneous step before the step is played: {twin.changed()} changes it. An answer is "
                    "its seat's secret until every seat asked has answered"
                )


def _check_views_keep_what_events_keep(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """``check_views_leak_nothing`` for secret choices (``GameRules.secret_choices``): right after a
    changed choice, a seat the events of that step tell nothing (while they tell some seat) sees the
    same view."""
    if not rules.secret_choices and not rules.state_type.simultaneous():
        return  # every choice is public: nothing to play again
    trace = play_trace(rules, n_players, config, SeededChance(seed), random.Random(seed))
    _check_secret_fields_exist(rules, trace)
    for twin in choice_twins(rules, n_players, config, seed, trace, CHOICES_PER_GAME):
        mine = next(twin.positions, None)
        game = trace.positions[twin.step + 1]
        if mine is None or game.over:
            continue
        told = [seat for seat in range(n_players) if mine.sent[seat] != game.sent[seat]]
        for seat in range(n_players):
            if seat == twin.seat or seat in told or not told or mine.views[seat] == game.views[seat]:
                continue
            raise ContractBroken(
                f"{rules.name}: seed {seed}, step {twin.step}: seat {seat}'s view shows another seat's secret "
                f"choice: {twin.changed()} changes what seat {told[0]} is sent but not what seat {seat} is sent, "
                f"and changes seat {seat}'s view. The view must hide another seat's secret until the game "
                "reveals it (GameState.hidden_twin, when the game has one, chooses it again)"
            )


def check_chance_means_the_same(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """The n-th draw of a stream means the same thing whatever was played before.

    What a draw means is told by what it changes: dealt again alone, right after
    the step that drew it, it changes the views of some seats (its "reach": the
    seat whose card it is, every seat for a public roll, none for a hidden pile).
    The check: under three different plays of one seed, a draw of a stream that
    all three make (the same kind and size, after the same kinds and sizes) and
    that deals something to one seat alone (it reaches that seat and no other)
    reaches the same seat in every play. A stream that deals one seat's dice, then
    another's, depending on how many dice each has left fails it: in a duplicate
    game the seats would not get the same dice.

    Not judged, as their reach follows the play by nature: a draw that reaches
    the seat whose action made it (a die rolled by the seat to move), and a draw
    that reaches several seats (a public roll, a card stolen from one seat by
    another)."""
    config = game_config(rules, config)
    traces = [play_trace(rules, n_players, config, SeededChance(seed), random.Random(seed + i)) for i in range(3)]
    by_stream: list[dict[str, list[int]]] = []
    for trace in traces:
        streams: dict[str, list[int]] = {}
        for index, draw in enumerate(trace.draws):
            streams.setdefault(draw.stream, []).append(index)
        by_stream.append(streams)
    for stream in sorted(set.intersection(*(set(s) for s in by_stream))):
        shared = 0  # how many draws of the stream all three plays make alike
        for number in range(min(len(s[stream]) for s in by_stream)):
            if (
                len(
                    {(t.draws[s[stream][number]].kind, t.draws[s[stream][number]].n) for t, s in zip(traces, by_stream)}
                )
                > 1
            ):
                break
            shared += 1
        chosen = random.Random(f"famiglia-contract:{seed}:{stream}").sample(
            range(shared), min(shared, REDEALS_PER_STREAM)
        )
        for number in sorted(chosen):
            reaches = []
            for trace, streams in zip(traces, by_stream):
                seats = reach(rules, n_players, config, seed, trace, streams[stream][number], stream, number)
                if seats is not None:
                    reaches.append(seats)
            private = sorted({seats for seats in reaches if len(seats) == 1})
            if len(private) > 1:
                seen = " in one game, ".join(seats_text(r) for r in private)
                raise ContractBroken(
                    f"{rules.name}: seed {seed}: draw {number} of stream {stream!r} means different things under "
                    f"different play: dealt again alone, it changes what {seen} in another see. Make the n-th draw "
                    "of a stream mean one thing whatever was played before (a stream per seat, or the same "
                    "number of draws whatever happened), or duplicate games do not deal the seats the same game"
                )


def check_transient_view_is_the_view(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """``transient_view(seat)``, what the referee sends, encodes exactly like ``view(seat)``
    for every seat at every step of a random game with a forfeit on the way, and
    building it changes nothing. So it does in a copy taken early and played on
    differently, and building the copy's transient views leaves the game's as
    they were: a game that refills one view object per seat must not share it
    with its copies."""
    config = game_config(rules, config)
    state = rules.new_game(n_players, config, SeededChance(seed))
    games = [(state, random.Random(seed), "the game")]
    step = 0
    while games:
        for current, _, name in games:
            before = _fingerprint(current)
            for seat in range(n_players):
                _require(
                    _encode(current.transient_view(seat)) == _encode(current.view(seat)),
                    rules,
                    f"seed {seed}, step {step} of {name}: seat {seat}'s transient view differs from its view",
                )
            _require(
                _fingerprint(current) == before,
                rules,
                f"seed {seed}, step {step} of {name}: building views changed the state",
            )
        if len(games) == 2:
            # A view held from the game while the copy's are built stays the game's.
            held = [state.transient_view(seat) for seat in range(n_players)]
            for seat in range(n_players):
                games[1][0].transient_view(seat)
            _require(
                _encode(held) == _encode([state.view(seat) for seat in range(n_players)]),
                rules,
                f"seed {seed}, step {step}: building a copy's transient views changed the game's",
            )
        if step == 2:
            games.append((state.copy(), random.Random(seed + 1), "a copy taken at step 2"))
        if step == 4 and n_players > 2:
            state.forfeit(n_players - 1)
        games = [(current, rng, name) for current, rng, name in games if current.decision() is not None]
        for current, rng, _ in games:
            decision = current.decision()
            assert decision is not None
            current.apply(decision.seat, current.random_action(rng))
        step += 1


def check_random_playouts_end(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """Random games end, with or without forfeits, in a valid outcome: one entry per
    seat, ranks 1-based and shared only on ties, forfeited seats last (the most
    recent first), winners ranked first; the last event is the end event; after the
    end there is no decision, no random or pass action."""
    config = game_config(rules, config)
    # No forfeit; one early; every seat but the last (the game ends by forfeits).
    plans: list[dict[int, int]] = [{}, {3: 0}, {2 + 2 * seat: seat for seat in range(n_players - 1)}]
    for forfeits in plans:
        state, played = play_random(
            rules, n_players, config, SeededChance(seed), random.Random(seed), forfeits=forfeits
        )
        outcome = played.outcome
        assert outcome is not None
        where = f"seed {seed}, forfeits {forfeits}"
        n = n_players
        _require(
            len(outcome.ranks) == n and len(outcome.scores) == n and all(len(v) == n for v in outcome.stats.values()),
            rules,
            f"{where}: ranks, scores and every stat need one entry per seat",
        )
        for rank in outcome.ranks:
            better = sum(1 for other in outcome.ranks if other < rank)
            _require(rank == better + 1, rules, f"{where}: ranks {outcome.ranks} are not 1-based competition ranks")
        _require(
            outcome.forfeited == state.forfeit_order, rules, f"{where}: outcome.forfeited is not the forfeit order"
        )
        for i, seat in enumerate(reversed(outcome.forfeited)):
            _require(
                outcome.ranks[seat] == n - len(outcome.forfeited) + 1 + i,
                rules,
                f"{where}: forfeited seats must rank last",
            )
        _require(all(outcome.ranks[w] == 1 for w in outcome.winners), rules, f"{where}: a winner not ranked first")
        _require(bool(outcome.ended_by), rules, f"{where}: ended_by is empty")
        if len(state.forfeit_order) == n - 1:
            _require(outcome.ended_by == "forfeits", rules, f"{where}: one seat left must end the game by forfeits")
        decoder = msgspec.json.Decoder(list.__class_getitem__(rules.event_type))
        last = decoder.decode(played.events[-1])
        _require(bool(last), rules, f"{where}: the last step gave no end event")
        end_events = [e for step in played.events for e in decoder.decode(step)]
        _require(
            type(end_events[-1]) is type(last[-1]) and sum(type(e) is type(last[-1]) for e in end_events) == 1,
            rules,
            f"{where}: the game's end event must come once, last",
        )
        _require(state.decision() is None, rules, f"{where}: a decision after the end")
        for name in ("random_action", "pass_action"):
            try:
                state.random_action(random.Random()) if name == "random_action" else state.pass_action()
            except ValueError:
                continue
            raise ContractBroken(f"{rules.name}: {where}: {name} answered after the end")


def check_replays_verify(rules: GameRules, n_players: int, config: Any = None, seed: int = 1) -> None:
    """A replay of a random game, written through the referee's own replay recorder, verifies:
    ``famiglia replay verify`` re-runs it to the same events and the same result."""
    config = game_config(rules, config)
    recording = RecordingChance(SeededChance(seed))
    state = rules.new_game(n_players, config, recording)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "contract.jsonl"
        record = ReplayRecorder(path, recording.draws)
        record.begin(
            Header(
                format=REPLAY_FORMAT,
                match=f"{rules.name}-contract",
                game=rules.name,
                variants=rules.variants(config),
                config=encode_raw(config),
                seats=[SeatInfo(name=f"seat{s}", command=["bot"]) for s in range(n_players)],
                seed=seed,
                time=TimeControl(),
                illegal_action="forfeit",
                started="2026-01-01T00:00:00+00:00",
            )
        )
        rng = random.Random(seed)
        request = 0
        while (decision := state.decision()) is not None:
            request += 1
            if request == 4:
                record.forfeit(n_players - 1, request, "timeout", "contract", state.forfeit(n_players - 1))
                continue
            action = state.random_action(rng)
            record.action(decision.seat, request, decision.kind, action, 0.001, state.apply(decision.seat, action))
        result = result_of(state.outcome())
        record.result(result, 0.0)
        record.close()
        # Through the bytes, as a replay file holds them.
        verified = verify_replay(read_replay(path))
    _require(verified == result, rules, "the verified replay's result is not the game's")


CHECKS = (
    check_same_seed_same_game,
    check_duplicate_deals,
    check_chance_means_the_same,
    check_copy_is_independent,
    check_illegal_actions_change_nothing,
    check_scripted_chance_reproduces,
    check_views_leak_nothing,
    check_events_reveal_nothing_hidden,
    check_transient_view_is_the_view,
    check_random_playouts_end,
    check_replays_verify,
)


def check_game(
    rules: GameRules,
    *,
    seeds: Iterable[int] = (1, 2),
    table_sizes: Iterable[int] | None = None,
    variants: Mapping[str, str] | None = None,
) -> None:
    """Every check of this module, at every table size (default: all the game seats)
    and every seed, with the configuration ``variants`` gives (default: the defaults)."""
    config = rules.config(dict(variants or {}))
    sizes = range(rules.min_players, rules.max_players + 1) if table_sizes is None else table_sizes
    for n_players in sizes:
        for seed in seeds:
            for check in CHECKS:
                check(rules, n_players, config, seed)
