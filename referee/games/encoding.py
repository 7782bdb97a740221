"""A game as numbers for a learner: a fixed-size observation vector, and decisions as masked choices.

A learning algorithm wants every observation to be a vector of one size and
every action to be a number from 0 to ``action_size - 1``, with a mask of the
numbers that are legal now. A game's decisions are neither: a Sicilianos turn
lists a few dozen options out of about nine hundred actions, a Vendetta
placement lists none and has thousands of legal answers. ``Encoding`` is the
bridge, one per game, table size and configuration (``GameRules.encoding``):

* ``observe(view, decision, chosen)``: the seat's view (only what the seat may
  know, so the vector holds nothing hidden) and the decision it is asked, as
  ``observation_size`` floats within ``[low, high]``.
* A decision is made in one or more steps, each a number with a mask
  (``mask(decision, chosen)``). ``chosen`` is the numbers picked so far for this
  decision; ``action(decision, chosen)`` is the game's action once they make
  one, None while more steps are needed. A game whose decisions list their
  options needs one step; Vendetta's placement is a few (its encoding says
  which). Every legal action is some sequence of masked steps, and a sequence
  of masked steps always ends in a legal action.
* ``steps_for(decision, action)``: the numbers that make a given legal action,
  for imitating a bot and for the tests of the two properties above.

The same encoding serves the training environments (training.aec, training.
opponents) and a trained policy entered as a bot (training.policy_bot), so a
policy sees in a match what it saw in training.

``GenericEncoding`` is the default every game gets, a plug-in included. It
reads the game's own wire types (``view_type``, ``action_type``) and needs
nothing else: the view is laid out field by field from its schema, and a
decision is one step choosing among its listed options by position, with each
option's fields in the observation. It cannot encode a decision that lists no
options (a game like Vendetta's placement gives its own encoding), and lists
and dicts in the view keep their first ``LIST_SLOTS`` items only.

Only numpy is used here: a bot that runs a trained policy needs no learning
framework.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

import msgspec
import msgspec.inspect as schema
import numpy as np
import numpy.typing as npt

from referee.games.chance import SeededChance

__all__ = [
    "LIST_SLOTS",
    "DecisionSteps",
    "Encoding",
    "GenericEncoding",
    "NoEncoding",
    "SchemaVector",
    "field_offsets",
    "squash",
]

Vector = npt.NDArray[np.float32]
Mask = npt.NDArray[np.int8]


# What this module reads of a Decision and of a GameRules (referee.games.base, which imports this
# module from its ``encoding`` hook, so it cannot be imported back).
class Decision(Protocol):
    @property
    def seat(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def options(self) -> list[Any] | None: ...
    @property
    def constraints(self) -> Any: ...


class _Game(Protocol):
    def decision(self) -> Decision | None: ...
    def random_action(self, rng: random.Random) -> Any: ...
    def apply(self, seat: int, action: Any) -> Any: ...


class GameRules(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def view_type(self) -> Any: ...
    @property
    def action_type(self) -> Any: ...
    def new_game(self, n_players: int, config: Any, chance: SeededChance) -> _Game: ...


# How many items of a list (or entries of a dict) in a view the generic layout keeps.
LIST_SLOTS: Final = 8
# A number in the generic layout is squashed (``squash``) and then kept within this bound.
SQUASH_BOUND: Final = 40.0
# How many seeded random games the generic encoding plays to size its option slots, and how long each may run.
PROBE_GAMES: Final = 4
PROBE_DECISIONS: Final = 5_000


class NoEncoding(ValueError):
    """A decision the game's encoding cannot put as masked steps (say so to the game's author in one line)."""


def field_offsets(sizes: dict[str, int]) -> tuple[dict[str, int], int]:
    """Where each named part of an observation vector starts, laid end to end in ``sizes``'s order, and
    the vector's whole length: the layout a game's own encoding writes its parts into."""
    at: dict[str, int] = {}
    offset = 0
    for name, size in sizes.items():
        at[name] = offset
        offset += size
    return at, offset


def squash(value: float) -> float:
    """A number of any size as a small one of the same sign: ``sign(x) * log(1 + |x|)``, within ±SQUASH_BOUND."""
    out = math.copysign(math.log1p(abs(value)), value)
    return max(-SQUASH_BOUND, min(SQUASH_BOUND, out))


class Encoding:
    """One game at one table size and configuration, as vectors and masked steps (module docstring)."""

    observation_size: int
    action_size: int
    # Every value ``observe`` writes lies within [low, high].
    low: float = 0.0
    high: float = 1.0

    def observe(self, view: Any, decision: Decision | None, chosen: Sequence[int] = ()) -> Vector:
        """The view and the decision asked (None: the seat is not asked now), as ``observation_size`` floats."""
        raise NotImplementedError

    def mask(self, decision: Decision, chosen: Sequence[int] = ()) -> Mask:
        """Which numbers are legal for the next step of ``decision`` after ``chosen`` (1 legal, 0 not), as int8."""
        raise NotImplementedError

    def action(self, decision: Decision, chosen: Sequence[int]) -> Any | None:
        """The game action ``chosen`` makes, or None while the decision needs more steps."""
        raise NotImplementedError

    def steps_for(self, decision: Decision, action: Any) -> list[int]:
        """The numbers, step by step, that make ``action`` (a legal answer to ``decision``)."""
        raise NotImplementedError

    def describe(self, decision: Decision, chosen: Sequence[int], index: int) -> str:
        """What the number ``index`` means at this step, in a few words (for people reading a policy)."""
        return str(index)

    def decision_steps(self, view: Any, decision: Decision) -> DecisionSteps:
        """One decision taken a step at a time: the environments ask for the vector and mask of every
        step. By default each is ``observe``/``mask`` again; a game may return its own ``DecisionSteps``
        that reads the view once and keeps what the steps share (Vendetta's does)."""
        return DecisionSteps(self, view, decision)


class DecisionSteps:
    """One seat's decision in progress, the steps chosen so far, and the vector and mask before the next.

    They are ``observe``/``mask``/``action`` of the encoding with the steps so
    far; a game's own subclass gives the same arrays faster. ``take`` does not
    judge a step (the caller checks it against ``mask`` first). The view must
    not change while the decision is open: a subclass may read it once, at
    the start. ``mask()`` is the same array until the next ``take``: copy it
    before handing it to code that may change it.
    """

    __slots__ = ("_mask", "chosen", "decision", "encoding", "view")

    def __init__(self, encoding: Encoding, view: Any, decision: Decision) -> None:
        self.encoding = encoding
        self.view = view
        self.decision = decision
        self.chosen: list[int] = []
        self._mask: Mask | None = None

    def vector(self) -> Vector:
        """The observation before the next step (a new array each call)."""
        return self.encoding.observe(self.view, self.decision, self.chosen)

    def mask(self) -> Mask:
        """The numbers the next step may take (kept until the next ``take``)."""
        if self._mask is None:
            self._mask = self.encoding.mask(self.decision, self.chosen)
        return self._mask

    def take(self, step: int) -> Any | None:
        """Add ``step`` (one ``mask`` allows); the game's action once the steps make one, else None."""
        self.chosen.append(step)
        self._mask = None
        return self.encoding.action(self.decision, self.chosen)


# ---------------------------------------------------------------------------
# The generic layout of a wire type


Writer = Callable[[Any, Vector, int], None]


class SchemaVector:
    """A msgspec type laid out as a fixed number of floats, from its schema alone.

    Numbers take one slot (squashed), booleans one, a literal or enum one per
    value (one-hot), text one (a stable hash in [0, 1)), an optional value a
    presence slot and its own, a Struct its fields in order, a union of tagged
    Structs a slot per tag and each member's fields, a list or dict its length
    and ``LIST_SLOTS`` items (by key for a dict). Values are read as JSON
    builtins (``msgspec.to_builtins``), so a Struct and its JSON agree.
    """

    def __init__(self, tp: Any, slots: int = LIST_SLOTS) -> None:
        self.slots = slots
        self.size, self._write = self._layout(schema.type_info(tp))

    def write(self, value: Any, out: Vector, offset: int = 0) -> None:
        """Fill ``out[offset : offset + size]`` (zeros first) from ``value``, a Struct or its builtins."""
        out[offset : offset + self.size] = 0.0
        self._write(msgspec.to_builtins(value), out, offset)

    # Each _layout_* returns (size, writer); a writer sees JSON builtins and leaves zeros where a value is absent.

    def _layout(self, node: schema.Type) -> tuple[int, Writer]:
        if isinstance(node, schema.IntType | schema.FloatType):
            return 1, _write_number
        if isinstance(node, schema.BoolType):
            return 1, _write_bool
        if isinstance(node, schema.NoneType):
            return 0, _write_nothing
        if isinstance(node, schema.LiteralType):
            return self._one_hot(list(node.values))
        if isinstance(node, schema.EnumType):
            return self._one_hot([member.value for member in node.cls])
        if isinstance(node, schema.StructType):
            return self._struct(node)
        if isinstance(node, schema.UnionType):
            return self._union(list(node.types))
        if isinstance(node, schema.ListType | schema.VarTupleType | schema.SetType | schema.FrozenSetType):
            return self._sequence(node.item_type)
        if isinstance(node, schema.TupleType):
            return self._fixed_tuple(list(node.item_types))
        if isinstance(node, schema.DictType):
            return self._mapping(node.key_type, node.value_type)
        return 1, _write_hash  # text, and anything the layout has no shape for

    def _one_hot(self, values: list[Any]) -> tuple[int, Writer]:
        index = {value: i for i, value in enumerate(values)}

        def write(value: Any, out: Vector, offset: int) -> None:
            i = index.get(value)
            if i is not None:
                out[offset + i] = 1.0

        return len(values), write

    def _struct(self, node: schema.StructType) -> tuple[int, Writer]:
        parts: list[tuple[str, int, Writer]] = []
        size = 0
        for field in node.fields:
            width, writer = self._layout(field.type)
            parts.append((field.encode_name, size, writer))
            size += width

        def write(value: Any, out: Vector, offset: int) -> None:
            if not isinstance(value, dict):
                return
            for name, at, writer in parts:
                if name in value and value[name] is not None:
                    writer(value[name], out, offset + at)

        return size, write

    def _union(self, members: list[schema.Type]) -> tuple[int, Writer]:
        optional = any(isinstance(m, schema.NoneType) for m in members)
        members = [m for m in members if not isinstance(m, schema.NoneType)]
        if len(members) == 1 and optional:
            width, inner = self._layout(members[0])

            def write_optional(value: Any, out: Vector, offset: int) -> None:
                if value is not None:
                    out[offset] = 1.0
                    inner(value, out, offset + 1)

            return 1 + width, write_optional
        # Tagged Structs: a slot per tag, then each member's own slots.
        tagged: dict[Any, tuple[int, int, Writer]] = {}
        others: list[tuple[Callable[[Any], bool], int, Writer]] = []
        size = 0
        structs = [m for m in members if isinstance(m, schema.StructType) and m.tag_field is not None]
        for i, member in enumerate(structs):
            width, writer = self._struct(member)
            tagged[(member.tag_field, member.tag)] = (i, len(structs) + size, writer)
            size += width
        size += len(structs)
        for other in members:
            if other in structs:
                continue
            width, writer = self._layout(other)
            others.append((_accepts(other), size, writer))
            size += width

        def write(value: Any, out: Vector, offset: int) -> None:
            if isinstance(value, dict):
                for (field, tag), (i, at, writer) in tagged.items():
                    if value.get(field) == tag:
                        out[offset + i] = 1.0
                        writer(value, out, offset + at)
                        return
            for accepts, at, writer in others:
                if accepts(value):
                    writer(value, out, offset + at)
                    return

        return size, write

    def _sequence(self, item: schema.Type) -> tuple[int, Writer]:
        width, writer = self._layout(item)
        slots = self.slots

        def write(value: Any, out: Vector, offset: int) -> None:
            if not isinstance(value, list):
                return
            out[offset] = squash(len(value))
            for i, element in enumerate(value[:slots]):
                if element is not None:
                    writer(element, out, offset + 1 + i * width)

        return 1 + slots * width, write

    def _fixed_tuple(self, items: list[schema.Type]) -> tuple[int, Writer]:
        parts = [self._layout(item) for item in items]
        size = sum(width for width, _ in parts)

        def write(value: Any, out: Vector, offset: int) -> None:
            at = offset
            for element, (width, writer) in zip(value, parts, strict=False):
                if element is not None:
                    writer(element, out, at)
                at += width

        return size, write

    def _mapping(self, key: schema.Type, item: schema.Type) -> tuple[int, Writer]:
        key_width, key_writer = self._layout(key)
        item_width, item_writer = self._layout(item)
        width = key_width + item_width
        slots = self.slots

        def write(value: Any, out: Vector, offset: int) -> None:
            if not isinstance(value, dict):
                return
            out[offset] = squash(len(value))
            for i, name in enumerate(sorted(value, key=str)[:slots]):
                at = offset + 1 + i * width
                key_writer(name, out, at)
                if value[name] is not None:
                    item_writer(value[name], out, at + key_width)

        return 1 + slots * width, write


def _write_number(value: Any, out: Vector, offset: int) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        out[offset] = squash(value)


def _write_bool(value: Any, out: Vector, offset: int) -> None:
    out[offset] = 1.0 if value is True else 0.0


def _write_nothing(value: Any, out: Vector, offset: int) -> None:
    return None


def _write_hash(value: Any, out: Vector, offset: int) -> None:
    data = value.encode("utf-8") if isinstance(value, str) else msgspec.json.encode(value)
    out[offset] = zlib.crc32(data) / 2**32


def _accepts(node: schema.Type) -> Callable[[Any], bool]:
    """Whether a JSON builtin value could be of ``node`` (to pick a member of a mixed union)."""
    if isinstance(node, schema.BoolType):
        return lambda value: isinstance(value, bool)
    if isinstance(node, schema.IntType | schema.FloatType):
        return lambda value: isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(node, schema.LiteralType):
        values = set(node.values)
        return lambda value: not isinstance(value, list | dict) and value in values
    if isinstance(node, schema.ListType | schema.VarTupleType | schema.SetType | schema.FrozenSetType):
        return lambda value: isinstance(value, list)
    if isinstance(node, schema.DictType | schema.StructType):
        return lambda value: isinstance(value, dict)
    if isinstance(node, schema.StrType):
        return lambda value: isinstance(value, str)
    return lambda value: True


# ---------------------------------------------------------------------------
# The default every game gets


class GenericEncoding(Encoding):
    """Any game whose decisions list their options: one step, choosing an option by its position.

    The observation is the view (``SchemaVector`` of ``view_type``), the
    decision's kind (hashed), then ``max_options`` slots, each a presence flag
    and one option laid out by ``action_type``'s schema, so a policy sees what
    each number it may pick would do. ``max_options``: by default twice the most
    options seen in a few seeded random games of this table and configuration
    (at least 8); a decision with more is refused with a line saying how to
    raise it.
    """

    low = -SQUASH_BOUND
    high = SQUASH_BOUND

    def __init__(self, rules: GameRules, n_players: int, config: Any, *, max_options: int | None = None) -> None:
        self.rules = rules
        self.view_layout = SchemaVector(rules.view_type)
        self.option_layout = SchemaVector(rules.action_type)
        self.max_options = max_options if max_options is not None else _probe_options(rules, n_players, config)
        self.option_width = 1 + self.option_layout.size
        self._options_at = self.view_layout.size + 1
        self.observation_size = self._options_at + self.max_options * self.option_width
        self.action_size = self.max_options

    def _options(self, decision: Decision) -> list[Any]:
        options = decision.options
        if not options:
            raise NoEncoding(
                f"{self.rules.name}: a {decision.kind!r} decision lists no options, so the generic encoding cannot "
                "put it as a choice; give the game an encoding of its own (GameRules.encoding, docs/training.md)"
            )
        if len(options) > self.max_options:
            raise NoEncoding(
                f"{self.rules.name}: a {decision.kind!r} decision lists {len(options)} options, more than the "
                f"{self.max_options} the encoding has room for; build it with max_options={2 * len(options)} "
                "or give the game an encoding of its own (docs/training.md)"
            )
        return options

    def observe(self, view: Any, decision: Decision | None, chosen: Sequence[int] = ()) -> Vector:
        out = np.zeros(self.observation_size, dtype=np.float32)
        self.view_layout.write(view, out, 0)
        if decision is not None:
            _write_hash(decision.kind, out, self.view_layout.size)
            for i, option in enumerate(self._options(decision)):
                at = self._options_at + i * self.option_width
                out[at] = 1.0
                self.option_layout.write(option, out, at + 1)
        return out

    def mask(self, decision: Decision, chosen: Sequence[int] = ()) -> Mask:
        mask = np.zeros(self.action_size, dtype=np.int8)
        if not chosen:
            mask[: len(self._options(decision))] = 1
        return mask

    def action(self, decision: Decision, chosen: Sequence[int]) -> Any | None:
        if not chosen:
            return None
        return self._options(decision)[chosen[0]]

    def steps_for(self, decision: Decision, action: Any) -> list[int]:
        options = self._options(decision)
        wanted = msgspec.json.encode(action)
        for i, option in enumerate(options):
            if option == action or msgspec.json.encode(option) == wanted:
                return [i]
        raise ValueError(f"{self.rules.name}: {action!r} is not one of the decision's options")

    def describe(self, decision: Decision, chosen: Sequence[int], index: int) -> str:
        options = decision.options or []
        return msgspec.json.encode(options[index]).decode() if 0 <= index < len(options) else f"option {index}"


def _probe_options(rules: GameRules, n_players: int, config: Any) -> int:
    """Twice the most options a decision listed in a few seeded random games (at least 8)."""
    most = 0
    for seed in range(1, PROBE_GAMES + 1):
        state = rules.new_game(n_players, config, SeededChance(seed))
        rng = random.Random(seed)
        for _ in range(PROBE_DECISIONS):
            decision = state.decision()
            if decision is None:
                break
            most = max(most, len(decision.options or ()))
            state.apply(decision.seat, state.random_action(rng))
    return max(8, 2 * most)
