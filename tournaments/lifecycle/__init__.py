"""A tournament's store through its life: begun, resumed, grown, and opened for a run.

- ``plan``: the full list of games a tournament file asks for, dealt with the store's key (a store begins with it).
- ``growth``: what a changed file may add to a stored tournament, and the games it adds.
- ``versions``: each entrant's bot pinned by the content of its code, and the version it plays as.
- ``opening``: a store begun, resumed or grown for a file, and readied for a run.

Nothing is gathered here: each caller imports the module it needs.
"""
