"""Vendetta at the terminal: the 13 districts, every seat's numbers, placements typed as ``7:3 11:2``.

``VendettaRules.screen()`` gives it to the human seat (tournaments.human).
"""

from __future__ import annotations

from typing import Any

import msgspec
from rich.console import Console
from rich.table import Table

from referee.games.base import GameRules, IllegalAction, SeededChance
from referee.games.screen import IllegalEntry
from referee.games.vendetta.messages import Place, Placement, VendettaView
from referee.games.vendetta.state import VendettaState

__all__ = ["VendettaScreen"]


def _placements(items: list[dict[str, Any]]) -> str:
    return ", ".join(f"{p['count']} in district {p['district']}" for p in items) or "nothing"


class VendettaScreen:
    """Draws a Vendetta view and reads a placement, judged by ``rules`` (Vendetta's) before it is sent."""

    def __init__(self, rules: GameRules) -> None:
        # Given, not imported: the vendetta package declares its rules and imports this module.
        self.rules = rules

    def describe_event(self, event: dict[str, Any], names: list[str]) -> str:
        kind = event.get("type")

        def who(seat: int) -> str:
            return f"{names[seat]} (seat {seat})"

        if kind == "placed":
            return f"{who(event['seat'])} placed {_placements(event['placements'])}"
        if kind == "revealed":
            return f"{who(event['seat'])} revealed protection card {event['district']}"
        if kind == "eliminated":
            return f"vendetta in district {event['district']}: {who(event['seat'])} lost {event['count']} mafiosi"
        if kind == "paid":
            return f"protection money in district {event['district']} for {', '.join(who(s) for s in event['seats'])}"
        if kind == "raided":
            return f"raid on districts {' and '.join(map(str, event['districts']))}: lost {event['lost']}"
        if kind == "scored":
            return f"round {event['round']} scored: districts {event['controlled']}, points now {event['points']}"
        if kind == "reinforced":
            return f"reinforcements from the boxes: {event['taken']}"
        if kind == "round_start":
            return f"round {event['round']} begins, {who(event['start_seat'])} starts"
        if kind == "forfeited":
            return f"{who(event['seat'])} forfeited"
        if kind == "game_over":
            return f"game over ({event['ended_by']}): winners {[who(s) for s in event['winners']]}"
        return str(event)

    def draw(self, console: Console, request: dict[str, Any], names: list[str]) -> None:
        view = request["view"]
        seat = view["seat"]
        n = view["n_players"]
        revealed = view["revealed"]
        board = Table(title=f"round {view['round']}, turn {view['turn']}: your move, seat {seat}")
        board.add_column("district", justify="right")
        for s in range(n):
            board.add_column(f"{'you' if s == seat else names[s]} ({s})", justify="right")
        board.add_column("card", justify="left")
        minimum = request["constraints"]["minimum"]
        for d in range(1, 14):
            counts = [str(c) if c else "." for c in view["board"][d - 1]]
            note = []
            if d in revealed:
                note.append(f"revealed #{revealed.index(d) + 1}")
            if minimum[d - 1] > 1:
                note.append(f"you need {minimum[d - 1]}+")
            board.add_row(str(d), *counts, ", ".join(note))
        console.print(board)
        seats = Table()
        for column in ("seat", "name", "hand", "box", "points", "districts", "dealt"):
            seats.add_column(column)
        for s in range(n):
            name = (
                names[s]
                + (" (you)" if s == seat and names[s] != "you" else "")
                + (" forfeited" if view["forfeited"][s] else "")
            )
            seats.add_row(
                str(s),
                name,
                str(view["hands"][s]),
                str(view["box"][s]),
                str(view["points"][s]),
                str(view["controlled"][s]),
                " ".join(map(str, view["dealt"][s])),
            )
        console.print(seats)
        console.print(
            f"cards revealed this round: {revealed or 'none'}; {view['pile_left']} left in the pile; "
            f"last raid: {view['last_raid'] or 'none'}; to win: {view['target_districts']} districts "
            f"or {view['target_points']} points",
            highlight=False,
        )

    def prompt(self, request: dict[str, Any]) -> str:
        limits = request["constraints"]
        most = limits["max_districts"]
        return (
            f"place up to {most} district{'s' if most > 1 else ''} from your hand of {limits['hand']}, "
            f"as district:count (e.g. {'7:3 11:2' if most > 1 else '7:3'}; - for none)"
        )

    def help(self, request: dict[str, Any]) -> str:
        return (
            "Write each placement as district:count, separated by spaces: '7:3 11:2' puts 3 mafiosi into\n"
            "district 7 and 2 into district 11. '-' (or nothing) places none. Turn 0 of a round allows one\n"
            "district, later turns two (P1, P2). A district held alone by another seat needs at least as many\n"
            "as it holds there (P4, shown as 'you need N+')."
        )

    def parse(self, text: str, request: dict[str, Any]) -> dict[str, Any]:
        placements = []
        if text not in ("", "-"):
            for item in text.replace(",", " ").split():
                district, sep, count = item.partition(":")
                if not sep or not district.isdigit() or not count.isdigit():
                    raise IllegalEntry("P1", f"{item!r} is not district:count, e.g. 7:3")
                placements.append(Placement(int(district), int(count)))
        action = Place(sorted(placements, key=lambda p: p.district))
        # The engine itself judges the entry, on a copy of the position this seat sees.
        state = VendettaState.from_view(msgspec.convert(request["view"], VendettaView), SeededChance(0), self.rules)
        try:
            state.apply(request["view"]["seat"], action)
        except IllegalAction as exc:
            raise IllegalEntry(exc.rule_id, exc.detail) from None
        return msgspec.to_builtins(action)  # type: ignore[no-any-return]
