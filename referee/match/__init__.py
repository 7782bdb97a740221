"""One match: the referee's conversation with the seats, its clocks, its reading of their lines, its record.

- ``conversation``: ``run_match``: greet every seat, ask for each decision and
  apply it, time a seat out, tell everyone the result.
- ``values``: what a match takes and gives (``MatchSpec``, ``MatchRecord``, ``SeatTiming``).
- ``clock``: each request's deadline, the watchdog that keeps it, what a decision costs.
- ``intake``: a seat's lines, read and judged, with the quick-answer polls and the fair slice.
- ``recorder``: the replay, written as the game is played.

The modules stack one way: recorder <- intake, clock <- conversation; values
stands alone. Nothing here imports this face.
"""

from referee.match.conversation import Replace, result_of, run_match
from referee.match.values import MatchRecord, MatchSpec, SeatTiming

__all__ = ["MatchRecord", "MatchSpec", "Replace", "SeatTiming", "result_of", "run_match"]
