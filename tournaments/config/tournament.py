"""The tournament file: TOML, read into a ``TournamentConfig`` or a list of problems.

A bad file is reported all at once, one line per problem naming the key and what
is wrong with it, before anything is started. The settings come in sections,
each declared once in ``tournaments.hosting.settings`` (default, unit, range, meaning)::

    [tournament]
    name = "club night"
    game = "vendetta"            # vendetta | sicilianos
    seed = 1
    replays = "replays"          # folder, relative to this file (default: beside the results database; false: none)
    illegal_action = "forfeit"   # or "pass"

    [tournament.variants]        # the game's rules variants, as text
    control = "majority"

    [tournament.format]          # who meets whom
    kind = "round-robin"         # round-robin | gauntlet | head-to-head
    table_sizes = [4]
    games_per_entrant = 24       # or repetitions = 2 (whole round-robins)
    # gauntlet: hero = "name"; head-to-head: a, b, elo0, elo1, alpha, beta, max_games

    [tournament.time]            # milliseconds
    move_ms = 1000
    bank_ms = 5000
    startup_ms = 10000
    margin_ms = 50               # the harness's allowance on every deadline (not told to bots)
    game_wall_ms = 0             # a limit on one whole game; 0: none beyond the clocks above

    [tournament.sandbox]         # docs/sandbox.md
    level = "standard"           # none | standard | strict (bubblewrap)
    [tournament.sandbox.limits]  # per bot process, standard and strict; 0: no limit
    memory_mb = 2048
    cpu_s = 600

    [tournament.executor]        # who plays the games; docs/distributed.md
    kind = "local"               # local (this machine) | dask (a Dask cluster)
    concurrency = 4              # games at once, in total (spread over the workers)
    workers = 2                  # worker processes (default: the number of cores)
    reuse_processes = true       # keep bot processes warm between games

    [[entrant]]
    name = "greedy"
    bot = "../sample_bots/greedy_py"   # a folder with bot.toml, or a command line

The first spellings stay valid, and are what the README shows
(``tournaments.config.spellings`` moves each into its section); a problem with
one is reported under the name the file gave it.
"""

from __future__ import annotations

import codecs
import difflib
import hashlib
import json
import math
import os
import tomllib
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

from protocol.messages import IllegalActionPolicy
from referee.bots import BotSpec, BotSpecError
from referee.games import game_names, get_rules
from referee.games.base import UnknownVariant
from referee.sandbox import SandboxUnavailable, require_level
from referee.sandbox.runtimes import runtime_problem
from referee.settings import BotLimits
from tournaments.config.bot_names import load_named_bot
from tournaments.config.paths import folder_problem
from tournaments.config.spellings import MOVED, WORD_SECTIONS, first_name, upgrade
from tournaments.hosting.ranges import MAX_GAMES, scheduler_problem, seed_problem, value_problem
from tournaments.hosting.schedule import tables_for_games_per_entrant, williams_design
from tournaments.hosting.settings import (
    FORMAT_KEYS,
    ExecutorSection,
    FormatSection,
    SandboxSection,
    TimeSection,
)

__all__ = [
    "ConfigProblems",
    "Entrant",
    "TournamentConfig",
    "decode_stored",
    "flat_settings",
    "load_tournament",
    "parse_tournament",
]


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


class TournamentConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A whole tournament, validated: what it is, then one field per section of settings."""

    name: str = "tournament"
    game: str
    entrants: list[Entrant]
    variants: dict[str, str] = {}
    """The game's rules variants, as text."""
    seed: int = 0
    """The tournament's seed: with the store's deal key, it decides every deal."""
    replays: str | None = None
    """The folder the replays go to (absolute), or None to keep none."""
    illegal_action: IllegalActionPolicy = "forfeit"
    """What an illegal action costs: the game, or only this turn."""
    format: FormatSection
    time: TimeSection = TimeSection()
    sandbox: SandboxSection = SandboxSection()
    executor: ExecutorSection = ExecutorSection()
    """Where and how many at once the games are played; not part of the fingerprint (a run may resume elsewhere)."""

    def fingerprint(self) -> str:
        """A hash of what decides the schedule and the games, to refuse a mismatched resume.

        Hashed in the layout of the first release (``_first_layout``), so a
        store begun before the settings came in sections still resumes.
        """
        return hashlib.sha256(msgspec.json.encode(_first_layout(self))).hexdigest()[:16]


