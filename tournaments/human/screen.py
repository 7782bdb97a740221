"""What a game's terminal screen provides to the human seat, and how it refuses an entry.

Its own module so each game's screen (``tournaments.human.vendetta``,
``tournaments.human.sicilianos``) and the seat that picks one import it
without importing each other.
"""

from __future__ import annotations

from typing import Any, Protocol

from rich.console import Console

__all__ = ["GameScreen", "IllegalEntry"]


class GameScreen(Protocol):
    """How one game is drawn and typed: the parts that differ between games.

    ``names`` are the seats' names as the seat keeps them: already ``shown``
    (tournaments.cli.common), markup that prints a bot's chosen name literally, so
    a screen puts them into its lines and tables as they are and escapes nothing again.
    """

    def describe_event(self, event: dict[str, Any], names: list[str]) -> str: ...

    def draw(self, console: Console, request: dict[str, Any], names: list[str]) -> None: ...

    def prompt(self, request: dict[str, Any]) -> str:
        """The question, with an example of the notation."""
        ...

    def help(self, request: dict[str, Any]) -> str: ...

    def parse(self, text: str, request: dict[str, Any]) -> dict[str, Any]:
        """The action for ``text``; IllegalEntry (rule, message) when it is not legal."""
        ...


class IllegalEntry(ValueError):
    """An entry refused before it reaches the referee: the rule it breaks and why."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
