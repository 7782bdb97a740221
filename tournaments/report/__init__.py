"""What a results database says, for people: standings, figures, charts, the page and a page per game.

- ``standings``: the final standings, crosstable and game list read from a store.
- ``status``: whether games are left to play, in the words every command uses.
- ``figures``: the series the page draws (ratings over time, thinking times).
- ``charts``: those series and the standings as SVG shapes.
- ``page``: the HTML page of a tournament.
- ``game_pages``: the viewer page of each game, written beside the page.
- ``writer``: the whole report written to disk, as ``famiglia report`` asks.

Nothing is gathered here: each caller imports the module it needs (the ratings fit
brings numpy and scipy, the page Jinja).
"""
