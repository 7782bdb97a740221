"""A person at the terminal as a seat of a match (``famiglia play vendetta human ...``).

``seat.HumanSeat`` speaks the protocol in-process, so the referee plays it
through the same code path as a bot. What it draws and how it reads an entry
is the game's own screen (``GameRules.screen()``, referee.games.screen), so it
seats a person at any registered game.
"""
