"""Which game player a ladder's server uses: the command line's choice over the ladder file's.

Apart from ``ladder.players`` because the Dask player builds on that module:
the choice imports both, neither imports the choice.
"""

from __future__ import annotations

from ladder.config import LadderConfig, LadderPaths
from ladder.players import GamePlayer, LocalPlayer
from tournaments.config.sections import referee_settings

__all__ = ["choose_player"]


def choose_player(config: LadderConfig, paths: LadderPaths, kind: str, scheduler: str | None) -> GamePlayer:
    """The player ``kind`` names (local or dask), ready to play; ValueError with one line when it cannot be.

    A Dask scheduler is reached now, before the server starts: one that does
    not answer, or has a worker running another famiglia, is said at once.
    """
    settings = referee_settings(config.time, config.sandbox, config.illegal_action)
    if kind == "local":
        return LocalPlayer(settings)
    if kind != "dask":
        raise ValueError(f"--executor {kind!r}: choose local or dask")
    if not scheduler:
        raise ValueError(
            "--executor dask needs the scheduler's address: --scheduler tcp://HOST:8786, "
            'or scheduler = "tcp://HOST:8786" in [ladder]'
        )
    try:
        from ladder.dask_player import DaskPlayer, ladder_plugin
    except ImportError:
        raise ValueError(
            "the dask executor needs the dask packages; install them with: pip install 'famiglia[dask]'"
        ) from None
    player = DaskPlayer(
        scheduler, plugin=ladder_plugin(paths.db), uploads=paths.uploads, replays=paths.replays, settings=settings
    )
    player.check_reachable()
    return player