def _first_entrant(entrant: dict[str, Any]) -> dict[str, Any]:
    """An entrant as the first release hashed it: a bot's pin (``referee.pinning``) is a run's, never the file's."""
    entrant["bot"].pop("pin", None)
    return entrant


def _first_layout(config: TournamentConfig) -> dict[str, Any]:
    """What the fingerprint hashes: the settings that decide the games, flat, in the first release's order.

    The executor's settings (where, how many at once, warm or not) and the
    replay folder do not change a game, so they hash as fixed values. The
    margin and the game's wall limit came later: they count only when set, so
    a store begun before they existed resumes under the same settings.
    """
    fmt, time, sandbox = config.format, config.time, config.sandbox
    fields: dict[str, Any] = {
        "name": config.name,
        "game": config.game,
        "format": fmt.kind,
        "table_sizes": fmt.table_sizes,
        "entrants": [_first_entrant(entrant) for entrant in msgspec.to_builtins(config.entrants)],
        "variants": config.variants,
        "games_per_entrant": fmt.games_per_entrant,
        "repetitions": fmt.repetitions,
        "seed": config.seed,
        "concurrency": 0,
        "workers": 0,
        "replays": None,
        "illegal_action": config.illegal_action,
        "time": msgspec.to_builtins(time.control()),
        "hero": fmt.hero,
        "a": fmt.a,
        "b": fmt.b,
        "elo0": float(fmt.elo0),
        "elo1": float(fmt.elo1),
        "alpha": float(fmt.alpha),
        "beta": float(fmt.beta),
        "max_games": fmt.max_games,
        "reuse_processes": True,
        "sandbox": sandbox.level,
        "limits": _first_limits(sandbox.limits),
    }
    if time.margin_ms != TimeSection().margin_ms:
        fields["margin_ms"] = time.margin_ms
    if time.game_wall_ms != 0:
        fields["game_wall_ms"] = time.game_wall_ms
    return fields


def _first_limits(limits: BotLimits) -> dict[str, Any]:
    """The limits as the fingerprint hashes them: ``build_mb`` came later, and counts only when set."""
    fields: dict[str, Any] = msgspec.to_builtins(limits)
    if limits.build_mb == BotLimits().build_mb:
        del fields["build_mb"]
    return fields


_SECTIONS: dict[str, type[msgspec.Struct]] = {
    "format": FormatSection, "time": TimeSection, "sandbox": SandboxSection, "executor": ExecutorSection,
}  # fmt: skip
_TOURNAMENT_KEYS = {"name", "game", "variants", "seed", "replays", "illegal_action", *_SECTIONS}


MAX_FILE_BYTES = 16 * 2**20
"""The most of a tournament file read: far past any real one (entrants are a few lines each)."""


