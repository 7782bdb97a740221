"""The tournament file: TOML, read into a ``TournamentConfig`` or a list of problems.

A bad file is reported all at once, one line per problem naming the key and what
is wrong with it, before anything is started::

    [tournament]
    name = "club night"
    game = "vendetta"            # vendetta | sicilianos
    format = "round-robin"       # round-robin | gauntlet | head-to-head
    table_size = 4               # or table_sizes = [3, 4]
    games_per_entrant = 24       # or repetitions = 2 (whole round-robins)
    seed = 1
    concurrency = 4              # games at once, in total (spread over the workers)
    workers = 2                  # worker processes (default: the number of cores)
    replays = "replays"          # folder, relative to this file
    illegal_action = "forfeit"   # or "pass"
    reuse_processes = true       # keep bot processes warm between games
    sandbox = "standard"         # none | standard | strict (bubblewrap); docs/sandbox.md

    [tournament.variants]        # the game's rules variants, as text
    control = "majority"
    round_limit = "15"

    [tournament.time]            # milliseconds
    move_ms = 1000
    bank_ms = 5000
    startup_ms = 10000
    margin_ms = 50               # the harness's allowance on every deadline (not told to bots)
    game_wall_ms = 0             # a limit on one whole game; 0: none beyond the clocks above

    [tournament.limits]          # per bot process, standard and strict sandboxes; 0: no limit
    memory_mb = 2048
    memory_kind = "auto"         # auto | as | data (auto: data for the JVM, Node, Go, ...)
    cpu_s = 600
    open_files = 256
    file_mb = 64
    processes = 128
    tmp_mb = 64                  # the private /tmp of the strict sandbox

    [tournament.executor]        # who plays the games; docs/distributed.md
    kind = "local"               # local (this machine) | dask (a Dask cluster)
    scheduler = "tcp://HOST:8786"  # the Dask scheduler (--scheduler wins)

    [[entrant]]
    name = "greedy"
    bot = "../sample_bots/greedy_py"   # a folder with bot.toml, or a command line

Gauntlet: ``hero = "name"``. Head-to-head: ``a``, ``b``, and optionally
``elo0``, ``elo1``, ``alpha``, ``beta``, ``max_games``.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import msgspec

from protocol.messages import TimeControl
from referee.bots import BotSpec, BotSpecError, load_bot
from referee.games import GAME_NAMES, get_rules
from referee.games.base import UnknownVariant
from referee.sandbox import SandboxUnavailable, require_level
from referee.settings import DEFAULT_MARGIN_MS, BotLimits, SandboxLevel
from tournaments.sanity import (
    MAX_CONCURRENCY,
    MAX_GAMES,
    MAX_WORKERS,
    count_problem,
    folder_problem,
    limit_problem,
    time_problem,
)
from tournaments.schedule import tables_for_games_per_entrant, williams_design

__all__ = ["ConfigProblems", "Entrant", "ExecutorSettings", "TournamentConfig", "load_tournament", "parse_tournament"]

Format = Literal["round-robin", "gauntlet", "head-to-head"]
FORMATS: tuple[Format, ...] = ("round-robin", "gauntlet", "head-to-head")


def unknown_key(where: str, key: str, known: Iterable[str]) -> str:
    """The problem line for an unknown key: a "did you mean" when one is close, and the keys allowed."""
    known = sorted(known)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{where}: unknown key{hint} (expected one of {', '.join(known)})"


class ConfigProblems(ValueError):
    """A tournament file with one or more problems; ``problems`` has one line each."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(f"{source}: {problem}" for problem in problems))


class Entrant(msgspec.Struct, frozen=True, kw_only=True):
    """One competitor: a name and how to start its bot."""

    name: str
    bot: BotSpec


class ExecutorSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Who plays the games: this machine, or a Dask cluster (``[tournament.executor]``)."""

    kind: Literal["local", "dask"] = "local"
    scheduler: str | None = None
    """The Dask scheduler's address, tcp://HOST:8786."""


class TournamentConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A whole tournament, validated."""

    name: str
    game: str
    format: Format
    table_sizes: list[int]
    entrants: list[Entrant]
    variants: dict[str, str] = {}
    games_per_entrant: int | None = None
    repetitions: int = 1
    seed: int = 0
    concurrency: int = 4
    workers: int = 0
    replays: str | None = None
    illegal_action: Literal["forfeit", "pass"] = "forfeit"
    time: TimeControl = TimeControl()
    hero: str | None = None
    a: str | None = None
    b: str | None = None
    elo0: float = 0.0
    elo1: float = 50.0
    alpha: float = 0.05
    beta: float = 0.05
    max_games: int = 1000
    reuse_processes: bool = True
    sandbox: SandboxLevel = "standard"
    limits: BotLimits = BotLimits()
    margin_ms: int = DEFAULT_MARGIN_MS
    """Added to every deadline for the harness's own scheduling noise (referee-side; bots are not told)."""
    game_wall_ms: int = 0
    """A wall-clock limit on one whole game (0: none beyond the per-decision clocks)."""
    executor: ExecutorSettings = ExecutorSettings()
    """Where the games are played; not part of the fingerprint (a run may resume on another executor)."""

    def fingerprint(self) -> str:
        """A hash of what decides the schedule and the games, to refuse a mismatched resume."""
        essentials = msgspec.structs.replace(
            self, concurrency=0, workers=0, replays=None, reuse_processes=True, executor=ExecutorSettings()
        )
        fields = msgspec.to_builtins(essentials)
        # Fields added after the first release count only when set, so a store
        # begun before they existed still resumes under the same settings.
        for key, default in _LATER_FIELDS.items():
            if fields.get(key) == default:
                del fields[key]
        return hashlib.sha256(msgspec.json.encode(fields)).hexdigest()[:16]


_LATER_FIELDS: dict[str, object] = {
    "margin_ms": DEFAULT_MARGIN_MS, "game_wall_ms": 0, "executor": msgspec.to_builtins(ExecutorSettings())
}  # fmt: skip


_TOURNAMENT_KEYS = {
    "name", "game", "format", "table_size", "table_sizes", "games_per_entrant", "repetitions", "seed",
    "concurrency", "workers", "replays", "illegal_action", "variants", "time", "hero", "a", "b",
    "elo0", "elo1", "alpha", "beta", "max_games", "reuse_processes", "sandbox", "limits", "executor",
}  # fmt: skip
_EXECUTOR_KEYS = {"kind", "scheduler"}
_TIME_KEYS = {"move_ms", "bank_ms", "startup_ms"}  # the bots' time control (protocol.messages.TimeControl)
_HARNESS_TIME_KEYS = {"margin_ms", "game_wall_ms"}  # the referee's own, not sent to bots
_LIMIT_KEYS = set(BotLimits.__struct_fields__)


