"""A ladder's TOML file: what is played, how, and the bounds on submissions; where its files live.

Everything a ladder writes sits beside its file, named after it: ``club.toml``
keeps its store in ``club.sqlite`` and its replays, uploads and unpacked bots
in ``club-data/``. So a ladder is moved or backed up as one folder.
"""

from __future__ import annotations

import datetime
import tomllib
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from protocol.messages import IllegalActionPolicy
from tournaments.hosting.settings import SandboxSection, TimeSection

__all__ = [
    "EXAMPLE",
    "ChallengeSection",
    "HealthSection",
    "LadderConfig",
    "LadderPaths",
    "NotificationSection",
    "RatingSection",
    "SeasonSection",
    "SubmissionSection",
    "load_ladder",
]


class SubmissionSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[ladder.submissions]``: the bounds every upload is held to."""

    max_bytes: Annotated[int, msgspec.Meta(ge=1024, le=256 << 20)] = 8 << 20
    max_files: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 2000
    max_unpacked_bytes: Annotated[int, msgspec.Meta(ge=1024, le=1 << 30)] = 64 << 20
    per_hour: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 6


class ChallengeSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[ladder.challenges]``: games an entrant asks for against chosen opponents."""

    per_hour: Annotated[int, msgspec.Meta(ge=0, le=1000)] = 2
    """Tables each entrant may ask for per hour (each played in all its seatings); 0 turns challenges off."""


class NotificationSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[ladder.notifications]``: the webhooks entrants may set (``ladder.webhooks``)."""

    webhooks: bool = True
    """Whether entrants may set a webhook the server calls when their versions are decided."""
    private_addresses: bool = False
    """Whether a webhook may reach loopback and private networks (a club on one network); never on the internet."""


class RatingSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[ladder.rating]``: the OpenSkill prior every new version starts from, and how often the fit runs."""

    prior_mu: float = 25.0
    prior_sigma: Annotated[float, msgspec.Meta(gt=0)] = 25.0 / 3
    fit_every: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 20
    """Refit the Plackett-Luce standings after this many finished games (and once at start); 0: never."""


class SeasonSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[ladder.season]``: when the season closes, and how its final is played (``ladder.final``)."""

    deadline: datetime.datetime | None = None
    """When submissions and challenges stop and versions freeze: a date-time with its zone; None: never."""
    final_games: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 60
    """Games each finalist plays in the final, over all its table sizes."""
    final_table_sizes: list[Annotated[int, msgspec.Meta(ge=2, le=6)]] = []
    """The final's table sizes; empty: the ladder's own."""


class HealthSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[ladder.health]``: when a version whose own games keep failing is suspended (``ladder.health``)."""

    window: Annotated[int, msgspec.Meta(ge=0, le=1000)] = 12
    """How many of a version's most recent games are looked at (0: never suspend)."""
    failed_fraction: Annotated[float, msgspec.Meta(gt=0, le=1)] = 0.5
    """Suspend once this fraction of ``window`` games (rounded up) ended by the version's own timeout,
    crash, illegal action or protocol error: with the defaults, its 6th such game among its last 12."""


class LadderConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[ladder]``: the whole ladder."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    game: str = "vendetta"
    variants: dict[str, str] = {}
    table_sizes: Annotated[list[Annotated[int, msgspec.Meta(ge=2, le=6)]], msgspec.Meta(min_length=1)] = msgspec.field(
        default_factory=lambda: [3]
    )
    concurrency: Annotated[int, msgspec.Meta(ge=1, le=256)] = 2
    checks_at_once: Annotated[int, msgspec.Meta(ge=1, le=64)] = 2
    """Submissions checked at the same time: one slow check does not hold the others' queue."""
    executor: Literal["local", "dask"] = "local"
    """Who plays the games: this process, or the Dask cluster at ``scheduler`` (--executor and --scheduler win)."""
    scheduler: str | None = None
    illegal_action: IllegalActionPolicy = "forfeit"
    time: TimeSection = TimeSection()
    sandbox: SandboxSection = SandboxSection()
    submissions: SubmissionSection = SubmissionSection()
    challenges: ChallengeSection = ChallengeSection()
    rating: RatingSection = RatingSection()
    health: HealthSection = HealthSection()
    notifications: NotificationSection = NotificationSection()
    season: SeasonSection = SeasonSection()


