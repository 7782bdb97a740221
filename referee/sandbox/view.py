"""What a bot sees of the filesystem: the system, its runtime and its own files, read-only.

bubblewrap starts the bot in an empty root (a tmpfs) and mounts into it only
what this module lists:

- the system, read-only: ``/usr``, ``/etc`` and the ``/bin``, ``/sbin``,
  ``/lib*`` folders or their links into ``/usr``;
- its runtime, read-only: famiglia's own Python (its prefix, standard library
  and installed packages, and famiglia's ``protocol`` and ``referee`` packages,
  which Python bots may import) when the bot runs on it, else the folder of the
  bot's program when that lies outside the system folders (a ``bin`` folder's
  parent: ``~/.nvm/versions/node/v20``); when that program is a version
  manager's proxy (rustup's ``~/.cargo/bin/cargo``, pyenv's shims), the
  manager's own folders instead, with the variables that point the proxy at
  them (``referee.sandbox.runtimes``); and the runtime folders the host named;
- its own files, read-only: the whole folder of a bot given as a folder with
  ``bot.toml``; for a bot given as a command line, only the files the line
  names (a command line's working folder is often the host's own, full of
  results);
- a fresh ``/proc`` of its PID namespace, with the machine's counters covered
  (``referee.sandbox.procmask``) and ``meminfo`` and ``cpuinfo`` fixed
  (``referee.sandbox.procfixed``), a minimal ``/dev`` and a private ``/tmp``
  (memory, ``tmp_mb``), its scratch space and its ``HOME``.

Nothing else of the host exists there: not ``/home`` or ``/root``, not
``/run`` or ``/var`` (where the host's unix sockets live), not the harness's
stores, replays or logs. Folders above a mounted path are created empty.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from referee.bots import BotSpec
from referee.sandbox.procfixed import fixed_proc_flags
from referee.sandbox.procmask import proc_mask_flags
from referee.sandbox.runtimes import Toolchain, for_folder, for_program, homes
from referee.sandbox.sysinfo_answer import SUPERVISOR_PYTHON

__all__ = [
    "FIFO_INSIDE",
    "HOME_INSIDE",
    "SYSTEM_FOLDERS",
    "bot_files",
    "mount_flags",
    "own_folder",
    "runtime_env",
    "runtime_paths",
    "supervisor_paths",
    "system_flags",
    "unreadable_by_others",
]

SYSTEM_FOLDERS = ("/usr", "/etc")
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_FAMIGLIA_PACKAGES = ("protocol", "referee", "training")
_DEPENDENCIES = ("msgspec", "trio")  # what famiglia's protocol and referee packages import
_ROOT = Path(__file__).resolve().parents[2]  # the folder holding famiglia's packages


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def system_flags() -> list[str]:
    flags: list[str] = []
    for folder in SYSTEM_FOLDERS:
        if os.path.isdir(folder):
            flags += ["--ro-bind", folder, folder]
    for name in _SYSTEM_LINKS:
        if os.path.islink(name):
            flags += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            flags += ["--ro-bind", name, name]
    return flags


def _site_of(module: str) -> str:
    """The folder on ``sys.path`` that ``module`` was imported from."""
    location = Path(sys.modules[module].__file__ or "").resolve()
    return str(location.parent.parent if location.name == "__init__.py" else location.parent)


def _runs_our_python(spec: BotSpec) -> bool:
    return bool(spec.command) and os.path.realpath(spec.command[0]) == os.path.realpath(sys.executable)


def _program(spec: BotSpec) -> str | None:
    if not spec.command:
        return None
    program = spec.command[0]
    if "/" not in program:
        return shutil.which(program)
    return program if os.path.isabs(program) else os.path.join(spec.cwd, program)


def _homes() -> set[str]:
    """Every user's home folder, and /: never mounted whole as a runtime."""
    return homes()


def _program_folder(path: str) -> str:
    """What to mount for a program outside the system folders: its folder, or a ``bin``'s parent.

    A ``bin`` folder's parent is a runtime's prefix (``~/.nvm/versions/node/v20``),
    unless it is a home folder (``~/bin``) or a home's ``~/.local``, which holds
    every program's data (``~/.local/share``): then only the ``bin`` folder.
    """
    folder = Path(path).parent
    if folder.name == "bin" and str(folder.parent) not in _homes() and folder.parent.name != ".local":
        folder = folder.parent
    return str(folder)


def _on_path(spec: BotSpec) -> str | None:
    """The bot's program as the host's PATH finds it, for a bare name that is not famiglia's Python."""
    if not spec.command or "/" in spec.command[0] or _runs_our_python(spec):
        return None
    return shutil.which(spec.command[0])


