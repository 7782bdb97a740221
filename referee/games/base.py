"""The engine skeleton every game builds on.

A rules engine is pure: no I/O, no clocks, no global random state. The referee,
the sample bots, the tests and the benchmarks all drive a game through the same
small surface:

* ``GameRules`` describes a game (name, table sizes, variants declared once as
  ``Variant`` metadata, wire types) and builds a fresh ``GameState`` from a
  configuration and a ``Chance`` source.
* ``GameState.decision()`` says who must decide now and what kind of decision it
  is, with the legal options when they are few, or the constraints when they are
  many (a Vendetta placement).
* ``GameState.view(seat)`` is everything that seat may know, and nothing more.
* ``GameState.apply(seat, action)`` changes the state and returns the events it
  caused, or raises ``IllegalAction`` and changes nothing.
* A step may ask several seats at once (simultaneous moves: sealed bids). The
  game then sets ``to_move`` to ``TOGETHER`` and says who is asked
  (``_asked``); ``decisions()`` lists every seat still to answer, and
  ``apply_together`` plays all their answers as one move (``_apply_together``).
  A caller that plays one seat at a time (a random playout, a replay, a
  learner's environment) uses ``decision()`` and ``apply`` as ever: the base
  holds each answer, out of every view, until the step's last one comes.

The two base classes own what every game does alike, so a game writes only its
rules: ``GameState.apply`` refuses an action out of turn, after the end or of a
foreign type (a dict included: the referee decodes every action into the game's
typed union first), then calls the game's ``_apply_action``; ``forfeit`` records
the forfeit (one ``Forfeited`` event), ends the game when one seat is left, and
lets the game play the forfeited seat's pending turn; ``_finish`` ends the game
once, with the game's ranking (``rank_seats``: forfeited seats last) and its end
event; ``copy`` clones the common fields and asks the game for the rest.

Chance sources live in chance.py and variant declarations in variants.py; both
are re-exported here, the one module a game imports from.
"""

from __future__ import annotations

import copy as _copy
import random
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

import msgspec

# Re-exported: every game and caller imports the engine's vocabulary from here.
from protocol.messages import Outcome
from referee.games.chance import (
    Chance,
    ChanceDraw,
    ChanceMismatch,
    RecordingChance,
    ScriptedChance,
    SeededChance,
    checked_shuffle,
)
from referee.games.variants import ChoiceVariant, IntVariant, TextVariant, UnknownVariant, Variant

# The presentation hooks of GameRules return these; their modules are imported
# inside the hooks only, so a match (and a bot importing an engine) never loads rich.
if TYPE_CHECKING:
    from referee.games.checkbot import Target
    from referee.games.encoding import Encoding
    from referee.games.screen import GameScreen

__all__ = [
    "TOGETHER",
    "Chance",
    "ChanceDraw",
    "ChanceMismatch",
    "ChoiceVariant",
    "Decision",
    "Forfeited",
    "GameRules",
    "GameState",
    "IllegalAction",
    "IntVariant",
    "Outcome",
    "RecordingChance",
    "ScriptedChance",
    "SeededChance",
    "TextVariant",
    "UnknownVariant",
    "Variant",
    "checked_shuffle",
    "rank_seats",
]


class IllegalAction(ValueError):
    """An action breaks a rule of the game; the state is unchanged."""

    def __init__(self, rule_id: str, message: str, seat: int | None = None) -> None:
        self.rule_id = rule_id
        self.detail = message
        # Whose action it was, where one call plays several seats' (``GameState.apply_together``).
        self.seat = seat
        super().__init__(f"{rule_id}: {message}")


TOGETHER = -2
"""``GameState.to_move`` during a simultaneous step: several seats are asked at once (``GameState.decisions``)."""


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """Who must decide now, and what they may choose from.

    ``options`` lists every legal action when the list is small; the bot answers
    with one of them, unchanged. ``constraints`` describes a large decision (a
    Vendetta placement) by its limits instead. At most one of the two is set.
    """

    seat: int
    kind: str
    options: list[Any] | None = None
    constraints: Any = None


# ---------------------------------------------------------------------------
# What every game shares