def load_tournament(path: Path, *, default_replays: Path | None = None) -> TournamentConfig:
    """Read and validate a tournament file; ConfigProblems lists everything wrong.

    ``default_replays``: as for ``parse_tournament``.
    """
    try:
        # At most a bound's worth: /dev/zero or an endless pipe given by mistake must not fill the memory.
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise ConfigProblems(
                str(path),
                [f"more than {MAX_FILE_BYTES // 2**20} MiB; a tournament file is a page of TOML: give that file"],
            )
        # A byte-order mark first (Windows Notepad saves UTF-8 so) is no part of the TOML.
        bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
        text = raw[bom:].decode("utf-8")
    except FileNotFoundError:
        raise ConfigProblems(str(path), ["no such file"]) from None
    except OSError as exc:
        raise ConfigProblems(str(path), [f"cannot read: {exc.strerror}"]) from None
    except UnicodeDecodeError as exc:
        # A binary file, or text saved in another encoding: TOML is UTF-8 text.
        raise ConfigProblems(
            str(path), [f"not UTF-8 text (byte {bom + exc.start}); give the tournament file (TOML), saved as UTF-8"]
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigProblems(str(path), [f"not valid TOML: {exc}"]) from None
    return parse_tournament(data, base=path.parent, source=str(path), default_replays=default_replays)


def decode_stored(text: str | bytes) -> TournamentConfig:
    """A configuration as a store holds it, in this layout or the first release's flat one."""
    data = json.loads(text)
    if isinstance(data.get("format"), str):  # the first release's layout
        problems: list[str] = []
        data, _ = upgrade(data, problems, stored=True)
        assert not problems, problems  # it was a valid configuration when stored
    return msgspec.convert(data, TournamentConfig)


def _games_planned(fmt: FormatSection, n: int) -> int:
    """How many games the schedule will hold, counted without making it (it may be huge)."""
    if fmt.kind == "head-to-head":
        return fmt.max_games
    total = 0
    for k in fmt.table_sizes:
        rows = len(williams_design(k))
        if fmt.kind == "gauntlet":
            wanted = fmt.games_per_entrant or rows * math.comb(n - 1, k - 1)
            total += -(-wanted // rows) * rows
        elif fmt.games_per_entrant is not None:
            total += tables_for_games_per_entrant(n, k, fmt.games_per_entrant) * rows
        else:
            total += math.comb(n, k) * fmt.repetitions * rows
    return total


Where = Callable[[str], str]


def _decode_section(
    cls: type[msgspec.Struct], raw: object, path: str, where: Where, problems: list[str], *, skip: Iterable[str] = ()
) -> dict[str, Any]:
    """The valid settings of one section (each decoded by msgspec against its declaration); problems for the rest."""
    if not isinstance(raw, dict):
        problems.append(f"{where(path)}: expected a table of settings ([{where(path)}]), got {raw!r}")
        return {}
    fields = cls.__struct_fields__
    for key in sorted(set(raw) - set(fields)):
        problems.append(unknown_key(where(f"{path}.{key}"), key, fields))
    hints = typing.get_type_hints(cls, include_extras=True)
    values: dict[str, Any] = {}
    for key in fields:
        if key not in raw or key in skip:
            continue
        hint = hints[key]
        if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
            values[key] = hint(**_decode_section(hint, raw[key], f"{path}.{key}", where, problems))
            continue
        decoded, problem = value_problem(hint, raw[key])
        if problem is not None:
            problems.append(f"{where(f'{path}.{key}')}: {problem}")
        else:
            values[key] = decoded
    return values


def parse_tournament(
    data: dict[str, Any], *, base: Path, source: str = "tournament", default_replays: Path | None = None
) -> TournamentConfig:
    """Validate a decoded tournament file; relative paths are taken from ``base``.

    ``default_replays`` is where the replays go when the file has no ``replays``
    key: ``famiglia tournament run`` gives the folder beside the results database
    (``club.sqlite``, ``club-replays/``), as the demo keeps its own. Without it
    (a caller of the library) such a file keeps none. ``replays = false`` keeps
    none either way.
    """
    problems: list[str] = []
    section = data.get("tournament")
    if not isinstance(section, dict):
        raise ConfigProblems(source, ["missing the [tournament] table"])
    for key in sorted(set(data) - {"tournament", "entrant"}):
        close = difflib.get_close_matches(key, ["tournament", "entrant"], n=1, cutoff=0.6)
        hint = f"; did you mean [{close[0]}]?" if close else ""
        problems.append(f"{key}: unknown top-level key{hint} (expected [tournament] and [[entrant]])")
    raw, spelled = upgrade(section, problems)
    for key in sorted(set(raw) - _TOURNAMENT_KEYS):
        problems.append(unknown_key(f"tournament.{key}", key, _TOURNAMENT_KEYS | set(MOVED) | set(WORD_SECTIONS)))

    def where(path: str) -> str:
        """The name the file gave a setting: its first spelling when it used that one."""
        parts = path.split(".")
        for n in range(len(parts), 0, -1):
            given = spelled.get(".".join(parts[:n]))
            if given is not None:
                return "tournament." + ".".join([given, *parts[n:]])
        return f"tournament.{path}"

    hints = typing.get_type_hints(TournamentConfig, include_extras=True)
    top: dict[str, Any] = {}
    for key in ("name", "game", "seed", "illegal_action"):
        if key in raw:
            top[key], problem = value_problem(hints[key], raw[key])
            if problem is None and key == "seed":
                problem = seed_problem(top[key])  # the range famiglia play --seed takes
            if problem is not None:
                problems.append(f"tournament.{key}: {problem}")
                del top[key]
    raw_sandbox = raw.get("sandbox")
    if isinstance(raw_sandbox, dict) and isinstance(raw_sandbox.get("level"), str):
        # Checked as famiglia play --sandbox is, in the same words: an unknown level, or one this machine lacks.
        try:
            require_level(raw_sandbox["level"])
        except SandboxUnavailable as exc:
            problems.append(f"{where('sandbox.level')}: {exc}")
            raw["sandbox"] = {key: value for key, value in raw_sandbox.items() if key != "level"}
    sections = {
        name: _decode_section(cls, raw.get(name, {}), name, where, problems, skip=("table_sizes", "runtimes"))
        for name, cls in _SECTIONS.items()
    }

    name = top.get("name", "tournament")
    if not name.strip():
        problems.append("tournament.name: empty; give the tournament a name, or leave the key out")
    game = top.get("game")
    rules = None
    if "game" not in raw:
        problems.append(f"tournament.game: missing; choose one of {', '.join(game_names())}")
    elif game is not None and game not in game_names():  # as installed now, not when this module was imported
        problems.append(f"tournament.game: unknown game {game!r}; choose one of {', '.join(game_names())}")
    elif game is not None:
        rules = get_rules(game)

    raw_format = raw.get("format", {}) if isinstance(raw.get("format", {}), dict) else {}
    fmt = FormatSection(**sections["format"])
    sizes_at = where("format.table_sizes")
    raw_sizes = raw_format.get("table_sizes")
    sizes: list[int] = []
    if raw_sizes is None:
        problems.append("tournament.table_size: missing (how many bots sit at each table)")
    elif not isinstance(raw_sizes, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in raw_sizes):
        if sizes_at.endswith(".table_size") and isinstance(raw_sizes, list) and len(raw_sizes) == 1:
            # table_size = "4" is read as table_sizes = ["4"]: the message quotes what was written
            problems.append(f"{sizes_at}: expected a whole number of players, such as 4, got {raw_sizes[0]!r}")
        else:
            problems.append(f"{sizes_at}: expected a list of integers, got {raw_sizes!r}")
    elif not raw_sizes:
        problems.append(f"{sizes_at}: empty; give at least one table size")
    else:
        sizes = list(raw_sizes)
        for size in sorted({s for s in sizes if sizes.count(s) > 1}):
            problems.append(f"{sizes_at}: {size} is listed twice")
        if rules is not None:
            for size in sizes:
                try:
                    rules.check_table(size)
                except ValueError as error:
                    problems.append(f"{sizes_at}: {error}")
    fmt = msgspec.structs.replace(fmt, table_sizes=sizes)

    variants_raw = raw.get("variants", {})
    if not isinstance(variants_raw, dict):
        problems.append(f"tournament.variants: expected a table of KEY = VALUE, got {variants_raw!r}")
        variants_raw = {}
    variants = {str(k): str(v) for k, v in variants_raw.items()}
    if rules is not None:
        try:
            rules.config(variants)
        except UnknownVariant as exc:
            problems.append(f"tournament.variants: {exc}")

    time = TimeSection(**sections["time"])
    if time.game_wall_ms and time.game_wall_ms < time.startup_ms:
        problems.append(
            f"{where('time.game_wall_ms')}: {time.game_wall_ms} ms is less than startup_ms "
            f"({time.startup_ms}): a game could end before its bots start"
        )
    if fmt.games_per_entrant is not None and "repetitions" in raw_format:
        problems.append(f"{where('format.repetitions')}: give games_per_entrant or repetitions, not both")

    replays = _replays(raw, base, default_replays, problems)

    entrants, seen, given = _entrants(data.get("entrant", []), base, problems)
    if given == 0:
        problems.append("entrant: no [[entrant]] tables; a tournament needs at least as many as a table seats")
    elif sizes and given < max(sizes) and fmt.kind != "head-to-head":
        problems.append(f"entrant: {given} entrants cannot fill a table of {max(sizes)}")
    _check_format(fmt, where, seen, given, problems)
    _unused_format_keys(fmt.kind, raw_format, where, problems)

    runtimes = _runtimes(raw.get("sandbox"), where, problems)
    sandbox = msgspec.structs.replace(SandboxSection(**sections["sandbox"]), runtimes=runtimes)
    executor = ExecutorSection(**sections["executor"])
    if executor.scheduler is not None and not executor.scheduler.strip():
        problems.append(
            f'{where("executor.scheduler")}: expected an address like "tcp://HOST:8786", got {executor.scheduler!r}'
        )
    elif executor.scheduler is not None and (problem := scheduler_problem(executor.scheduler)) is not None:
        problems.append(f"{where('executor.scheduler')}: {problem}")
    total = 0 if problems else _games_planned(fmt, len(entrants))
    if total > MAX_GAMES:
        problems.append(
            f"tournament: this schedule has {total:,} games, more than the {MAX_GAMES:,} one store holds; "
            "give fewer games_per_entrant or repetitions (games_per_entrant picks balanced tables "
            "instead of every possible one)"
        )
    if problems:
        raise ConfigProblems(source, problems)
    assert game is not None
    return TournamentConfig(
        name=name,
        game=game,
        entrants=entrants,
        variants=variants,
        seed=top.get("seed", 0),
        replays=replays,
        illegal_action=top.get("illegal_action", "forfeit"),
        format=fmt,
        time=time,
        sandbox=sandbox,
        executor=executor,
    )


_REPLAYS_CHOICES = (
    'name a folder (replays = "replays"), leave the key out to keep them beside the results database, '
    "or give replays = false to keep none"
)


def _replays(raw: dict[str, Any], base: Path, default: Path | None, problems: list[str]) -> str | None:
    """The folder the replays go to (absolute), or None: ``replays`` as the file gives it, else ``default``."""
    if "replays" not in raw:
        if default is None:
            return None
        if (problem := folder_problem(default)) is not None:
            problems.append(
                f"tournament.replays: not given, so replays go beside the results database in {default}, but "
                f'{problem}; name a folder (replays = "replays"), or give replays = false to keep none'
            )
            return None
        return str(default.resolve())
    given = raw["replays"]
    if given is False:
        return None
    if not isinstance(given, str):
        problems.append(f"tournament.replays: expected a folder in quotes, or false, got {given!r}; {_REPLAYS_CHOICES}")
        return None
    if not given.strip():
        problems.append(f"tournament.replays: empty; {_REPLAYS_CHOICES}")
        return None
    if (problem := folder_problem(base / given)) is not None:
        problems.append(f"tournament.replays: {problem}")
        return None
    return str((base / given).resolve())


def _entrants(raw_entrants: object, base: Path, problems: list[str]) -> tuple[list[Entrant], set[str], int]:
    """The ``[[entrant]]`` tables: the entrants, their names, and how many tables the file gives."""
    entrants: list[Entrant] = []
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
        if entrant_name is not None and not isinstance(entrant_name, str):
            problems.append(f'{where}.name: expected text in quotes, got {entrant_name!r}; write name = "..."')
            continue
        if not isinstance(entrant_name, str) or not entrant_name.strip():
            problems.append(f"{where}.name: missing or empty")
            continue
        where = f"entrant {entrant_name!r}"
        if entrant_name in seen:
            problems.append(f"{where}: the name is used twice")
        seen.add(entrant_name)
        if bot_text is not None and not isinstance(bot_text, str):
            problems.append(
                f"{where}.bot: expected text in quotes (a folder with bot.toml, or a command line), got {bot_text!r}"
            )
            continue
        if not isinstance(bot_text, str) or not bot_text.strip():
            problems.append(f"{where}.bot: missing (a folder with bot.toml, or a command line)")
            continue
        try:
            spec = load_named_bot(bot_text, base=base)
        except BotSpecError as exc:
            problems.append(f"{where}.bot: {exc}")
            continue
        entrants.append(Entrant(name=entrant_name, bot=msgspec.structs.replace(spec, name=entrant_name)))
    return entrants, seen, len(raw_entrants)


def _runtimes(raw_sandbox: object, where: Where, problems: list[str]) -> tuple[str, ...]:
    """``runtimes`` of ``[tournament.sandbox]``, each folder checked as ``famiglia play --runtime`` checks it."""
    if not isinstance(raw_sandbox, dict) or "runtimes" not in raw_sandbox:
        return ()
    given, at = raw_sandbox["runtimes"], where("sandbox.runtimes")
    if not isinstance(given, list) or not all(isinstance(path, str) for path in given):
        problems.append(f'{at}: expected a list of absolute folders in quotes, like ["/opt/jdk-21"], got {given!r}')
        return ()
    for path in given:
        if (problem := runtime_problem(path)) is not None:
            problems.append(f"{at}: {path}: {problem}")
    return tuple(os.path.normpath(path) for path in given)


def _check_format(fmt: FormatSection, where: Where, names: set[str], given: int, problems: list[str]) -> None:
    """The format's parameters against each other and the entrants."""
    if fmt.kind == "gauntlet":
        if fmt.hero is None:
            problems.append(f'{where("format.hero")}: the gauntlet format needs hero = "<entrant name>"')
        elif fmt.hero not in names:
            problems.append(f"{where('format.hero')}: {fmt.hero!r} is not an entrant's name")
    if fmt.kind == "head-to-head":
        for key, value in (("a", fmt.a), ("b", fmt.b)):
            if value is None:
                problems.append(f'{where("format." + key)}: the head-to-head format needs {key} = "<entrant name>"')
            elif value not in names:
                problems.append(f"{where('format.' + key)}: {value!r} is not an entrant's name")
        if fmt.a is not None and fmt.a == fmt.b:
            problems.append(f"{where('format.b')}: a and b must be different entrants")
        sizes = fmt.table_sizes
        if len(sizes) > 1:
            problems.append(f"{where('format.table_sizes')}: a head-to-head plays at one table size, not {sizes}")
        elif sizes and given < sizes[0] + 1:
            problems.append(
                f"entrant: a head-to-head at tables of {sizes[0]} needs {sizes[0] + 1} entrants "
                f"(a, b and {sizes[0] - 1} opponents), not {given}"
            )
    if fmt.elo1 <= fmt.elo0:
        problems.append(f"{where('format.elo1')}: must be above elo0 ({fmt.elo0:g}), got {fmt.elo1:g}")


def _unused_format_keys(kind: str, given: dict[str, Any], where: Where, problems: list[str]) -> None:
    """Refuse each format key this kind does not read (``hero`` in a round-robin): ignored, it would mislead."""
    used, what = FORMAT_KEYS[kind]
    for key in sorted(set(given) & set(FormatSection.__struct_fields__) - used):
        users = " or ".join(f'"{other}"' for other, (keys, _) in FORMAT_KEYS.items() if key in keys)
        problems.append(
            f"{where('format.' + key)}: a {kind} does not use {key} ({what}); "
            f"remove it, or make the format {users}, which uses it"
        )


def flat_settings(config: TournamentConfig) -> dict[str, Any]:
    """Every setting by the name the README's file gives it: ``format``, ``table_sizes``, ``time.move_ms``, ``limits.cpu_s``."""
    flat: dict[str, Any] = {}
    for key, value in msgspec.to_builtins(config).items():
        if key not in _SECTIONS:
            flat[key] = value
            continue
        for inner, setting in value.items():
            name = first_name(key, inner)
            if isinstance(setting, dict):
                flat.update({f"{name}.{k}": v for k, v in setting.items()})
            else:
                flat[name] = setting
    return flat
