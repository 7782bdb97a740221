"""The hosting floor: what any competition on the referee uses; the ladder imports only this floor.

- ``storage``: one SQLite file made the host's alone (0600), in WAL mode with a busy
  timeout, tightened again when opened up, and the one ``Transaction`` (BEGIN
  IMMEDIATE ... COMMIT, ROLLBACK on error). Under the tournament's results store
  (``tournaments.store``) and the ladder's store (``ladder.store``).
- ``faults``: which exceptions stop a run and which leave a game to be played again
  later: the one classification every executor and the ladder's players use.

A tournament is one competition on this floor, the ladder another; neither keeps a copy of it.
"""