class Forfeited(msgspec.Struct, frozen=True, gc=False, tag="forfeited", tag_field="type"):
    """A seat left play (H2 of every game); the engine plays its turns from now on."""

    seat: int


def rank_seats(keys: Sequence[tuple[int, ...]], forfeit_order: Sequence[int]) -> list[int]:
    """1-based ranks: the seats in play by ``keys[seat]``, larger first, equal keys
    sharing a rank (1, 1, 3); then the forfeited seats, the most recent forfeit
    first (each game's H2). ``keys`` has an entry for every seat; a forfeited
    seat's is ignored."""
    gone = set(forfeit_order)
    in_play = [seat for seat in range(len(keys)) if seat not in gone]
    ranks = [0] * len(keys)
    for seat in in_play:
        key = keys[seat]
        ranks[seat] = 1 + sum(1 for other in in_play if keys[other] > key)
    for i, seat in enumerate(reversed(forfeit_order)):
        ranks[seat] = len(in_play) + 1 + i
    return ranks


# ---------------------------------------------------------------------------
# Games


class GameState:
    """One game in progress. Mutable, but only ``apply`` and ``forfeit`` change it.

    The base owns the fields every game has (``n``, ``config``, the chance
    source, ``forfeited``, ``forfeit_order``, ``ended_by``, the outcome and the
    deal's events) and the checks around them. A game subclasses it, sets ``game`` and
    ``action_classes`` and fills in the hooks (the methods named with a leading
    underscore below that raise NotImplementedError).
    """

    __slots__ = (
        "_chance",
        "_outcome",
        "config",
        "deal_events",
        "ended_by",
        "forfeit_order",
        "forfeited",
        "held",
        "n",
        "to_move",
    )

    # The game's name (for messages) and the exact classes ``apply`` accepts.
    game: ClassVar[str]
    action_classes: ClassVar[frozenset[type]]
    # The rule an action after the end breaks, by ``ended_by``; "H2" for any other.
    end_rules: ClassVar[Mapping[str, str]] = {}

    n: int
    config: Any
    _chance: Chance
    forfeited: list[bool]
    forfeit_order: list[int]
    ended_by: str | None
    _outcome: Outcome | None
    # The seat that must decide now, -1 once the game is over, TOGETHER while a step
    # asks several seats at once: the game keeps it current (a field, not a hook,
    # because ``apply`` reads it on every action).
    to_move: int
    # The answers given so far to a simultaneous step by a caller that plays one seat
    # at a time, by seat: no view sees them, and they are played together with the last.
    held: dict[int, Any]
    # What the deal did that seats are told of (a prize shown, a first card turned),
    # in order: the game fills it in __init__ and never changes it after. The
    # referee sends it, through ``events_for``, before every seat's first request.
    deal_events: list[msgspec.Struct]

    def __init__(self, n_players: int, config: Any, chance: Chance) -> None:
        self.n = n_players
        self.deal_events = []
        self.config = config
        self._chance = chance
        self.forfeited = [False] * n_players
        self.forfeit_order = []
        self.ended_by = None
        self._outcome = None
        self.to_move = -1
        self.held = {}

    # -- the interface every caller uses -------------------------------------

    @property
    def n_players(self) -> int:
        """How many seats the game has."""
        return self.n

    def is_over(self) -> bool:
        return self._outcome is not None

    def outcome(self) -> Outcome:
        """The final ranking; ValueError until ``is_over()``."""
        if self._outcome is None:
            raise ValueError("outcome: the game is not over")
        return self._outcome

    def decision(self) -> Decision | None:
        """Who must decide now, or None when the game is over.

        Never names a forfeited seat: the engine plays a forfeited seat's turns
        itself (a pass, rule H2 of each game) inside ``apply``/``forfeit``.

        In a simultaneous step, the first of ``decisions()``: the lowest seat
        still to answer, so a caller that plays one seat at a time plays the
        step seat by seat. A game whose every step is simultaneous leaves this
        to the base; one that mixes the two returns ``super().decision()``
        while ``to_move`` is ``TOGETHER``.
        """
        if self.to_move == TOGETHER:
            waiting = self.decisions()
            return waiting[0] if waiting else None
        if self._outcome is not None:
            return None
        raise NotImplementedError

    def decisions(self) -> list[Decision]:
        """Every seat that must decide now, in seat order: one decision in a sequential step,
        one per seat still to answer in a simultaneous one (``TOGETHER``); none when the game is over."""
        if self.to_move != TOGETHER:
            decision = self.decision()
            return [] if decision is None else [decision]
        held = self.held
        return [decision for decision in self._asked() if decision.seat not in held]

    @classmethod
    def simultaneous(cls) -> bool:
        """Whether the game has steps that ask several seats at once (it fills in ``_asked``)."""
        return cls._asked is not GameState._asked

    def view(self, seat: int) -> Any:
        """Everything ``seat`` may know now, and nothing it may not."""
        if not 0 <= seat < self.n:
            raise ValueError(f"view: seat {seat} is not a seat of this {self.n}-player game")
        return self._view(seat)

    def transient_view(self, seat: int) -> Any:
        """``view(seat)`` for a caller that encodes it before the state changes again.

        It encodes to the same JSON as ``view(seat)``, but it may share the
        state's own lists instead of copying them, and be the same object,
        refilled, each time it is asked for the same seat: it must be neither
        kept past the next ``apply``/``forfeit``/``transient_view`` nor changed.
        The referee builds every request from it, so the copies a kept view
        needs are not made once per decision.
        """
        if not 0 <= seat < self.n:
            raise ValueError(f"transient_view: seat {seat} is not a seat of this {self.n}-player game")
        return self._transient_view(seat)

    def events_for(self, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
        """The part of ``events`` that ``seat`` may see; every event, unless the game
        has private ones."""
        return events

    def apply(self, seat: int, action: Any) -> list[msgspec.Struct]:
        """Play ``action`` for ``seat``; the events it caused, in order.

        Raises IllegalAction (with the rule id and the numbers) and changes
        nothing when the action is not legal now: after the end, out of turn, by
        a forfeited seat, not one of the game's action types (a dict too), or
        refused by the game's own rules.
        """
        if seat != self.to_move:
            if self.to_move == TOGETHER:  # off the sequential path: a game's turns never come here
                return self._hold(seat, action)
            raise self._not_to_move(seat)
        if action.__class__ not in self.action_classes:
            raise IllegalAction(self._action_rule(), f"expected a {self.game} action, got {type(action).__name__}")
        return self._apply_action(seat, action)

    def apply_together(self, actions: Mapping[int, Any]) -> list[msgspec.Struct]:
        """Play the answers of every seat ``decisions()`` names, as one move; the events it caused.

        The referee's call for a simultaneous step: ``actions`` has one action
        per seat still to answer (a forfeited seat has none). Every action is
        checked before anything changes; the first illegal one raises
        IllegalAction with its ``seat`` set, and nothing changes. ValueError
        when ``actions`` is not for exactly those seats. In a sequential step
        it is ``apply`` for the one seat to move.
        """
        waiting = self.decisions()
        if sorted(actions) != [decision.seat for decision in waiting]:
            asked = ", ".join(str(decision.seat) for decision in waiting) or "none (the game is over)"
            raise ValueError(
                f"apply_together: answers for seats {sorted(actions)}, but the seats asked now are {asked}"
            )
        if self.to_move != TOGETHER:
            (seat, action), *_ = actions.items()
            try:
                return self.apply(seat, action)
            except IllegalAction as exc:
                exc.seat = seat
                raise
        for decision in waiting:
            self._check_held(decision, actions[decision.seat])
        answers = {**self.held, **actions}
        self.held = {}
        return self._apply_together(dict(sorted(answers.items())))

    def forfeit(self, seat: int) -> list[msgspec.Struct]:
        """Take ``seat`` out of play for the rest of the game (H2); the events caused.

        Forfeiting a finished game, or a seat twice, changes nothing. When one
        seat is left in play the game ends at once (``ended_by="forfeits"``).
        """
        n = self.n
        if not 0 <= seat < n:
            raise ValueError(f"forfeit: seat {seat} is not a seat of this {n}-player game")
        if self._outcome is not None or self.forfeited[seat]:
            return []
        self.forfeited[seat] = True
        self.forfeit_order.append(seat)
        events: list[msgspec.Struct] = [Forfeited(seat)]
        # An answer held for a simultaneous step was never played: it goes with its seat.
        self.held.pop(seat, None)
        if self.forfeited.count(False) < 2:
            self._finish("forfeits", events)
        else:
            self._after_forfeit(seat, events)
            if self.to_move == TOGETHER and self._outcome is None and not self.decisions():
                # It was the last seat the step waited for: the others' answers are played now.
                answers, self.held = self.held, {}
                events += self._apply_together(answers)
        return events

    def random_action(self, rng: random.Random) -> Any:
        """A uniformly random legal action for the seat that must decide now."""
        if self._outcome is not None:
            raise ValueError("random_action: the game is over")
        if self.to_move == TOGETHER:
            decision = self.decisions()[0]
            return self._random_answer(decision, rng)
        return self._random_action(rng)

    def pass_action(self, seat: int | None = None) -> Any:
        """The mildest legal action for the seat that must decide now (a pass where
        the game has one); the referee plays it for a seat whose action was illegal
        under the "pass" policy. In a simultaneous step, for ``seat`` (one of
        ``decisions()``; the first by default)."""
        if self._outcome is not None:
            raise ValueError("pass_action: the game is over")
        if self.to_move == TOGETHER:
            waiting = self.decisions()
            decision = next((d for d in waiting if d.seat == seat), waiting[0]) if seat is not None else waiting[0]
            return self._pass_answer(decision)
        return self._pass_action()

    def copy(self, chance: Chance | None = None) -> Self:
        """A fast independent clone that draws its future chance from ``chance``.

        Without ``chance`` the clone gets a deep copy of this game's chance source,
        so clone and original see the same future draws and neither disturbs the
        other. A search bot that should not know the future passes its own source.
        """
        cls = self.__class__
        other = cls.__new__(cls)
        other.n = self.n
        other.config = self.config
        other._chance = _copy.deepcopy(self._chance) if chance is None else chance
        other.forfeited = self.forfeited[:]
        other.forfeit_order = self.forfeit_order[:]
        other.ended_by = self.ended_by
        other._outcome = self._outcome  # frozen, safe to share
        other.to_move = self.to_move
        other.held = self.held.copy()  # the actions themselves are frozen values
        other.deal_events = self.deal_events  # never changed after the deal
        self._copy_into(other)
        return other

    def hidden_twin(self, seat: int, rng: random.Random) -> Self | None:
        """A copy in which everything hidden from ``seat`` is dealt again at random
        (other seats' cards, unseen pile orders, ...), for the contract check that a
        view shows nothing hidden (referee/contract.py). A game without hidden
        information returns ``self.copy()``; None means the game offers no twin."""
        return None

    # -- what the base does for every game -----------------------------------

    def _not_to_move(self, seat: int) -> IllegalAction:
        """Why ``seat`` may not act now: the game is over, it forfeited, or it is not its turn."""
        if self._outcome is not None:
            ended_by = self._outcome.ended_by
            return IllegalAction(
                self.end_rules.get(ended_by, "H2"), f"the game is over ({ended_by}); seat {seat} cannot act"
            )
        if 0 <= seat < self.n and self.forfeited[seat]:
            return IllegalAction("H2", f"seat {seat} has forfeited and cannot act")
        return self._out_of_turn(seat)

    def _finish(self, ended_by: str, events: list[msgspec.Struct]) -> None:
        """End the game: rank the seats (the game's ``_final_outcome``) and add its end event."""
        self.ended_by = ended_by
        self.to_move = -1
        self.held = {}
        self._close()
        outcome = self._final_outcome(ended_by)
        self._outcome = outcome
        events.append(self._end_event(outcome))

    def _hold(self, seat: int, action: Any) -> list[msgspec.Struct]:
        """``apply`` in a simultaneous step: keep ``seat``'s answer out of sight; when it is the
        last one the step waits for, play them all (``_apply_together``) and return its events."""
        waiting = self.decisions()
        decision = next((d for d in waiting if d.seat == seat), None)
        if decision is None:
            if seat in self.held:  # a forfeited seat's answer is gone: that seat hears H2 instead
                raise IllegalAction(self._action_rule(), f"seat {seat} has already answered this step")
            raise self._not_to_move(seat)
        self._check_held(decision, action)
        self.held[seat] = action
        if len(waiting) > 1:
            return []
        answers, self.held = self.held, {}
        return self._apply_together(dict(sorted(answers.items())))

    def _check_held(self, decision: Decision, action: Any) -> None:
        """IllegalAction (naming the seat) unless ``action`` answers ``decision`` of a simultaneous step."""
        seat = decision.seat
        if action.__class__ not in self.action_classes:
            raise IllegalAction(
                self._action_rule(), f"expected a {self.game} action, got {type(action).__name__}", seat
            )
        try:
            self._check_answer(decision, action)
        except IllegalAction as exc:
            exc.seat = seat
            raise

    # -- hooks each game fills in ----------------------------------------------

    def _out_of_turn(self, seat: int) -> IllegalAction:
        """The error for ``seat`` acting while another seat must (the game's turn rule)."""
        raise NotImplementedError

    def _action_rule(self) -> str:
        """The rule id an action of a foreign type breaks now."""
        raise NotImplementedError

    def _apply_action(self, seat: int, action: Any) -> list[msgspec.Struct]:
        """Play ``action``, of one of ``action_classes``, for the seat to move: the
        game's own checks (IllegalAction before any change), then the change."""
        raise NotImplementedError

    def _after_forfeit(self, seat: int, events: list[msgspec.Struct]) -> None:
        """``seat`` has just forfeited and two or more seats play on: play its
        pending turn, if it had one, as the game's H2 says."""
        raise NotImplementedError

    def _close(self) -> None:
        """Game bookkeeping at the end, before the outcome is built (most games need none)."""

    # Hooks of a game with simultaneous steps (``to_move == TOGETHER``); a sequential game needs none.

    def _asked(self) -> list[Decision]:
        """The decisions of the simultaneous step under way, one per seat it asks, in seat order,
        answered or not: never a forfeited seat. Only read while ``to_move`` is ``TOGETHER``."""
        raise NotImplementedError

    def _apply_together(self, actions: dict[int, Any]) -> list[msgspec.Struct]:
        """Play a simultaneous step: ``actions`` holds the answer of every seat it asked that is still
        in play, in seat order, each already checked (``_check_answer``). Set ``to_move`` for what comes next."""
        raise NotImplementedError

    def _check_answer(self, decision: Decision, action: Any) -> None:
        """IllegalAction unless ``action`` (of one of ``action_classes``) answers ``decision`` of a
        simultaneous step. By default it must be one of the decision's options; a decision stated by
        constraints needs the game's own check."""
        if decision.options is None:
            raise NotImplementedError(
                f"{self.game}: a {decision.kind!r} decision lists no options: fill in _check_answer"
            )
        if action not in decision.options:
            raise IllegalAction(
                self._action_rule(),
                f"{msgspec.json.encode(action).decode()} is not one of the options of seat {decision.seat}'s "
                f"{decision.kind!r} decision: answer with one of them, unchanged",
                decision.seat,
            )

    def _random_answer(self, decision: Decision, rng: random.Random) -> Any:
        """A uniformly random answer to ``decision`` of a simultaneous step: by default one of its options."""
        if not decision.options:
            raise NotImplementedError(
                f"{self.game}: a {decision.kind!r} decision lists no options: fill in _random_answer"
            )
        return decision.options[int(rng.random() * len(decision.options))]

    def _pass_answer(self, decision: Decision) -> Any:
        """The mildest answer to ``decision`` of a simultaneous step: by default its first option."""
        if not decision.options:
            raise NotImplementedError(
                f"{self.game}: a {decision.kind!r} decision lists no options: fill in _pass_answer"
            )
        return decision.options[0]

    def _final_outcome(self, ended_by: str) -> Outcome:
        """The outcome of the game that has just ended (ranks from ``rank_seats``)."""
        raise NotImplementedError

    def _end_event(self, outcome: Outcome) -> msgspec.Struct:
        """The game's end-of-game event (the last event of every game)."""
        raise NotImplementedError

    def _view(self, seat: int) -> Any:
        """``view`` for a seat already checked to be at the table."""
        raise NotImplementedError

    def _transient_view(self, seat: int) -> Any:
        """The view of ``seat`` that may share the state's lists (see ``transient_view``);
        by default ``_view``'s, which is right for a game whose view copies nothing."""
        return self._view(seat)

    def _random_action(self, rng: random.Random) -> Any:
        """``random_action`` while the game is not over."""
        raise NotImplementedError

    def _pass_action(self) -> Any:
        """``pass_action`` while the game is not over."""
        raise NotImplementedError

    def _copy_into(self, other: Any) -> None:
        """Copy the game's own fields into ``other``, a bare instance whose common
        fields ``copy`` has already set."""
        raise NotImplementedError


class GameRules:
    """A game: its name, its table sizes, its variants, its types, and how to start one.

    A game subclasses it and sets the class attributes; ``config``, ``variants``,
    ``check_table`` and ``new_game`` then work from that metadata alone.

    The presentation hooks below say how the rest of famiglia shows and tests the
    game: the human seat's terminal screen (``screen``), the random opponent's
    answer (``random_answer``), and what ``famiglia check-bot`` plays and says
    (``checkbot_targets``, ``checkbot_variants``, ``checkbot_section``,
    ``checkbot_illegal_fix``). Each has a default that works for any game, so a
    plug-in overrides only what it wants to show better.
    """

    name: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    # Every variant, once: its key (a field of ``config_type``), default and values.
    variant_spec: ClassVar[tuple[Variant, ...]] = ()
    # The msgspec types of the wire: configuration, one seat's view, an action
    # (a tagged union), an event (a tagged union). Used for decoding bot actions
    # and for the JSON Schema.
    config_type: ClassVar[type[msgspec.Struct]]
    view_type: ClassVar[Any]
    action_type: ClassVar[Any]
    event_type: ClassVar[Any]
    state_type: ClassVar[type[GameState]]
    # Secrets made by choices: decision kind -> the fields of its action that stay the
    # deciding seat's secret until the game reveals them (a sealed bid: {"bid": ("card",)}).
    # The contract suite plays such a choice again with another legal value of those
    # fields (referee.games.rechoose); none by default: every choice is taken as public.
    secret_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    def config(self, variants: Mapping[str, str]) -> Any:
        """The game configuration from ``key=value`` variants; UnknownVariant if bad."""
        spec = {v.key: v for v in self.variant_spec}
        values = {v.key: v.default for v in self.variant_spec}
        for key, text in variants.items():
            variant = spec.get(key)
            if variant is None:
                keys = [v.key for v in self.variant_spec]
                names = ", ".join(keys[:-1]) + " or " + keys[-1] if len(keys) > 1 else "".join(keys) or "none"
                raise UnknownVariant(f"{self.name} has no variant {key!r} (given {text!r}): use {names}")
            values[key] = variant.parse(self.name, text)
        return self.config_type(**values)

    def variants(self, config: msgspec.Struct) -> dict[str, str]:
        """The inverse of ``config``: every variant as text, defaults included."""
        self._check_config_type(config)
        return {v.key: v.text(getattr(config, v.key)) for v in self.variant_spec}

    def check_table(self, n_players: int) -> None:
        """ValueError unless the game can be played by ``n_players`` seats."""
        if not self.min_players <= n_players <= self.max_players:
            raise ValueError(f"{self.name} is for {self.min_players} to {self.max_players} players, not {n_players}")

    def check_config(self, config: msgspec.Struct) -> None:
        """TypeError for another game's configuration, UnknownVariant for a value
        the game does not allow (a configuration built in Python)."""
        self._check_config_type(config)
        for variant in self.variant_spec:
            variant.check(self.name, getattr(config, variant.key))

    def new_game(self, n_players: int, config: msgspec.Struct, chance: Chance) -> GameState:
        """A fresh game; ValueError if ``n_players`` or ``config`` cannot be played."""
        self._check_config_type(config)
        self.check_table(n_players)
        self.check_config(config)
        return self.state_type(n_players, config, chance)

    # -- presentation hooks: how the human seat and check-bot meet the game --------

    def screen(self) -> GameScreen:
        """The terminal screen the human seat (``famiglia play GAME human ...``) draws and reads with.

        Called once per game, at its ``start``. By default ``OptionsScreen``: the
        seat's view field by field and the options by number; where a decision
        lists no options, an action typed as JSON, read into ``action_type``.
        """
        from referee.games.screen import OptionsScreen

        return OptionsScreen(self.name, self.action_type)

    def random_answer(self, request: Mapping[str, Any], rng: random.Random) -> Any:
        """A random legal action, as JSON builtins, for ``request`` (a request message as a bot receives it).

        check-bot's random opponents answer every request with it, drawing only
        from ``rng``. By default one of the request's options, uniformly; a
        request without options gets ValueError, so a game whose decisions can
        come without options (a Vendetta placement, stated by constraints)
        overrides it. A game that always lists its options needs nothing.
        """
        options = request.get("options")
        if not options:
            raise ValueError(
                f"{self.name}: a {request.get('decision')!r} request lists no options, so a random answer needs "
                "the game's own GameRules.random_answer"
            )
        return rng.choice(options)

    def checkbot_targets(self) -> Sequence[Target]:
        """The decisions ``famiglia check-bot`` makes a bot answer, each in a position found by seeded play.

        Called once per check; check-bot plays one game from each target's
        position (``referee.games.checkbot.find_position``) as the check named
        by the target. By default one target per decision kind that seeded
        random games reach over ``checkbot_variants()`` (``targets_by_random_play``).
        """
        from referee.games.checkbot import targets_by_random_play

        return targets_by_random_play(self, self.checkbot_variants())

    def checkbot_variants(self) -> list[dict[str, str]]:
        """The variant sets ``famiglia check-bot`` spreads over its games at every table size (one per game).

        The first is usually ``{}`` (the defaults). By default the defaults,
        then each declared variant alone at each other choice, or at its lowest
        and highest number (``referee.games.checkbot.variants_from_spec``).
        """
        from referee.games.checkbot import variants_from_spec

        return variants_from_spec(self.variant_spec)

    def checkbot_section(self) -> str:
        """The heading of protocol/PROTOCOL.md where a bot author reads this game's decisions.

        check-bot names it in the fix of a forced decision the bot failed and of
        an illegal action. By default "What an answer may look like", the
        section every game shares.
        """
        return "What an answer may look like"

    def viewer_package(self) -> str:
        """The package that holds this game's replay-viewer parts, each optional: a ``viewer`` module
        (``snapshot``, ``PUBLIC_ACTIONS``) and a ``board.js`` file installed as package data.

        ``famiglia replay view`` and the report's game pages look there; for each
        part a game does not bring they use the generic one (every seat's view and
        each step's events as tables). By default the package of the rules' class.
        """
        module = sys.modules.get(type(self).__module__)
        return getattr(module, "__package__", None) or type(self).__module__

    def checkbot_illegal_fix(self) -> str:
        """How a bot stops playing illegal actions in this game: check-bot's fix when a game ended on one.

        By default: answer with one of the request's options, or within its
        constraints where it lists none.
        """
        return (
            "answer with one of the request's options, copied unchanged; where a request lists none, an action "
            "within its constraints (the reason names the rule broken)"
        )

    # -- training hooks: how a learner and a search bot meet the game (docs/training.md) --------

    def encoding(self, n_players: int, config: Any) -> Encoding:
        """The game as numbers for a learner at this table size and configuration (referee.games.encoding).

        By default ``GenericEncoding``: the view laid out from ``view_type``'s
        schema, and each decision one choice among its listed options. A game
        whose decisions can come without options (a Vendetta placement) gives
        its own, factoring such a decision into steps with masks.
        """
        from referee.games.encoding import GenericEncoding

        return GenericEncoding(self, n_players, config)

    def sample_state(self, view: Any, config: Any, rng: random.Random) -> GameState | None:
        """A full game state consistent with ``view`` (one seat's view, in a game of ``config``), its hidden
        part drawn from ``rng``.

        The forward model of a search bot (a determinization): the state's
        ``view(view.seat)`` equals ``view``, everything the seat cannot see is
        dealt at random among what the view allows, and later chance comes from
        ``rng`` too. ValueError for a view the game cannot have shown (or of a
        finished game). None, the default: the game offers no forward model.
        """
        return None

    def _check_config_type(self, config: object) -> None:
        if not isinstance(config, self.config_type):
            raise TypeError(f"{self.name} needs a {self.config_type.__name__}, got {type(config).__name__}")
