"""The contract every game must keep, as checks a game's author runs on their own game.

famiglia's referee, replays, duplicate games and search bots rely on properties
that no type checker sees: the same seed gives the same game, the deal does not
depend on the play, an illegal action changes nothing, a recording of the chance
draws replays the game, a view shows nothing hidden, every game ends with a valid
ranking. Each ``check_*`` function plays random legal games of the game it is
given and raises ``ContractBroken`` (an AssertionError, so test runners show it
as a failed assertion) saying what broke, with the seed to reproduce it.
``check_game`` runs them all over table sizes and seeds; famiglia's own test
suite runs it over every registered game, and docs/writing-a-game.md shows a
host how to run it over theirs.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

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

__all__ = [
    "CHECKS",
    "ContractBroken",
    "Playout",
    "check_copy_is_independent",
    "check_duplicate_deals",
    "check_game",
    "check_illegal_actions_change_nothing",
    "check_random_playouts_end",
    "check_replays_verify",
    "check_same_seed_same_game",
    "check_scripted_chance_reproduces",
    "check_transient_view_is_the_view",
    "check_views_leak_nothing",
    "play_random",
]

# A random game that makes more decisions than this is taken not to end.
MAX_DECISIONS = 100_000

_encode = msgspec.json.Encoder().encode


class ContractBroken(AssertionError):
    """A game does not keep a property every famiglia game must keep."""


def _require(condition: bool, rules: GameRules, what: str) -> None:
    if not condition:
        raise ContractBroken(f"{rules.name}: {what}")


@dataclass
class Playout:
    """One random game as played: each step's seat and action (None for a forfeit),
    the events each step caused (encoded), the chance draws, and the outcome."""

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
    played = Playout()
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
    played.draws = recording.draws
    played.outcome = state.outcome()
    return state, played


def check_same_seed_same_game(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """Two games with one seed and one sequence of choices are the same game, draw for draw."""
    _, first = play_random(rules, n_players, config, SeededChance(seed), random.Random(seed))
    _, second = play_random(rules, n_players, config, SeededChance(seed), random.Random(seed))
    _require(first.draws == second.draws, rules, f"seed {seed}: the same play drew different chance")
    _require(first.events == second.events, rules, f"seed {seed}: the same play gave different events")
    _require(first.outcome == second.outcome, rules, f"seed {seed}: the same play gave different outcomes")


def check_duplicate_deals(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """One seed gives one deal and one sequence of draws per stream whatever the play,
    so a duplicate game (the same seed, the seats rotated) deals every seat's cards
    again: the game draws through its Chance, the draws before the first decision are
    the same, and each stream's draws agree up to the first draw whose kind or size
    the play changed (a steal from a hand of another size, say).

    What it cannot see is an engine that uses one draw for different things
    depending on the play; the game's own rule tests must pin that down."""
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