class _File(msgspec.Struct, forbid_unknown_fields=True):
    ladder: LadderConfig


class LadderPaths(msgspec.Struct, frozen=True, kw_only=True):
    """Where a ladder's files are: all beside its TOML file."""

    config: Path
    db: Path
    data: Path

    @classmethod
    def beside(cls, config: Path) -> LadderPaths:
        config = config.resolve()
        return cls(config=config, db=config.with_suffix(".sqlite"), data=config.with_name(config.stem + "-data"))

    @property
    def replays(self) -> Path:
        return self.data / "replays"

    @property
    def uploads(self) -> Path:
        return self.data / "uploads"

    @property
    def bots(self) -> Path:
        return self.data / "bots"


def load_ladder(path: Path) -> LadderConfig:
    """The ladder described by ``path``; ValueError with one line saying what to fix."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file; write one with: famiglia ladder init {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    try:
        config = msgspec.convert(tomllib.loads(text), _File).ladder
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    except msgspec.ValidationError as exc:
        raise ValueError(f"{path}: {str(exc).replace('$.', '')}") from None
    # Here and not in the declaration: the game decides what is valid (a plug-in's own variants and sizes).
    from referee.play import check_table

    deadline = config.season.deadline
    if deadline is not None and deadline.tzinfo is None:
        raise ValueError(
            f"{path}: season.deadline {deadline.isoformat()} has no zone; write it with one, "
            f"like {deadline.isoformat()}Z or {deadline.isoformat()}+02:00"
        )
    for size in {*config.table_sizes, *config.season.final_table_sizes}:
        try:
            check_table(config.game, config.variants, size)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    return config


EXAMPLE = """\
# A famiglia ladder: entrants submit bots, the server plays them without end.
# Start it with: famiglia ladder serve {file}
# Its store ({stem}.sqlite) and its replays, uploads and bots ({stem}-data/)
# are written beside this file.

[ladder]
name = "club ladder"
game = "vendetta"            # vendetta | sicilianos | an installed plug-in; fixed once served
table_sizes = [3]            # seats per table, played in turn; fixed once a game is played
concurrency = 2              # games at once
checks_at_once = 2           # submissions checked at once
executor = "local"           # local (this process) or dask (a Dask cluster, docs/ladder.md)
# scheduler = "tcp://HOST:8786"   # the Dask scheduler, for executor = "dask"
illegal_action = "forfeit"   # or "pass"

[ladder.variants]            # the game's variants (README.md lists them)
# round_limit = "30"

[ladder.time]                # each bot's clock, in milliseconds
startup_ms = 5000
move_ms = 1000
bank_ms = 10000

[ladder.sandbox]             # how bots and their builds are contained (docs/sandbox.md)
level = "standard"           # none | standard | strict

[ladder.sandbox.limits]      # per bot and build (docs/sandbox.md, "Limits and their defaults")
build_mb = 1024              # what a build may leave in its folder in all

[ladder.sandbox.replay]      # what a seat may put in a game's replay (log lines, rejected actions)
kb_per_decision = 64
kb_per_game = 1024

[ladder.submissions]         # bounds on every upload: hostile input
max_bytes = 8388608          # the packed archive
max_files = 2000             # entries in it
max_unpacked_bytes = 67108864
per_hour = 6                 # submissions per entrant per hour

[ladder.challenges]          # games an entrant asks for against opponents of their choice
per_hour = 2                 # tables per entrant per hour (0: none)

[ladder.rating]              # the OpenSkill prior of every new version
prior_mu = 25.0
prior_sigma = 8.333
fit_every = 20               # refit the Plackett-Luce standings every N games (0: never)

[ladder.season]              # a season's end and its final (docs/ladder.md, "Seasons and the final")
# deadline = 2027-03-31T18:00:00Z   # submissions, challenges and the ladder's tables stop; versions freeze
final_games = 60             # games each finalist plays in the final
# final_table_sizes = [3]    # default: table_sizes

[ladder.health]              # a version whose own games keep failing is suspended
window = 12                  # its most recent games looked at (0: never suspend)
failed_fraction = 0.5        # suspended once this share of the window ended by its own fault

[ladder.notifications]       # webhooks entrants may set (docs/ladder.md, "Webhooks")
webhooks = true
private_addresses = false    # true only for a club on one network
"""
