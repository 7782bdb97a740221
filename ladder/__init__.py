"""The ladder: a server that takes bot submissions, plays them continuously and shows the standings.

It stands on the tournaments' hosting floor (``tournaments.hosting``): its
games are played by the same executors as a tournament's (in this process or
on a Dask cluster), rated with the same ratings, stored with the same SQLite
helper. It adds a store of its own (entrants, versions, games), the
submissions' checks (``submissions``), a match loop and a web app.
"""
