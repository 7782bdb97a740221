"""Sicilianos at the terminal: the seat's hand, the others' card backs, money, businesses, piles; options by number.

``SicilianosRules.screen()`` gives it to the human seat (tournaments.human).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from referee.games.screen import IllegalEntry
from referee.games.sicilianos.state import DECISION_RULES

__all__ = ["SicilianosScreen", "describe_option"]


def _card(item: dict[str, Any]) -> str:
    value = item.get("value")
    return f"{item['colour']} {value if value is not None else '?'}"


def describe_option(option: dict[str, Any]) -> str:
    """One option in words: 'war with blue 5, stake 5000'."""
    kind = str(option["type"])
    if kind in ("draw", "inspect"):
        return f"{'draw the top card of' if kind == 'draw' else 'look through'} the {option['colour']} pile"
    if kind in ("war", "join"):
        return f"{'start a war' if kind == 'war' else 'join'} with {_card(option)}, stake {option['note']}"
    if kind == "play":
        return f"play {_card(option)}"
    if kind == "explode":
        return f"explode the bomb at {_card(option)}"
    if kind == "steal":
        return f"steal a {option['colour']} card from seat {option['target']}"
    if kind in ("pick", "give"):
        return f"{kind} the card of value {option['value']}"
    if kind == "spoils":
        return f"take the {option['take']}"
    if kind == "business":
        return f"take the {option['kind']}"
    return kind.replace("_", " ")


class SicilianosScreen:
    """Draws a Sicilianos view and reads the number of an option."""

    def describe_event(self, event: dict[str, Any], names: list[str]) -> str:
        kind = event.get("type", "?")
        seat = event.get("seat")
        who = f"{names[seat]} (seat {seat})" if isinstance(seat, int) else ""
        if kind == "drew":
            return f"{who} drew {_card(event)} ({event['source']})"
        if kind == "rolled":
            return f"{who} rolled {' and '.join(event['colours'])}: {event['action']}"
        if kind == "stole":
            return f"seat {event['thief']} stole {_card(event)} from seat {event['victim']}"
        if kind in ("war_started", "joined"):
            verb = "started a war" if kind == "war_started" else "joined the war"
            return f"{who} {verb} with {_card(event)}, stake {event['note']}"
        if kind == "revealed":
            return "cards revealed: " + ", ".join(f"seat {c['seat']} {_card(c)}" for c in event["cards"])
        if kind == "war_resolved":
            return f"war over: {event['winning_colour'] or 'no'} family wins, winners {event['winners']}"
        if kind == "game_ended":
            return f"game over ({event['ended_by']}): scores {event['scores']}"
        fields = ", ".join(f"{key} {value}" for key, value in event.items() if key not in ("type", "seat"))
        return f"{who} {kind.replace('_', ' ')}{': ' + fields if fields else ''}".strip()

    def draw(self, console: Console, request: dict[str, Any], names: list[str]) -> None:
        view = request["view"]
        seat = view["seat"]
        console.print(
            f"[bold]turn {view['turns']} of {view['turn_limit']}, decision {request['decision']}[/]; "
            f"your hand: {', '.join(_card(c) for c in view['hand']) or 'empty'}",
            highlight=False,
        )
        table = Table()
        for column in ("seat", "name", "cards (backs)", "dirty notes", "clean", "businesses"):
            table.add_column(column)
        for player in view["players"]:
            s = player["seat"]
            businesses = ", ".join(f"{b['colour']} {b['kind'] or '?'}" for b in player["businesses"]) or "-"
            table.add_row(
                str(s),
                names[s]
                + (" (you)" if s == seat and names[s] != "you" else "")
                + (" forfeited" if player["forfeited"] else ""),
                f"{player['hand_size']}: {' '.join(player['hand'])}",
                " ".join(map(str, player["notes"])) or "-",
                str(player["clean"]),
                businesses,
            )
        console.print(table)
        console.print(
            "piles: "
            + ", ".join(f"{c} {n}" for c, n in view["piles"].items())
            + "; businesses left: "
            + ", ".join(f"{c} {n}" for c, n in view["business_piles"].items()),
            highlight=False,
        )
        war = view.get("war")
        if war:
            for p in war["participants"]:
                cards = ", ".join(
                    _card(c) if not c["face_down"] or c["value"] is not None else "face down" for c in p["cards"]
                )
                console.print(
                    f"  war: seat {p['seat']} ({p['colour']} family) stake {p['stake']}, strength {p['strength']}: {cards}",
                    highlight=False,
                )
        for number, option in enumerate(request["options"] or [], 1):
            console.print(f"  {number:>2}) {describe_option(option)}", highlight=False)

    def prompt(self, request: dict[str, Any]) -> str:
        return f"choose an option by its number, 1 to {len(request['options'])} (e.g. 1)"

    def help(self, request: dict[str, Any]) -> str:
        return (
            "Type the number shown before the option you choose. The list holds every legal choice of this\n"
            f"'{request['decision']}' decision (rule {DECISION_RULES.get(request['decision'], '?')})."
        )

    def parse(self, text: str, request: dict[str, Any]) -> dict[str, Any]:
        options = request["options"] or []
        rule = DECISION_RULES.get(request["decision"], "T0")
        if not text.isdigit() or not 1 <= int(text) <= len(options):
            raise IllegalEntry(rule, f"{text!r} is not one of the {len(options)} options; type its number")
        option: dict[str, Any] = options[int(text) - 1]
        return option
