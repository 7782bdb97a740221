"""The presentation hooks of GameRules: each default on a game that overrides none, and the built-in games' own.

``Pile`` is a throwaway game made for these tests: seats take 1 or 2 counters
from a pile in turn, whoever takes the last one wins. Under the variant
``opening=bid`` the first seat first names the parity of the last counter (a
decision kind only that variant brings), so the default search must look past
the default variants to find it. It brings no hook of its own.
"""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest
from rich.console import Console

from referee.games import get_rules
from referee.games.base import (
    ChoiceVariant,
    Decision,
    GameRules,
    GameState,
    IllegalAction,
    IntVariant,
    Outcome,
    SeededChance,
    Variant,
    rank_seats,
)
from referee.games.checkbot import Target, find_position, targets_by_random_play
from referee.games.screen import IllegalEntry, OptionsScreen

ROOT = Path(__file__).resolve().parents[3]


class PileConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    size: int = 7
    opening: str = "none"


class Take(msgspec.Struct, frozen=True, tag="take", tag_field="type"):
    count: int


class Bid(msgspec.Struct, frozen=True, tag="bid", tag_field="type"):
    parity: str


PileAction = Take | Bid


class Took(msgspec.Struct, frozen=True, tag="took", tag_field="type"):
    seat: int
    count: int


class Ended(msgspec.Struct, frozen=True, tag="ended", tag_field="type"):
    winner: int


class PileView(msgspec.Struct, frozen=True, tag="pile", tag_field="type", kw_only=True):
    seat: int
    left: int
    bid: str | None


class PileState(GameState):
    __slots__ = ("bid", "left", "winner")

    game: ClassVar[str] = "pile"
    action_classes: ClassVar[frozenset[type]] = frozenset({Take, Bid})

    def __init__(self, n_players: int, config: PileConfig, chance: Any) -> None:
        super().__init__(n_players, config, chance)
        self.left = config.size
        self.bid: str | None = None if config.opening == "bid" else "-"
        self.winner = -1
        self.to_move = 0

    def decision(self) -> Decision | None:
        if self.is_over():
            return None
        if self.bid is None:
            return Decision(seat=self.to_move, kind="open", options=[Bid("odd"), Bid("even")])
        return Decision(seat=self.to_move, kind="take", options=[Take(n) for n in (1, 2) if n <= self.left])

    def _out_of_turn(self, seat: int) -> IllegalAction:
        return IllegalAction("turn", f"seat {self.to_move} moves, not {seat}")

    def _action_rule(self) -> str:
        return "take"

    def _apply_action(self, seat: int, action: Any) -> list[msgspec.Struct]:
        if isinstance(action, Bid):
            if self.bid is not None:
                raise IllegalAction("open", "the bid is made")
            self.bid = action.parity
            return []
        if self.bid is None or not 1 <= action.count <= min(2, self.left):
            raise IllegalAction("take", f"cannot take {action.count} of {self.left}")
        self.left -= action.count
        events: list[msgspec.Struct] = [Took(seat, action.count)]
        if self.left == 0:
            self.winner = seat
            self._finish("empty", events)
        else:
            self.to_move = self._next(seat)
        return events

    def _next(self, seat: int) -> int:
        nxt = (seat + 1) % self.n
        while self.forfeited[nxt]:
            nxt = (nxt + 1) % self.n
        return nxt

    def _after_forfeit(self, seat: int, events: list[msgspec.Struct]) -> None:
        if seat == self.to_move:
            self.to_move = self._next(seat)

    def _final_outcome(self, ended_by: str) -> Outcome:
        keys = [(1 if seat == self.winner else 0,) for seat in range(self.n)]
        ranks = rank_seats(keys, self.forfeit_order)
        return Outcome(
            ranks=ranks,
            scores=[key[0] for key in keys],
            winners=[s for s in range(self.n) if ranks[s] == 1],
            forfeited=self.forfeit_order[:],
            ended_by=ended_by,
        )

    def _end_event(self, outcome: Outcome) -> msgspec.Struct:
        return Ended(self.winner)

    def _view(self, seat: int) -> PileView:
        return PileView(seat=seat, left=self.left, bid=self.bid)

    def _random_action(self, rng: random.Random) -> Any:
        decision = self.decision()
        assert decision is not None and decision.options
        return rng.choice(decision.options)

    def _pass_action(self) -> Any:
        return Bid("odd") if self.bid is None else Take(1)

    def _copy_into(self, other: Any) -> None:
        other.left, other.bid, other.winner = self.left, self.bid, self.winner


