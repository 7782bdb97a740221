"""Tournaments: the tournament file, its store, runs, reports and the CLI, on the hosting floor (``hosting``)."""