def load_tournament(path: Path) -> TournamentConfig:
    """Read and validate a tournament file; ConfigProblems lists everything wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigProblems(str(path), ["no such file"]) from None
    except OSError as exc:
        raise ConfigProblems(str(path), [f"cannot read: {exc.strerror}"]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigProblems(str(path), [f"not valid TOML: {exc}"]) from None
    return parse_tournament(data, base=path.parent, source=str(path))


def _games_planned(
    fmt: str, n: int, sizes: list[int], per_entrant: int | None, repetitions: int, max_games: int
) -> int:
    """How many games the schedule will hold, counted without making it (it may be huge)."""
    if fmt == "head-to-head":
        return max_games
    total = 0
    for k in sizes:
        rows = len(williams_design(k))
        if fmt == "gauntlet":
            wanted = per_entrant or rows * math.comb(n - 1, k - 1)
            total += -(-wanted // rows) * rows
        elif per_entrant is not None:
            total += tables_for_games_per_entrant(n, k, per_entrant) * rows
        else:
            total += math.comb(n, k) * repetitions * rows
    return total


def parse_tournament(data: dict[str, Any], *, base: Path, source: str = "tournament") -> TournamentConfig:
    """Validate a decoded tournament file; relative paths are taken from ``base``."""
    problems: list[str] = []
    section = data.get("tournament")
    if not isinstance(section, dict):
        raise ConfigProblems(source, ["missing the [tournament] table"])
    for key in sorted(set(data) - {"tournament", "entrant"}):
        close = difflib.get_close_matches(key, ["tournament", "entrant"], n=1, cutoff=0.6)
        hint = f"; did you mean [{close[0]}]?" if close else ""
        problems.append(f"{key}: unknown top-level key{hint} (expected [tournament] and [[entrant]])")
    for key in sorted(set(section) - _TOURNAMENT_KEYS):
        problems.append(unknown_key(f"tournament.{key}", key, _TOURNAMENT_KEYS))

    def get(key: str, kind: type | tuple[type, ...], default: Any, *, positive: bool = False) -> Any:
        value = section.get(key, default)
        if value is default:
            return value
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            problems.append(f"tournament.{key}: expected {names}, got {value!r}")
            return default
        if positive and isinstance(value, int | float) and value <= 0:
            problems.append(f"tournament.{key}: must be positive, got {value}")
            return default
        return value

    name = get("name", str, "tournament")
    if not name.strip():
        problems.append("tournament.name: empty; give the tournament a name, or leave the key out")
    game = get("game", str, None)
    rules = None
    if game is None:
        problems.append(f"tournament.game: missing; choose one of {', '.join(GAME_NAMES)}")
    elif game not in GAME_NAMES:
        problems.append(f"tournament.game: unknown game {game!r}; choose one of {', '.join(GAME_NAMES)}")
    else:
        rules = get_rules(game)
    fmt = get("format", str, "round-robin")
    if fmt not in FORMATS:
        problems.append(f"tournament.format: {fmt!r} is not one of {', '.join(FORMATS)}")
        fmt = "round-robin"

    sizes: list[int] = []
    if "table_size" in section and "table_sizes" in section:
        problems.append("tournament.table_size: give table_size or table_sizes, not both")
    raw_sizes = section.get("table_sizes", [section["table_size"]] if "table_size" in section else None)
    if raw_sizes is None:
        problems.append("tournament.table_size: missing (how many bots sit at each table)")
    elif not isinstance(raw_sizes, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in raw_sizes):
        problems.append(f"tournament.table_sizes: expected a list of integers, got {raw_sizes!r}")
    elif not raw_sizes:
        problems.append("tournament.table_sizes: empty; give at least one table size")
    else:
        sizes = list(raw_sizes)
        for size in sorted({s for s in sizes if sizes.count(s) > 1}):
            problems.append(f"tournament.table_sizes: {size} is listed twice")
        if rules is not None:
            for size in sizes:
                if not rules.min_players <= size <= rules.max_players:
                    problems.append(
                        f"tournament.table_size: {game} tables seat {rules.min_players} to "
                        f"{rules.max_players}, not {size}"
                    )

    variants_raw = get("variants", dict, {})
    variants = {str(k): str(v) for k, v in variants_raw.items()}
    if rules is not None:
        try:
            rules.config(variants)
        except UnknownVariant as exc:
            problems.append(f"tournament.variants: {exc}")

    time_raw = get("time", dict, {})
    known_time = _TIME_KEYS | _HARNESS_TIME_KEYS
    for key in sorted(set(time_raw) - known_time):
        problems.append(unknown_key(f"tournament.time.{key}", key, known_time))
    time_values: dict[str, int] = {}
    for key in sorted(known_time & set(time_raw)):
        value = time_raw[key]
        if (problem := time_problem(key, value)) is not None:
            problems.append(f"tournament.time.{key}: {problem}")
        else:
            time_values[key] = value
    if time_values.get("game_wall_ms", 0) and time_values["game_wall_ms"] < time_values.get("startup_ms", 0):
        problems.append(
            f"tournament.time.game_wall_ms: {time_values['game_wall_ms']} ms is less than startup_ms "
            f"({time_values['startup_ms']}): a game could end before its bots start"
        )
    margin_ms = time_values.pop("margin_ms", DEFAULT_MARGIN_MS)
    game_wall_ms = time_values.pop("game_wall_ms", 0)

    games_per_entrant = get("games_per_entrant", int, None, positive=True)
    repetitions = get("repetitions", int, 1, positive=True)
    if games_per_entrant is not None and "repetitions" in section:
        problems.append("tournament.repetitions: give games_per_entrant or repetitions, not both")
    seed = get("seed", int, 0)
    concurrency = get("concurrency", int, 4, positive=True)
    if (problem := count_problem(concurrency, low=1, high=MAX_CONCURRENCY, what="games at once")) is not None:
        problems.append(f"tournament.concurrency: {problem}")
    workers = get("workers", int, 0)
    if (problem := count_problem(workers, low=0, high=MAX_WORKERS, what="(0: one per core)")) is not None:
        problems.append(f"tournament.workers: {problem}")
    replays = get("replays", str, None)
    if replays is not None and not replays.strip():
        problems.append("tournament.replays: empty; name a folder, or leave the key out to keep no replays")
        replays = None
    elif replays is not None and (problem := folder_problem(base / replays)) is not None:
        problems.append(f"tournament.replays: {problem}")
    illegal = get("illegal_action", str, "forfeit")
    if illegal not in ("forfeit", "pass"):
        problems.append(f"tournament.illegal_action: {illegal!r} is not forfeit or pass")
        illegal = "forfeit"

    entrants: list[Entrant] = []
    raw_entrants = data.get("entrant", [])
    if not isinstance(raw_entrants, list):
        problems.append("entrant: write each entrant as an [[entrant]] table")
        raw_entrants = []
    seen: set[str] = set()
    for number, raw in enumerate(raw_entrants, start=1):
        where = f"entrant {number}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a table with name and bot")
            continue
        for key in sorted(set(raw) - {"name", "bot"}):
            problems.append(unknown_key(f"{where}.{key}", key, ("name", "bot")))
        entrant_name = raw.get("name")
        bot_text = raw.get("bot")
        if not isinstance(entrant_name, str) or not entrant_name.strip():
            problems.append(f"{where}.name: missing or empty")
            continue
        where = f"entrant {entrant_name!r}"
        if entrant_name in seen:
            problems.append(f"{where}: the name is used twice")
        seen.add(entrant_name)
        if not isinstance(bot_text, str) or not bot_text.strip():
            problems.append(f"{where}.bot: missing (a folder with bot.toml, or a command line)")
            continue
        try:
            spec = load_bot(bot_text, base=base)
        except BotSpecError as exc:
            problems.append(f"{where}.bot: {exc}")
            continue
        entrants.append(Entrant(name=entrant_name, bot=msgspec.structs.replace(spec, name=entrant_name)))
    if len(raw_entrants) == 0:
        problems.append("entrant: no [[entrant]] tables; a tournament needs at least as many as a table seats")
    elif sizes and len(raw_entrants) < max(sizes) and fmt != "head-to-head":
        problems.append(f"entrant: {len(raw_entrants)} entrants cannot fill a table of {max(sizes)}")

    hero = get("hero", str, None)
    a = get("a", str, None)
    b = get("b", str, None)
    if fmt == "gauntlet":
        if hero is None:
            problems.append('tournament.hero: the gauntlet format needs hero = "<entrant name>"')
        elif hero not in seen:
            problems.append(f"tournament.hero: {hero!r} is not an entrant's name")
    if fmt == "head-to-head":
        for key, value in (("a", a), ("b", b)):
            if value is None:
                problems.append(f'tournament.{key}: the head-to-head format needs {key} = "<entrant name>"')
            elif value not in seen:
                problems.append(f"tournament.{key}: {value!r} is not an entrant's name")
        if a is not None and a == b:
            problems.append("tournament.b: a and b must be different entrants")
        if len(sizes) > 1:
            problems.append(f"tournament.table_sizes: a head-to-head plays at one table size, not {sizes}")
        elif sizes and len(raw_entrants) < sizes[0] + 1:
            problems.append(
                f"entrant: a head-to-head at tables of {sizes[0]} needs {sizes[0] + 1} entrants "
                f"(a, b and {sizes[0] - 1} opponents), not {len(raw_entrants)}"
            )
    elo0 = float(get("elo0", (int, float), 0.0))
    elo1 = float(get("elo1", (int, float), 50.0))
    for key, value in (("elo0", elo0), ("elo1", elo1)):
        if not math.isfinite(value) or abs(value) > 2000:
            problems.append(f"tournament.{key}: must be an Elo difference from -2000 to 2000, got {value:g}")
    if elo1 <= elo0:
        problems.append(f"tournament.elo1: must be above elo0 ({elo0:g}), got {elo1:g}")
    alpha = float(get("alpha", float, 0.05))
    beta = float(get("beta", float, 0.05))
    for key, value in (("alpha", alpha), ("beta", beta)):
        if not 0 < value < 0.5:
            problems.append(f"tournament.{key}: must be between 0 and 0.5, got {value:g}")
    max_games = get("max_games", int, 1000, positive=True)
    reuse_processes = get("reuse_processes", bool, True)
    sandbox = get("sandbox", str, "standard")
    try:
        sandbox = require_level(sandbox)
    except SandboxUnavailable as exc:
        problems.append(f"tournament.sandbox: {exc}")
        sandbox = "standard"
    limits_raw = get("limits", dict, {})
    for key in sorted(set(limits_raw) - _LIMIT_KEYS):
        problems.append(unknown_key(f"tournament.limits.{key}", key, _LIMIT_KEYS))
    limit_values: dict[str, Any] = {}
    for key in sorted(_LIMIT_KEYS & set(limits_raw)):
        value = limits_raw[key]
        if key == "memory_kind":
            if value not in ("auto", "as", "data"):
                problems.append(f"tournament.limits.memory_kind: expected auto, as or data, got {value!r}")
            else:
                limit_values[key] = value
        elif (problem := limit_problem(key, value)) is not None:
            problems.append(f"tournament.limits.{key}: {problem}")
        else:
            limit_values[key] = value
    total = 0 if problems else _games_planned(fmt, len(entrants), sizes, games_per_entrant, repetitions, max_games)
    if total > MAX_GAMES:
        problems.append(
            f"tournament: this schedule has {total:,} games, more than the {MAX_GAMES:,} one store holds; "
            "give fewer games_per_entrant or repetitions (games_per_entrant picks balanced tables "
            "instead of every possible one)"
        )

    executor = _parse_executor(get("executor", dict, {}), problems)

    if problems:
        raise ConfigProblems(source, problems)
    return TournamentConfig(
        name=name,
        game=game,
        format=fmt,
        table_sizes=sizes,
        entrants=entrants,
        variants=variants,
        games_per_entrant=games_per_entrant,
        repetitions=repetitions,
        seed=seed,
        concurrency=concurrency,
        workers=workers,
        replays=str((base / replays).resolve()) if replays else None,
        illegal_action=illegal,
        time=TimeControl(**time_values),
        hero=hero,
        a=a,
        b=b,
        elo0=elo0,
        elo1=elo1,
        alpha=alpha,
        beta=beta,
        max_games=max_games,
        reuse_processes=reuse_processes,
        sandbox=sandbox,
        limits=BotLimits(**limit_values),
        margin_ms=margin_ms,
        game_wall_ms=game_wall_ms,
        executor=executor,
    )


def _parse_executor(raw: dict[str, Any], problems: list[str]) -> ExecutorSettings:
    """The ``[tournament.executor]`` table; its problems are added to ``problems``."""
    for key in sorted(set(raw) - _EXECUTOR_KEYS):
        problems.append(unknown_key(f"tournament.executor.{key}", key, _EXECUTOR_KEYS))
    kind = raw.get("kind", "local")
    if kind not in ("local", "dask"):
        problems.append(f"tournament.executor.kind: {kind!r} is not local or dask")
        kind = "local"
    scheduler = raw.get("scheduler")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        problems.append(f'tournament.executor.scheduler: expected an address like "tcp://HOST:8786", got {scheduler!r}')
        scheduler = None
    return ExecutorSettings(kind=kind, scheduler=scheduler)