class PileRules(GameRules):
    name: ClassVar[str] = "pile"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 3
    variant_spec: ClassVar[tuple[Variant, ...]] = (
        IntVariant("size", 3, 12, 7),
        ChoiceVariant("opening", ("none", "bid"), "none"),
    )
    config_type: ClassVar[type[msgspec.Struct]] = PileConfig
    view_type: ClassVar[Any] = PileView
    action_type: ClassVar[Any] = PileAction
    event_type: ClassVar[Any] = Took | Ended
    state_type: ClassVar[type[GameState]] = PileState


PILE = PileRules()


def headings() -> set[str]:
    doc = (ROOT / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")
    return {line.lstrip("#").strip() for line in doc.splitlines() if line.startswith("#")}


def request(state: GameState, request_id: int = 1) -> dict[str, Any]:
    """The request the referee would send for the pending decision, as a seat receives it (JSON builtins)."""
    decision = state.decision()
    assert decision is not None
    message = {
        "type": "request",
        "id": request_id,
        "decision": decision.kind,
        "view": state.view(decision.seat),
        "events": [],
        "options": decision.options,
        "constraints": decision.constraints,
    }
    built: dict[str, Any] = msgspec.to_builtins(message)
    return built


# ---------------------------------------------------------------------------
# The defaults, on a game that overrides none


def test_default_variants_are_the_defaults_then_each_variant_alone_at_its_edges_or_other_choices() -> None:
    assert PILE.checkbot_variants() == [{}, {"size": "3"}, {"size": "12"}, {"opening": "bid"}]
    for variants in PILE.checkbot_variants():
        PILE.config(variants)  # every set is a configuration the game accepts


def test_default_targets_are_each_decision_kind_random_play_reaches_even_one_only_a_variant_brings() -> None:
    targets = PILE.checkbot_targets()
    assert [target.name for target in targets] == ["decision: take", "decision: open"]
    opening = targets[1]
    assert dict(opening.variants) == {"opening": "bid"}
    for target in targets:
        forced = find_position(PILE, target)
        assert forced is not None
        decision = forced.state.decision()
        assert decision.kind == target.name.removeprefix("decision: ") and decision.seat == forced.seat
        assert forced.seed == target.first_seed  # found in the game the discovery met it in


def test_the_default_search_stops_after_quiet_games_and_is_the_same_on_every_run() -> None:
    first = targets_by_random_play(PILE, PILE.checkbot_variants(), quiet=5)
    again = targets_by_random_play(PILE, PILE.checkbot_variants(), quiet=5)
    assert [(t.name, t.first_seed, t.players) for t in first] == [(t.name, t.first_seed, t.players) for t in again]


def test_a_target_that_never_comes_is_not_found_within_the_budget() -> None:
    never = Target(name="decision: never", what="nothing", match=lambda state, decision: False)
    assert find_position(PILE, never, games=3) is None


def test_default_random_answer_is_one_of_the_options() -> None:
    state = PILE.new_game(2, PILE.config({}), SeededChance(1))
    message = request(state)
    answers = {msgspec.json.encode(PILE.random_answer(message, random.Random(seed))) for seed in range(20)}
    assert answers == {b'{"type":"take","count":1}', b'{"type":"take","count":2}'}


def test_default_random_answer_to_a_request_without_options_says_the_game_must_give_one() -> None:
    with pytest.raises(ValueError, match=r"pile: a 'bid' request lists no options.*GameRules.random_answer"):
        PILE.random_answer({"type": "request", "decision": "bid", "options": None}, random.Random(0))


def test_default_screen_draws_the_view_and_numbered_options_and_reads_a_number() -> None:
    screen = PILE.screen()
    assert isinstance(screen, OptionsScreen)
    state = PILE.new_game(2, PILE.config({"opening": "bid"}), SeededChance(1))
    message = request(state)
    out = io.StringIO()
    screen.draw(Console(file=out, width=120, color_system=None), message, ["you", "bot"])
    drawn = out.getvalue()
    assert "pile: decision open" in drawn and "left: 7" in drawn and "bid: null" in drawn
    assert ' 1) {"type":"bid","parity":"odd"}' in drawn and ' 2) {"type":"bid","parity":"even"}' in drawn
    assert screen.prompt(message).endswith("(e.g. 1)")
    assert screen.parse("2", message) == {"type": "bid", "parity": "even"}
    for wrong in ("0", "3", "even"):
        with pytest.raises(IllegalEntry, match="is not one of the 2 options"):
            screen.parse(wrong, message)
    assert "Type the number" in screen.help(message)


def test_default_screen_reads_a_decision_without_options_as_json_of_the_games_action_type() -> None:
    screen = PILE.screen()
    message = {"type": "request", "id": 3, "decision": "take", "view": {"seat": 0}, "options": None,
               "constraints": {"most": 2}}  # fmt: skip
    out = io.StringIO()
    screen.draw(Console(file=out, width=120, color_system=None), message, ["you", "bot"])
    assert 'constraints: {"most":2}' in out.getvalue()
    assert screen.prompt(message) == 'type the action as one JSON object (e.g. {"type":"take"})'
    assert screen.parse('{"type": "take", "count": 2}', message) == {"type": "take", "count": 2}
    for wrong in ('{"type": "take"}', '{"type": "steal", "count": 1}', "two"):
        with pytest.raises(IllegalEntry, match="is not a pile action"):
            screen.parse(wrong, message)
    assert "lists no options" in screen.help(message)


def test_default_screen_describes_an_event_with_the_seats_name_and_prints_brackets_literally() -> None:
    screen = PILE.screen()
    assert (
        screen.describe_event({"type": "took", "seat": 1, "count": 2}, ["you", "bot"]) == "bot (seat 1) took: count 2"
    )
    described = screen.describe_event({"type": "said", "text": "[bold]hi"}, ["you"])
    out = io.StringIO()
    Console(file=out, color_system=None).print(described)
    assert "[bold]hi" in out.getvalue()


def test_default_section_is_a_heading_of_protocol_md_and_the_illegal_fix_names_the_options() -> None:
    assert PILE.checkbot_section() in headings()
    assert "options" in PILE.checkbot_illegal_fix() and "constraints" in PILE.checkbot_illegal_fix()


# ---------------------------------------------------------------------------
# The built-in games, through the same hooks


def test_vendetta_brings_its_board_screen_its_placement_answer_and_four_placement_targets() -> None:
    from referee.games.vendetta.screen import VendettaScreen

    rules = get_rules("vendetta")
    assert isinstance(rules.screen(), VendettaScreen)
    assert [target.name for target in rules.checkbot_targets()] == [
        "decision: place, turn 0",
        "decision: place, later turn",
        "decision: place, P4 minimum",
        "decision: place, empty hand",
    ]
    assert rules.checkbot_section() == "Vendetta" and "minimum[D-1]" in rules.checkbot_illegal_fix()
    # A placement request lists no options: the answer is drawn from its constraints, and is legal.
    state = rules.new_game(3, rules.config({}), SeededChance(4))
    message = request(state)
    assert message["options"] is None
    for seed in range(20):
        answer = rules.random_answer(message, random.Random(seed))
        state.copy().apply(message["view"]["seat"], msgspec.convert(answer, rules.action_type))


def test_sicilianos_brings_its_screen_and_a_target_for_every_decision_kind() -> None:
    from referee.games.sicilianos import DECISION_KINDS
    from referee.games.sicilianos.screen import SicilianosScreen

    rules = get_rules("sicilianos")
    assert isinstance(rules.screen(), SicilianosScreen)
    targets = rules.checkbot_targets()
    assert [target.name for target in targets] == [f"decision: {kind}" for kind in DECISION_KINDS]
    assert next(t for t in targets if t.name == "decision: give").variants == {"steal_pick": "victim"}
    assert rules.checkbot_section() == "Decisions and actions"
    state = rules.new_game(3, rules.config({}), SeededChance(4))
    assert rules.random_answer(request(state), random.Random(0)) in request(state)["options"]


@pytest.mark.parametrize("game", ["vendetta", "sicilianos"])
def test_each_built_in_games_checkbot_variants_are_valid_and_its_section_is_a_heading(game: str) -> None:
    rules = get_rules(game)
    for variants in rules.checkbot_variants():
        rules.config(variants)
    assert rules.checkbot_section() in headings()


def test_a_match_never_imports_the_screens_or_check_bots_knowledge() -> None:
    # The hooks import them when called: a bot importing an engine, and the referee, load no rich.
    code = (
        "import sys, referee.games.vendetta, referee.games.sicilianos, referee.match\n"
        "from referee.games import get_rules\n"
        "from referee.games.base import SeededChance\n"
        "for game in ('vendetta', 'sicilianos'):\n"
        "    rules = get_rules(game)\n"
        "    rules.new_game(3, rules.config({}), SeededChance(1)).decision()\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] == 'rich' or m.endswith(('.screen', '.checkbot'))]\n"
        "print(loaded)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stdout + run.stderr