def check_illegal_actions_change_nothing(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """An action out of turn, after the end, by a forfeited seat, or not of the game's
    types (a dict) raises IllegalAction and changes nothing, visible or hidden; so
    does any other action the game refuses (tried: actions legal earlier in the game)."""
    state = rules.new_game(n_players, config, SeededChance(seed))
    rng = random.Random(seed)
    seen: list[Any] = []
    step = 0
    while (decision := state.decision()) is not None:
        action = state.random_action(rng)
        if step % 7 == 0:
            trial = state.copy()
            before = _fingerprint(trial)
            attempts: list[tuple[int, Any, bool]] = [
                (seat, action, True) for seat in range(n_players) if seat != decision.seat
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
            _require(
                _encode(trial.apply(decision.seat, action)) == _encode(state.apply(decision.seat, action)),
                rules,
                f"seed {seed}, step {step}: refused actions changed what a legal action does next",
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


def check_scripted_chance_reproduces(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """The chance draws recorded in a game, given back by a ScriptedChance with the same
    choices, replay it exactly and use every draw (what a replay holds instead of the seed)."""
    _, recorded = play_random(
        rules, n_players, config, SeededChance(seed), random.Random(seed), forfeits={5: n_players - 1}
    )
    scripted = ScriptedChance(list(recorded.draws))
    _, again = play_random(rules, n_players, config, scripted, random.Random(), script=recorded.steps)
    _require(again.events == recorded.events, rules, f"seed {seed}: the scripted game gave other events")
    _require(again.outcome == recorded.outcome, rules, f"seed {seed}: the scripted game ended otherwise")
    _require(scripted.exhausted, rules, f"seed {seed}: the scripted game left recorded draws unused")


def check_copy_is_independent(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """``copy()`` plays on exactly like the original and never disturbs it."""
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
    _require(_fingerprint(state) == before, rules, f"seed {seed}: playing a copy changed the original")
    state_events = []
    while (decision := state.decision()) is not None:
        state_events.append(_encode(state.apply(decision.seat, state.random_action(b))))
    _require(clone_events == state_events, rules, f"seed {seed}: a copy played on differently from its original")


def check_views_leak_nothing(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """A seat's view is the same in a twin game where everything hidden from that seat
    is dealt again (``GameState.hidden_twin``), at every step of a random game (one
    seat a step, in turn): the view can only show what the seat may know. The view
    also survives its wire type."""
    state = rules.new_game(n_players, config, SeededChance(seed))
    rng = random.Random(seed)
    decoder = msgspec.json.Decoder(rules.view_type)
    differs = 0
    step = 0
    while True:
        # One seat a step, in turn: every seat is checked often, at a fraction of the cost.
        for seat in (step % n_players,):
            view = state.view(seat)
            _require(
                decoder.decode(_encode(view)) == view, rules, f"seed {seed}: a view does not survive its wire type"
            )
            twin = state.hidden_twin(seat, rng)
            _require(twin is not None, rules, "GameState.hidden_twin gives None; write it for this game")
            assert twin is not None
            _require(
                _encode(twin.view(seat)) == _encode(view),
                rules,
                f"seed {seed}, step {step}: seat {seat}'s view changes with what is hidden from it",
            )
            differs += any(_encode(twin.view(s)) != _encode(state.view(s)) for s in range(n_players) if s != seat)
        if (decision := state.decision()) is None:
            break
        state.apply(decision.seat, state.random_action(rng))
        step += 1
    # hidden_twin may rightly change nothing (a game without hidden information);
    # ``differs`` is there for a game's own test to tell that its twins do redeal.
    del differs


def check_transient_view_is_the_view(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """``transient_view(seat)``, what the referee sends, encodes exactly like ``view(seat)``
    for every seat at every step of a random game with a forfeit on the way, and
    building it changes nothing. So it does in a copy taken early and played on
    differently, and building the copy's transient views leaves the game's as
    they were: a game that refills one view object per seat must not share it
    with its copies."""
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


def check_random_playouts_end(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """Random games end, with or without forfeits, in a valid outcome: one entry per
    seat, ranks 1-based and shared only on ties, forfeited seats last (the most
    recent first), winners ranked first; the last event is the end event; after the
    end there is no decision, no random or pass action."""
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


def check_replays_verify(rules: GameRules, n_players: int, config: Any, seed: int) -> None:
    """A replay of a random game, written as the referee writes it (JSON lines of the
    wire types), verifies: ``famiglia replay verify`` re-runs it to the same events."""
    # Imported here: the replay module sits above the games in the referee package.
    from protocol.messages import TimeControl
    from referee.match import result_of
    from referee.replay import (
        REPLAY_FORMAT,
        ActionRecord,
        ChanceRecord,
        ForfeitRecord,
        Header,
        ReplayRecord,
        ResultRecord,
        SeatInfo,
        encode_raw,
        verify_replay,
    )

    recording = RecordingChance(SeededChance(seed))
    state = rules.new_game(n_players, config, recording)
    records: list[ReplayRecord] = [
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
    ]
    taken = 0

    def flush() -> None:  # the draws made since the last record, as the referee writes them
        nonlocal taken
        if len(recording.draws) > taken:
            records.append(ChanceRecord(draws=recording.draws[taken:]))
            taken = len(recording.draws)

    flush()
    rng = random.Random(seed)
    request = 0
    while (decision := state.decision()) is not None:
        request += 1
        if request == 4:
            events = state.forfeit(n_players - 1)
            flush()
            records.append(
                ForfeitRecord(
                    seat=n_players - 1, request=request, kind="timeout", reason="contract", events=encode_raw(events)
                )
            )
            continue
        action = state.random_action(rng)
        events = state.apply(decision.seat, action)
        flush()
        records.append(
            ActionRecord(
                seat=decision.seat,
                request=request,
                decision=decision.kind,
                action=encode_raw(action),
                ms=1.0,
                events=encode_raw(events),
            )
        )
    outcome = state.outcome()
    records.append(ResultRecord(result=result_of(outcome)))
    # Through the bytes, as a replay file holds them.
    lines = [msgspec.json.decode(msgspec.json.encode(r), type=ReplayRecord) for r in records]
    verify_replay(lines)


CHECKS = (
    check_same_seed_same_game,
    check_duplicate_deals,
    check_illegal_actions_change_nothing,
    check_scripted_chance_reproduces,
    check_copy_is_independent,
    check_views_leak_nothing,
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