class _Runtime(NamedTuple):
    """What the bot's runtime adds to its view, worked out once per view (a start must stay fast)."""

    paths: list[str]
    """Folders and lone files of the host, mounted read-only where they are."""
    env: dict[str, str]
    """Variables that point a version manager's proxy at its mounted folders (``RUSTUP_HOME``, ...)."""
    home_files: dict[str, str]
    """{path under the bot's HOME: the host's file}: a manager's global choice, read from HOME."""


def runtime_env(spec: BotSpec, runtimes: Sequence[str] = ()) -> dict[str, str]:
    """The variables a version manager's proxy needs to find its mounted toolchain (``RUSTUP_HOME``, ...).

    Only the sandbox needs them: unconfined, a proxy finds its folders through
    the host's own HOME. The first toolchain to name a variable sets it.
    """
    return _runtime(spec, runtimes).env


def foreign_program(spec: BotSpec) -> str | None:
    """The bot's program when it lies outside its own files, the system folders and PATH, else None.

    Mounting the folder of such a program would show the bot whatever else is
    there: a bot.toml naming ``/home/host/bin/tool`` must not get ``/home/host``.
    """
    if not spec.command or _runs_our_python(spec) or "/" not in spec.command[0]:
        return None
    program = os.path.abspath(_program(spec) or "")
    if _under(program, [*bot_files(spec), *SYSTEM_FOLDERS, *_SYSTEM_LINKS]):
        return None
    return program


def runtime_paths(spec: BotSpec, runtimes: Sequence[str] = ()) -> list[str]:
    """The folders (and lone files) outside the system folders that the bot's program needs to run.

    famiglia's own Python, or a program found on the host's PATH: for a
    version manager's proxy, the manager's own folders. A program given by
    path is either the bot's own (mounted with its files), a system one, or
    refused (``foreign_program``). Then the folders the host named
    (``runtimes``), with the toolchain one of them belongs to.
    """
    return _runtime(spec, runtimes).paths


def _runtime(spec: BotSpec, runtimes: Sequence[str]) -> _Runtime:
    paths: list[str] = []
    chains: list[Toolchain] = []
    if _runs_our_python(spec):
        paths += [sys.prefix, sys.base_prefix, sysconfig.get_path("stdlib"), sysconfig.get_path("purelib"),
                  sysconfig.get_path("platlib")]  # fmt: skip
        paths += [str(_ROOT / name) for name in _FAMIGLIA_PACKAGES]
        # The folders famiglia's own dependencies were imported from (PYTHONPATH
        # or a user site, when not the interpreter's): what its packages need.
        paths += [_site_of(module) for module in _DEPENDENCIES if module in sys.modules]
    elif (found := _on_path(spec)) is not None:
        chain = for_program(found)
        if chain is not None:
            chains.append(chain)
        else:
            for candidate in dict.fromkeys((os.path.abspath(found), os.path.realpath(found))):
                paths.append(_program_folder(candidate))
    for folder in runtimes:
        # A version manager's own folder brings its toolchain, and only that:
        # naming ~/.cargo shows its programs and caches, not its credentials.
        chain = for_folder(folder)
        if chain is not None:
            chains.append(chain)
        else:
            paths += [os.path.abspath(folder), os.path.realpath(folder)]
    env: dict[str, str] = {}
    home_files: dict[str, str] = {}
    for chain in chains:
        paths += chain.folders
        for key, value in chain.env.items():
            env.setdefault(key, value)
        for source, relative in chain.home_files:
            home_files.setdefault(os.path.join(HOME_INSIDE, relative), source)
    kept = [p for p in dict.fromkeys(paths) if p and os.path.exists(p) and not _under(p, SYSTEM_FOLDERS)]
    return _Runtime(paths=kept, env=env, home_files=home_files)


def supervisor_paths() -> list[str]:
    """famiglia's own interpreter and standard library, which run every seat's sysinfo supervisor
    (``referee.sandbox.sysinfo_answer``), when they lie outside the system folders."""
    prefix = os.path.dirname(os.path.dirname(SUPERVISOR_PYTHON))
    found = dict.fromkeys((sys.base_prefix, os.path.realpath(sys.base_prefix), prefix))
    return [p for p in found if os.path.isdir(p) and not _under(p, SYSTEM_FOLDERS)]


def own_folder(spec: BotSpec) -> bool:
    """Whether the bot came as a folder with ``bot.toml`` (its folder is then its own)."""
    return os.path.isfile(os.path.join(spec.cwd, "bot.toml"))


def bot_files(spec: BotSpec) -> list[str]:
    """The bot's own files: its folder, or the files its command line names."""
    if own_folder(spec):
        return [spec.cwd]
    named = []
    for index, arg in enumerate(spec.command):
        if index > 0 and arg.startswith("-"):
            continue
        candidate = arg if os.path.isabs(arg) else os.path.join(spec.cwd, arg)
        if os.path.isfile(candidate) and (index > 0 or "/" in arg):
            named.append(os.path.abspath(candidate))
    return named


