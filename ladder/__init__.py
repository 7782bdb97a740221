"""The ladder: a server that takes bot submissions, plays them continuously and shows the standings.

The floor above ``tournaments``: it plays its games with the referee and
rates them with the tournaments' ratings, and adds a store of its own
(entrants, versions, games), submission intake, a match loop and a web app.
"""
