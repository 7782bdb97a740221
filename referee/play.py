"""Play one match between bot programs: start them, referee, stop them.

This is what ``famiglia play`` calls. Every bot process is owned by this
function's context stack: when it returns or raises (Ctrl-C included), every
bot and its process group are gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path

from referee.bots import BotSpec
from referee.build import build_bot, check_sandbox_view
from referee.errors import BotError
from referee.games import get_rules
from referee.match import BotChannel, MatchRecord, MatchSpec, run_match
from referee.private import make_private_dirs, write_private
from referee.process import open_bot
from referee.settings import DEFAULT_SETTINGS, RefereeSettings

__all__ = ["DeadBot", "check_table", "play_match", "prepare_bots", "save_stderr"]


class DeadBot:
    """A seat whose bot could not be started: every call fails with the start error."""

    def __init__(self, name: str, error: BotError) -> None:
        self._name = name
        self.error = error

    @property
    def name(self) -> str:
        return self._name

    async def send(self, data: bytes) -> None:
        raise self.error

    async def readline(self) -> bytes:
        raise self.error

    async def kill(self) -> None:
        return None

    def stderr_text(self) -> str:
        return ""


def prepare_bots(specs: Sequence[BotSpec], settings: RefereeSettings = DEFAULT_SETTINGS) -> list[BotSpec]:
    """Run each distinct bot's build command once, in its sandbox; the specs ready to start.

    BotBuildFailed when a build fails; BotSpecError when a bot could not read
    its own files at its sandbox level.
    """
    built: dict[tuple[str, str], BotSpec] = {}
    ready = []
    for spec in specs:
        key = (spec.cwd, " ".join(spec.command))
        if key not in built:
            built[key] = build_bot(spec, settings)
            check_sandbox_view(built[key], settings)
        ready.append(built[key])
    return ready


def check_table(game: str, variants: dict[str, str], players: int) -> None:
    """ValueError for an unknown game or variant or a table size the game does not allow."""
    rules = get_rules(game)
    rules.config(variants)
    if not rules.min_players <= players <= rules.max_players:
        raise ValueError(
            f"{game} is played by {rules.min_players} to {rules.max_players} bots; "
            f"{players} {'was' if players == 1 else 'were'} given"
        )


async def play_match(
    spec: MatchSpec,
    bots: Sequence[BotSpec | BotChannel],
    settings: RefereeSettings = DEFAULT_SETTINGS,
    *,
    replay_path: Path | None = None,
    stderr_dir: Path | None = None,
) -> MatchRecord:
    """Start ``bots`` (seat order), play ``spec``, stop them; the match record.

    Each bot's stderr (the last ``settings.stderr_bytes``) is written beside the
    replay as ``<replay>.seat<N>.stderr`` when there is a replay path. A seat
    given as a ready ``BotChannel`` (a person: tournaments.human) is used as it is.
    """
    check_table(spec.game, spec.variants, len(bots))
    async with AsyncExitStack() as stack:
        channels: list[BotChannel] = []
        for bot in bots:
            if not isinstance(bot, BotSpec):
                channels.append(bot)
                continue
            try:
                channels.append(await stack.enter_async_context(open_bot(bot, settings)))
            except BotError as error:
                channels.append(DeadBot(bot.name, error))
        commands = [bot.command if isinstance(bot, BotSpec) else [bot.name] for bot in bots]
        record = await run_match(spec, channels, settings, replay_path=replay_path, commands=commands)
    # The bots are stopped now, so their stderr is complete.
    if replay_path is not None:
        save_stderr(replay_path, channels, stderr_dir)
    return record


def save_stderr(replay_path: Path, channels: Sequence[BotChannel], folder: Path | None = None) -> None:
    """Each seat's kept stderr beside the replay, as ``<replay>.seat<N>.stderr``, readable by the host only.

    A file of that name is replaced: the replay it sits beside was just
    written by this match (replays are never overwritten), so it is a leftover
    of an earlier attempt at the same path.
    """
    folder = folder or replay_path.parent
    for seat, channel in enumerate(channels):
        text = channel.stderr_text()
        if text:
            make_private_dirs(folder)
            write_private(folder / f"{replay_path.name}.seat{seat}.stderr", text.encode("utf-8", "replace"))
