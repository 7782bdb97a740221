"""Play one match between bot programs: seat them, referee, give the seats back.

``play_match`` is the one place a match is assembled: ``famiglia play`` calls
it, and so does every executor (``tournaments.hosting.executors``), wherever
it plays a tournament's or a ladder's game. Every bot process is owned by a seat
source (``referee.seats``): when the match returns or raises (Ctrl-C
included), a cold seat's bot and its process group are gone, and a warm one
is back in its pool or closed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.bots import BotBuildFailed, BotSpec, BotSpecError
from referee.build import build_bot, check_sandbox_view
from referee.channel import BotChannel
from referee.errors import BotError
from referee.games import get_rules
from referee.match import MatchRecord, MatchSpec, run_match
from referee.private import make_private_dirs, write_private
from referee.seats import WarmPool, cold_seats, warm_seats
from referee.settings import DEFAULT_SETTINGS, RefereeSettings

__all__ = ["check_table", "play_match", "prepare_bots", "prepare_entrants", "save_stderr"]


def prepare_bots(specs: Sequence[BotSpec], settings: RefereeSettings = DEFAULT_SETTINGS) -> list[BotSpec]:
    """Run each distinct bot's build command once, in its sandbox; the specs ready to start.

    BotBuildFailed when a build fails; BotSpecError when a bot could not read
    its own files at its sandbox level.
    """
    ready, failed = prepare_entrants(specs, settings)
    for error in failed.values():
        raise error
    return ready


def prepare_entrants(
    specs: Sequence[BotSpec], settings: RefereeSettings = DEFAULT_SETTINGS
) -> tuple[list[BotSpec], dict[int, BotBuildFailed | BotSpecError]]:
    """Each distinct bot built once, in its sandbox: the specs ready to start, and why the others cannot.

    An entrant whose build fails, or whose files its sandbox could not show it,
    is in the second value (by index) with its error; its spec stays as given.
    One entrant's failure is its own: the others are built all the same.
    """
    built: dict[tuple[str, str], BotSpec | BotBuildFailed | BotSpecError] = {}
    ready: list[BotSpec] = []
    failed: dict[int, BotBuildFailed | BotSpecError] = {}
    for index, spec in enumerate(specs):
        key = (spec.cwd, " ".join(spec.command))
        if key not in built:
            try:
                made = build_bot(spec, settings)
                check_sandbox_view(made, settings)
                built[key] = made
            except (BotBuildFailed, BotSpecError) as exc:
                built[key] = exc
        outcome = built[key]
        if isinstance(outcome, BotSpec):
            ready.append(outcome)
        else:
            ready.append(spec)
            failed[index] = outcome
    return ready, failed


def check_table(game: str, variants: dict[str, str], players: int) -> None:
    """ValueError for an unknown game or variant or a table size the game does not allow."""
    rules = get_rules(game)
    rules.config(variants)
    rules.check_table(players)


async def play_match(
    spec: MatchSpec,
    bots: Sequence[BotSpec | BotChannel],
    settings: RefereeSettings = DEFAULT_SETTINGS,
    *,
    pool: WarmPool | None = None,
    replay_path: Path | None = None,
    stderr_dir: Path | None = None,
    unavailable: Mapping[int, BotError] | None = None,
) -> MatchRecord:
    """Seat ``bots`` (seat order), play ``spec``, give the seats back; the match record.

    The one place a match is put together, for ``famiglia play`` and every
    tournament executor alike. Seats come from ``pool`` when one is given
    (warm processes, reused across games), else each ``BotSpec`` is started
    for this game and stopped after it. A seat given as a ready ``BotChannel``
    (a person: tournaments.human) is used as it is. ``unavailable``: seats (by
    index) whose bot cannot start here, with the error they fail with.

    Each bot's stderr (the last ``settings.stderr_bytes``) is written beside the
    replay as ``<replay>.seat<N>.stderr`` when there is a replay path.
    """
    check_table(spec.game, spec.variants, len(bots))
    dead = unavailable or {}
    seats = cold_seats(bots, settings, dead) if pool is None else warm_seats(bots, pool, dead, deal=spec.seed)
    commands = [bot.command if isinstance(bot, BotSpec) else [bot.name] for bot in bots]
    async with seats as seated:
        record = await run_match(
            spec, seated.channels, settings, replay_path=replay_path, commands=commands, replace=seated.replace
        )
    if replay_path is not None:
        save_stderr(replay_path, seated.stderr, stderr_dir)
    return record


def save_stderr(replay_path: Path, stderr: Sequence[str], folder: Path | None = None) -> None:
    """Each seat's kept stderr beside the replay, as ``<replay>.seat<N>.stderr``, readable by the host only.

    A file of that name is replaced: the replay it sits beside was just
    written by this match (replays are never overwritten), so it is a leftover
    of an earlier attempt at the same path.
    """
    folder = folder or replay_path.parent
    for seat, text in enumerate(stderr):
        if text:
            make_private_dirs(folder)
            write_private(folder / f"{replay_path.name}.seat{seat}.stderr", text.encode("utf-8", "replace"))
