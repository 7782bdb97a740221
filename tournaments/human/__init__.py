"""A person at the terminal as a seat of a match (``famiglia play vendetta human ...``).

``seat.HumanSeat`` speaks the protocol in-process, so the referee plays it
through the same code path as a bot. What it draws and how it reads an entry
is the game's own screen (``GameRules.screen()``, referee.games.screen), so it
seats a person at any registered game.
"""

__all__ = ["HUMAN"]

HUMAN = "human"
"""The word that puts the person at this terminal in a seat of ``famiglia play`` (any number of seats).

Nothing else seats a person: a tournament's entrant and ``check-bot`` take bots
(``tournaments.config.bot_names`` says so to a host who gives this word there).
"""