def unreadable_by_others(spec: BotSpec) -> str | None:
    """The first of the bot's own files and runtime folders that another uid cannot read, or None.

    Only matters for a root referee, whose bots run as uids of their own. The
    folders above them do not matter: the sandbox creates those open.
    """
    if os.geteuid() != 0:
        return None
    runtime = _runtime(spec, ())
    for path in [*bot_files(spec), *runtime.paths, *runtime.home_files.values(), *supervisor_paths()]:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & need != need:
            return path
    program = _program(spec)
    if program is not None and os.path.exists(program) and not os.stat(program).st_mode & stat.S_IXOTH:
        return program
    return None


def _outermost(paths: Iterable[str]) -> list[str]:
    """``paths`` without any that lies inside another, shortest first."""
    chosen: list[str] = []
    for path in sorted(dict.fromkeys(os.path.abspath(p) for p in paths), key=len):
        if path != "/" and not _under(path, chosen):
            chosen.append(path)
    return chosen


FIFO_INSIDE = "/dev/famiglia-stdout"
"""Where the bot's stdout FIFO appears inside the sandbox (the host's path would name the referee)."""
HOME_INSIDE = "/tmp"
"""The bot's HOME inside the sandbox (``referee.sandbox.launch`` sets it): its private /tmp."""


def _parents(paths: Iterable[str]) -> list[str]:
    """The folders above ``paths`` that bwrap must create, outermost first."""
    found: dict[str, None] = {}
    for path in paths:
        parts = Path(path).parts
        for depth in range(2, len(parts)):
            found[os.path.join(*parts[:depth])] = None
    return sorted(found, key=lambda p: (p.count("/"), p))


def mount_flags(
    spec: BotSpec,
    *,
    fifo: str | None,
    tmp_bytes: int,
    writable: str | None = None,
    runtimes: Sequence[str] = (),
    fixed_proc: Mapping[str, int] | None = None,
) -> list[str]:
    """bwrap's flags for what the bot sees: the system, the runtime, the bot's files, /proc, /dev, /tmp.

    ``fifo``: the bot's stdout FIFO, mounted writable at ``FIFO_INSIDE``.
    ``writable``: a folder mounted read-write instead of read-only (a build's).
    ``runtimes``: folders the host named, mounted read-only like the runtime.
    ``fixed_proc``: {file of /proc: a descriptor of the content it shows}
    (``referee.sandbox.procfixed``).
    Then the variables a version manager's proxy needs (``runtime_env``) as
    ``--setenv``: they name mounted folders, so they are made with the view.
    """
    flags = system_flags()
    flags += ["--proc", "/proc", "--dev", "/dev"]
    flags += proc_mask_flags()  # the machine-wide counters of /proc, covered
    flags += fixed_proc_flags(fixed_proc or {})  # and what runtimes read there, fixed
    flags += ["--perms", "1777", *(["--size", str(tmp_bytes)] if tmp_bytes > 0 else []), "--tmpfs", "/tmp"]
    # After /tmp: a bot folder or a runtime may live under it, and must be mounted over the tmpfs.
    system = [*SYSTEM_FOLDERS, *_SYSTEM_LINKS, "/tmp", "/dev", "/proc"]
    runtime = _runtime(spec, runtimes)
    binds = [p for p in _outermost([*runtime.paths, *bot_files(spec), *supervisor_paths()])
             if not _under(p, SYSTEM_FOLDERS)]  # fmt: skip
    if writable is not None:
        writable = os.path.abspath(writable)
        binds = [p for p in binds if not _under(p, [writable])] + [writable]
    inside = [*binds, *([FIFO_INSIDE] if fifo is not None else []), *([spec.cwd] if spec.cwd != "/" else [])]
    # bwrap would create the folders above a mount point readable by root alone.
    for parent in _parents(inside):
        if parent not in system and not _under(parent, binds):
            flags += ["--perms", "0755", "--dir", parent]
    for path in binds:
        flags += ["--bind" if path == writable else "--ro-bind", path, path]
    if fifo is not None:
        flags += ["--bind", fifo, FIFO_INSIDE]
    if spec.cwd != "/" and not _under(spec.cwd, binds):
        flags += ["--perms", "0755", "--dir", spec.cwd]
    # A manager's global choice (asdf's and mise's ~/.tool-versions), read-only
    # on the bot's private HOME, where the manager looks for it.
    for inside_path, source in runtime.home_files.items():
        flags += ["--ro-bind", source, inside_path]
    for key, value in runtime.env.items():
        flags += ["--setenv", key, value]
    # The empty root and /dev are memory (tmpfs) too, and without root the bot
    # owns them: left writable, they would hold files without bound, past
    # tmp_mb. Read-only once built; the mounts on them keep their own modes.
    flags += ["--remount-ro", "/dev", "--remount-ro", "/"]
    return flags
