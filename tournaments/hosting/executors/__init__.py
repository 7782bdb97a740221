"""Executors: what plays a tournament's games (``base.Executor``).

- ``inprocess``: Trio referees in this process, up to a number of games at once.
- ``processes``: worker processes on this machine, so every core referees.
- ``dask``: the workers of a Dask distributed cluster, past one machine.

This package's ``__init__`` imports nothing: a worker process started as
``python -m tournaments.hosting.executors.processes`` ignores Ctrl-C before any import.
"""
