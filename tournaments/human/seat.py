"""The human seat: requests drawn with Rich, answers typed at the terminal.

The seat answers ``start`` with ``ready`` at once and each ``request`` with the
action the person typed, read by the game's screen (``GameRules.screen()``). An
entry the screen refuses is refused here, with the rule id and message, and
asked again: it never reaches the referee, so it never costs the seat its game.
(The built-in games' screens judge an entry with the engine; the generic screen
of a plug-in takes an option's number, or checks only the shape of an action
typed as JSON and leaves its legality to the referee, as for a bot's.)
``q`` resigns after a confirmation (the seat forfeits, recorded as the
termination ``resigned``; so does the end of input). The seat has no clock
(``untimed``): the referee waits for a person as long as it takes.

Input is read in a worker thread so the referee's Trio loop (and the bots'
processes) stay responsive while the person thinks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio
from rich.console import Console

from referee.channel import InProcessSeat
from referee.errors import BotResigned
from referee.games import get_rules
from referee.games.screen import GameScreen, IllegalEntry
from tournaments.hosting.markup import NAME_CHARS, shown

__all__ = ["HumanSeat", "Resign"]

HELP_COMMON = "Type ? for this help, q to resign (asks first)."


class Resign(Exception):
    """The person confirmed ``q``."""


class HumanSeat(InProcessSeat):
    """A seat played by the person at this terminal."""

    untimed = True

    def __init__(self, name: str, console: Console, read: Callable[[str], str] = input) -> None:
        super().__init__(name)
        self.console = console
        self.read = read
        self.names: list[str] = []
        self.seat = 0
        self.screen: GameScreen | None = None
        self.resigned = ""
        """Why the person left the game ("" while they play): the termination's reason."""

    async def readline(self) -> bytes:
        line = await super().readline()
        if self.resigned:
            raise BotResigned(self.resigned)
        return line

    async def ask(self, prompt: str) -> str:
        """One line typed by the person; end of input (Ctrl-D, a closed terminal) is a resignation."""
        try:
            text: str = await trio.to_thread.run_sync(self.read, prompt, abandon_on_cancel=True)
        except EOFError:
            return "\x04"
        return text.strip()

    async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
        kind = message.get("type")
        if kind == "start":
            # The names are the bots' own (bot.toml) and are only ever drawn: kept
            # as shown text from here, the screens can put them in any line or table.
            self.names = [shown(str(name), NAME_CHARS) for name in message["names"]]
            self.seat = int(message["seat"])
            self.screen = get_rules(str(message["game"])).screen()
            self.console.rule(f"{message['game']}: you are seat {self.seat} of {message['players']}")
            return {"type": "ready", "name": self.name}
        screen = self.screen
        if screen is None:
            return None
        if kind == "rejected":
            self.console.print(f"[red]refused by the referee[/]: {shown(str(message['message']))}", highlight=False)
            return None
        if kind == "end":
            self.show_events(message.get("events", []))
            self.console.rule("game over")
            return None
        if kind != "request":
            return None
        self.show_events(message.get("events", []))
        screen.draw(self.console, message, self.names)
        while True:
            text = await self.ask(screen.prompt(message) + "> ")
            if text == "\x04":
                self.console.print("end of input: you leave the game (your seat forfeits)", highlight=False)
                self.resigned = "resigned at the terminal: its input ended"
                return {"type": "log", "message": "left: end of input"}
            if text == "?":
                self.console.print(screen.help(message) + "\n" + HELP_COMMON, highlight=False)
                continue
            if text.lower() == "q":
                sure = await self.ask("Resign this game? Your seat forfeits. Type yes to confirm> ")
                if sure.lower() in ("y", "yes", "\x04"):
                    self.resigned = "resigned at the terminal"
                    return {"type": "log", "message": "resigned"}
                continue
            try:
                action = screen.parse(text, message)
            except IllegalEntry as exc:
                # The engine's message may quote the entry, which is text too.
                self.console.print(f"[red]not legal[/] {shown(str(exc))}  (type ? for help)", highlight=False)
                continue
            return {"type": "action", "id": message["id"], "action": action}

    def show_events(self, events: list[dict[str, Any]]) -> None:
        screen = self.screen
        if not events or screen is None:
            return
        self.console.print("[bold]since your last turn:[/]")
        for event in events:
            self.console.print("  " + screen.describe_event(event, self.names), highlight=False)
