"""A game at the terminal: what the human seat asks of a game's screen, and the screen every game gets.

The human seat (tournaments.human) speaks the protocol for a person: it draws
each request with the game's screen and reads the person's entry through it.
A game brings its own screen through ``GameRules.screen()``; without one it
gets ``OptionsScreen``, which needs nothing from the game but its action type:
the seat's view as its fields, the options by number, and an action typed as
JSON where a decision lists no options.

Its own module, below the games: each game's screen and the seat import it,
and it imports neither (nor the engine base, which imports it lazily).
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec
from rich.console import Console
from rich.markup import escape

__all__ = ["GameScreen", "IllegalEntry", "OptionsScreen"]


class GameScreen(Protocol):
    """How one game is drawn and typed: the parts that differ between games.

    Every method gets the request as the seat received it (JSON builtins).
    ``names`` are the seats' names as the seat keeps them: already ``shown``
    (tournaments.cli.common), markup that prints a bot's chosen name literally, so
    a screen puts them into its lines and tables as they are and escapes nothing again.
    """

    def describe_event(self, event: dict[str, Any], names: list[str]) -> str:
        """One event in words, as markup (the names inside it are markup already)."""
        ...

    def draw(self, console: Console, request: dict[str, Any], names: list[str]) -> None:
        """Everything the seat needs to decide: its view, and the options if listed."""
        ...

    def prompt(self, request: dict[str, Any]) -> str:
        """The question, with an example of the notation: it ends with ``(e.g. ...)``."""
        ...

    def help(self, request: dict[str, Any]) -> str:
        """What ``?`` prints: how to write an entry for this decision."""
        ...

    def parse(self, text: str, request: dict[str, Any]) -> dict[str, Any]:
        """The action for ``text`` (JSON builtins); IllegalEntry (rule, message) when it is not legal."""
        ...


class IllegalEntry(ValueError):
    """An entry refused before it reaches the referee: the rule it breaks and why."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule


ENTRY_RULE = "entry"
"""The rule an entry breaks when the generic screen refuses it: the game's own rule ids are unknown here."""


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


class OptionsScreen:
    """The screen of a game that brings none: its view field by field, options by number, else JSON.

    An entry typed as JSON is read into the game's action type here, so a
    misspelt field is refused and asked again; whether the action is legal now
    is for the referee to judge, as for a bot (a game that wants its entries
    judged first brings its own screen).
    """

    def __init__(self, game: str, action_type: Any) -> None:
        self.game = game
        self.action_type = action_type

    def describe_event(self, event: dict[str, Any], names: list[str]) -> str:
        kind = str(event.get("type", "?"))
        seat = event.get("seat")
        who = f"{names[seat]} (seat {seat})" if isinstance(seat, int) and 0 <= seat < len(names) else ""
        fields = ", ".join(f"{key} {_json(value)}" for key, value in event.items() if key not in ("type", "seat"))
        # The fields are the engine's, but a plug-in's text may hold brackets: printed literally.
        return f"{who} {kind.replace('_', ' ')}{': ' + escape(fields) if fields else ''}".strip()

    def draw(self, console: Console, request: dict[str, Any], names: list[str]) -> None:
        view = request.get("view")
        console.print(f"[bold]{self.game}: decision {escape(str(request.get('decision')))}[/]", highlight=False)
        if isinstance(view, dict):
            for key, value in view.items():
                if key != "type":
                    console.print(f"  {key}: {_json(value)}", highlight=False, markup=False)
        else:
            console.print(f"  view: {_json(view)}", highlight=False, markup=False)
        options = request.get("options")
        if options:
            for number, option in enumerate(options, 1):
                console.print(f"  {number:>2}) {_json(option)}", highlight=False, markup=False)
        elif request.get("constraints") is not None:
            console.print(f"  constraints: {_json(request['constraints'])}", highlight=False, markup=False)

    def prompt(self, request: dict[str, Any]) -> str:
        options = request.get("options")
        if options:
            return f"choose an option by its number, 1 to {len(options)} (e.g. 1)"
        return f"type the action as one JSON object (e.g. {self._example()})"

    def help(self, request: dict[str, Any]) -> str:
        if request.get("options"):
            return (
                "Type the number shown before the option you choose. The list holds every legal choice of this\n"
                f"'{request.get('decision')}' decision."
            )
        return (
            f"This '{request.get('decision')}' decision lists no options: type the action as one JSON object, as a\n"
            f"bot would send it (e.g. {self._example()}), within the constraints shown. The referee judges it."
        )

    def parse(self, text: str, request: dict[str, Any]) -> dict[str, Any]:
        options = request.get("options")
        if options:
            if not text.isdigit() or not 1 <= int(text) <= len(options):
                raise IllegalEntry(ENTRY_RULE, f"{text!r} is not one of the {len(options)} options; type its number")
            chosen: dict[str, Any] = options[int(text) - 1]
            return chosen
        try:
            action = msgspec.json.decode(text, type=self.action_type)
        except msgspec.DecodeError as exc:
            raise IllegalEntry(ENTRY_RULE, f"{text!r} is not a {self.game} action: {exc}") from None
        built: dict[str, Any] = msgspec.to_builtins(action)
        return built

    def _example(self) -> str:
        """The smallest entry of the action type's first kind: ``{"type": "play"}``, say."""
        info = msgspec.inspect.type_info(self.action_type)
        kinds = info.types if isinstance(info, msgspec.inspect.UnionType) else (info,)
        for kind in kinds:
            if isinstance(kind, msgspec.inspect.StructType) and kind.tag_field is not None:
                return _json({kind.tag_field: kind.tag})
        return "{...}"
