"""``famiglia check-bot``: does a bot follow the protocol, in every position the games can reach?

``seats`` holds the in-process seats (random opponents), ``forcing`` finds the
positions that make each decision kind happen, ``checks`` runs a bot through them
with the referee's own ``run_match`` and judges what it did.
"""
