"""What a bot is: a name, a command line, a working folder, an optional build step.

A bot is given either as a folder holding ``bot.toml`` or as a command line.
``bot.toml``::

    name = "greedy"
    command = "python3 bot.py"      # or a list: ["python3", "bot.py"]
    build = "gcc -O2 -o bot bot.c"  # optional, run once in the folder before first use
    language = "c"                  # optional, informative

Relative programs in ``command`` are resolved against the bot's folder; a bare
``python``/``python3`` is the interpreter famiglia itself runs on.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import stat
import sys
import tomllib
from pathlib import Path

import msgspec

__all__ = ["BotBuildFailed", "BotSpec", "BotSpecError", "load_bot", "resolve_program"]


class BotSpecError(ValueError):
    """A bot argument that does not describe a runnable bot."""


class BotBuildFailed(RuntimeError):
    """A bot's build command failed."""


class BotSpec(msgspec.Struct, frozen=True, kw_only=True):
    """How to start one bot."""

    name: str
    command: list[str]
    cwd: str
    build: list[str] | None = None
    language: str = ""
    pin: str | None = None
    """The content fingerprint a run recorded this bot's games under (``referee.pinning``): every process
    start checks the files still have it. None: not pinned (a single match, a ladder's immutable upload)."""


class _Manifest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: str
    command: str | list[str]
    build: str | list[str] | None = None
    language: str = ""
    description: str = ""


_MANIFEST_KEYS: tuple[str, ...] = tuple(_Manifest.__struct_fields__)


