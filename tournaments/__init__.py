"""Tournaments: schedules, executors, the SQLite store, ratings, reports and the CLI."""
