"""A person at the terminal as a seat of a match (``famiglia play vendetta human ...``).

``seat.HumanSeat`` speaks the protocol in-process, so the referee plays it
through the same code path as a bot; ``vendetta`` and ``sicilianos`` draw what
the seat knows and read its decisions in a short notation.
"""