def _check_manifest_keys(raw: dict[str, object], manifest_path: Path) -> None:
    """A typo in bot.toml names the key, the closest valid one, and every valid key."""
    for key in raw:
        if key not in _MANIFEST_KEYS:
            close = difflib.get_close_matches(key, _MANIFEST_KEYS, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise BotSpecError(f"{manifest_path}: unknown key {key!r}{hint} (the keys are {', '.join(_MANIFEST_KEYS)})")


def _split(command: str | list[str]) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else list(command)


def resolve_program(argv: list[str], cwd: Path, origin: str) -> list[str]:
    """Check the program exists now, so a typo is a clear error, not a crash mid-match."""
    if not argv:
        raise BotSpecError(f"{origin}: the command is empty")
    program = argv[0]
    if program in ("python", "python3"):
        # A bare "python" means the interpreter famiglia runs on, so a Python bot
        # can import famiglia's own packages (the engines, protocol.bot).
        return [sys.executable, *argv[1:]]
    if "/" in program:
        path = (cwd / program) if not os.path.isabs(program) else Path(program)
        if not path.exists():
            raise BotSpecError(f"{origin}: program {program!r} not found in {cwd}")
        if path.is_dir():
            raise BotSpecError(f"{origin}: program {str(path)!r} is a folder, not a program")
        if not os.access(path, os.X_OK):
            # Caught here, before any game: else every seat of it would crash with "Permission denied".
            raise BotSpecError(
                f"{origin}: program {str(path)!r} is not executable; run chmod +x {shlex.quote(str(path))}, "
                'or start it through its interpreter (e.g. "python3 bot.py")'
            )
        return argv
    if shutil.which(program) is None:
        raise BotSpecError(f"{origin}: command {program!r} not found on PATH; install it or give a full path")
    return argv


_MAX_MANIFEST_BYTES = 1 << 20


def _read_manifest(path: Path) -> str:
    """bot.toml's text, read without following a link (a built copy's folder is a stranger's to write).

    BotSpecError for a link, something that is not a file (a FIFO would block
    the read forever), a file over 1 MiB, or bytes that are not UTF-8.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise BotSpecError(f"{path}: cannot be read as a plain file ({exc.strerror}); make bot.toml a file") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BotSpecError(f"{path}: not a plain file; make bot.toml a file")
        data = handle.read(_MAX_MANIFEST_BYTES + 1)
    if len(data) > _MAX_MANIFEST_BYTES:
        raise BotSpecError(f"{path}: larger than 1 MiB; a bot.toml is a few lines")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BotSpecError(f"{path}: not UTF-8 text (byte {exc.start}); save bot.toml as UTF-8") from None


_EXAMPLE = 'name = "mybot" and command = "python3 bot.py"'
_SHAPES = {
    "name": 'text in quotes, e.g. name = "mybot"',
    "language": 'text in quotes, e.g. language = "python"',
    "description": "text in quotes",
    "command": 'text in quotes, e.g. command = "python3 bot.py", or a list of words',
    "build": 'text in quotes, e.g. build = "gcc -O2 -o bot bot.c", or a list of words',
}


def _manifest_problem(message: str, raw: dict[str, object]) -> str:
    """msgspec's words for a bot.toml of the wrong shape, said for the bot's author: the key, what it takes."""
    if missing := re.fullmatch(r"Object missing required field `(\w+)`", message):
        return f"no {missing[1]} in it; a bot.toml needs at least {_EXAMPLE}"
    if wrong := re.fullmatch(r"Expected `.+`, got `.+` - at `\$\.(\w+)(?:\[\d+\])?`", message):
        key = wrong[1]
        value = raw.get(key)
        if isinstance(value, list):
            shown = "a list with something other than text in it" if key in ("command", "build") else "a list"
        else:
            shown = repr(value)[:80]
        return f"{key} must be {_SHAPES.get(key, 'text in quotes')}, not {shown}"
    return message


def load_bot(text: str, *, base: Path | None = None, check_program: bool = True) -> BotSpec:
    """A bot from a folder with ``bot.toml`` or from a command line.

    Relative folders, and a command line's working folder, are taken from
    ``base`` (default: the current folder).
    """
    if not text.strip():
        raise BotSpecError("an empty bot: give a folder with bot.toml, or a command line in quotes")
    root = base if base is not None else Path.cwd()
    path = root / text
    if path.is_dir():
        manifest_path = path / "bot.toml"
        if manifest_path.is_dir():
            raise BotSpecError(
                f"{manifest_path}: a folder, not a file; bot.toml is a file of a few lines (docs/bots.md)"
            )
        if not manifest_path.is_file():
            resolved = "" if os.path.isabs(text) else f" ({path.resolve()})"
            raise BotSpecError(f"{text}: folder{resolved} has no bot.toml; add one or pass a command line in quotes")
        try:
            raw = tomllib.loads(_read_manifest(manifest_path))
            _check_manifest_keys(raw, manifest_path)
            manifest = msgspec.convert(raw, _Manifest)
        except tomllib.TOMLDecodeError as exc:
            raise BotSpecError(f"{manifest_path}: not valid TOML: {exc}") from None
        except msgspec.ValidationError as exc:
            raise BotSpecError(f"{manifest_path}: {_manifest_problem(str(exc), raw)}") from None
        cwd = path.resolve()
        build = _split(manifest.build) if manifest.build else None
        if build and build[0] in ("python", "python3"):
            build = [sys.executable, *build[1:]]  # as for the command: famiglia's own interpreter
        argv = _split(manifest.command)
        if check_program and build is None:
            argv = resolve_program(argv, cwd, str(manifest_path))
        elif argv and argv[0] in ("python", "python3"):
            argv = [sys.executable, *argv[1:]]
        return BotSpec(name=manifest.name, command=argv, cwd=str(cwd), build=build, language=manifest.language)
    if path.suffix == ".toml" and path.is_file():
        if path.name != "bot.toml":
            # The folder's bot.toml would be read instead: another file than the one named.
            raise BotSpecError(
                f"{text}: a bot's settings are read from the bot.toml in its folder, not from {path.name}; "
                "rename it bot.toml and give the folder"
            )
        return load_bot(str(path.parent), base=root, check_program=check_program)
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise BotSpecError(f"{text!r}: cannot split this command line: {exc}") from None
    if not argv:
        raise BotSpecError("an empty bot command")
    if len(argv) == 1 and not shutil.which(argv[0]) and not (root / argv[0]).exists():
        raise BotSpecError(
            f"{text!r}: not a folder with bot.toml (looked in {root.resolve()}), nor a command found on PATH"
        )
    cwd = root.resolve()
    if check_program:
        argv = resolve_program(argv, cwd, repr(text))
    name = Path(argv[-1]).stem if len(argv) > 1 else Path(argv[0]).name
    return BotSpec(name=name, command=argv, cwd=str(cwd))
