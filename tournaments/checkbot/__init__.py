"""``famiglia check-bot``: does a bot follow the protocol, in every position the games can reach?

``seats`` holds the random opponents, ``checks`` runs a bot through the games and
positions of any registered game with the referee's own ``run_match`` and judges
what it did. What is played comes from the game: its ``GameRules`` check-bot
hooks (the forced positions, found by referee.games.checkbot; the variant sets;
the doc section and fix for its illegal actions), so nothing here names a game.
"""
