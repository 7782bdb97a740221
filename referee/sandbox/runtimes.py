"""Runtimes outside the system folders: version managers' toolchains, and folders a host names.

A version manager installs toolchains under a home folder and puts a proxy on
PATH in front of them: rustup's ``~/.cargo/bin/cargo`` (a link to ``rustup``),
pyenv's ``~/.pyenv/shims/python``, the shims of asdf and mise, sdkman's
``candidates/java/current``. The proxy finds the real program through the
manager's own folders, which it looks up in variables (``RUSTUP_HOME``,
``PYENV_ROOT``, ``ASDF_DATA_DIR``, ...) or else under ``$HOME``. In the sandbox
``HOME`` is the bot's private ``/tmp`` and nothing of the host's home exists, so
mounting the proxy's folder alone leaves it with nothing to run.

For a program that is such a proxy, ``for_program`` names what the proxy needs:
the manager's own folders (mounted read-only where they are), the variables that
point the proxy at them, and the few files of the host's home a manager reads its
global choice from (``~/.tool-versions``: tool names and versions, nothing else),
shown at the same place under the bot's ``HOME``. Never a whole home folder, and
nothing that may hold a secret: of ``CARGO_HOME`` only its programs, caches and
configuration, not its ``credentials.toml``; not mise's global ``config.toml``,
whose ``[env]`` may carry tokens.

A host may also name runtime folders itself (``famiglia play --runtime``,
``runtimes = [...]`` in ``[tournament.sandbox]``): ``runtime_problem`` says
why one cannot be, and ``for_folder`` finds the toolchain when the folder is a
version manager's (``~/.rustup``).
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Toolchain", "for_folder", "for_program", "homes", "runtime_problem", "shared_prefix"]

# Already in every bot's view, or made afresh for each bot: never a runtime to mount.
_SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_OWN_MOUNTS = ("/dev", "/proc")
# What of CARGO_HOME a build reads: the proxies and installed programs, the
# download caches (read-only: a build offline finds what is already there) and
# cargo's configuration. Not its credentials files, which hold registry tokens.
_CARGO_PARTS = ("bin", "registry", "git", "config.toml", "config")
# Where asdf and mise read the host's global tool versions from, relative to a home.
_TOOL_VERSIONS = ".tool-versions"
_ASDF_CONFIG = ".asdfrc"
# An asdf shim's last line: ``exec asdf exec "node" "$@"`` (asdf 0.16 and later
# run the asdf on PATH), or an absolute path to the asdf script before that.
_ASDF_EXEC = re.compile(r'^exec\s+"?([^\s"]+)"?\s+exec\s', re.MULTILINE)


@dataclass(frozen=True)
class Toolchain:
    """What a version manager's proxy needs in the sandbox to find its real program."""

    manager: str
    folders: tuple[str, ...]
    """Folders and files of the host, mounted read-only at the same place."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables that point the proxy at those folders."""
    home_files: tuple[tuple[str, str], ...] = ()
    """(a file of the host's home, its path relative to that home): shown there under the bot's HOME."""


def homes() -> set[str]:
    """Every user's home folder, the referee's own ``~``, and /: never mounted whole."""
    return {entry.pw_dir for entry in pwd.getpwall()} | {os.path.expanduser("~"), "/"}


def _within(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _people_homes() -> set[str]:
    """The homes that hold someone's files: not the system accounts' (``/usr/sbin``, ``/nonexistent``)."""
    return {home for home in homes() - {"/"} if os.path.isdir(home) and not _within(home, (*_SYSTEM, *_OWN_MOUNTS))}


def _shows_a_home(path: str, people: set[str] | None = None) -> str | None:
    """The home folder that mounting ``path`` would show whole (it, or one inside it), or None.

    ``people``: ``_people_homes()``, when the caller checks many paths at once.
    """
    people = _people_homes() if people is None else people
    for candidate in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
        if candidate == "/":
            return "/"
        for home in sorted(people):
            if _within(home, [candidate]):
                return home
    return None


def _home_of(path: str) -> str:
    """The home folder ``path`` lies in (the innermost), else the referee's own."""
    inside = [home for home in _people_homes() if _within(path, [home]) and home != path]
    return max(inside, key=len) if inside else os.path.expanduser("~")


def _toolchain(
    manager: str,
    folders: Iterable[str],
    env: dict[str, str],
    *,
    home: str | None = None,
    home_files: Iterable[str] = (),
) -> Toolchain:
    """A toolchain with the folders that exist and show no whole home, and the home files that exist."""
    people = _people_homes()
    kept = tuple(dict.fromkeys(f for f in folders if os.path.exists(f) and _shows_a_home(f, people) is None))
    shown: tuple[tuple[str, str], ...] = ()
    if home is not None:
        shown = tuple(
            (os.path.join(home, name), name) for name in home_files if os.path.isfile(os.path.join(home, name))
        )
    return Toolchain(manager=manager, folders=kept, env=env, home_files=shown)


def _rustup(cargo_home: str, rustup_home: str | None = None) -> Toolchain:
    """rustup's proxies in ``CARGO_HOME/bin``: the toolchains are in ``RUSTUP_HOME``."""
    if rustup_home is None:
        # Where the proxy itself would look: the variable when the host set it,
        # else beside CARGO_HOME (both under the home of whoever installed them).
        candidates = [os.environ.get("RUSTUP_HOME", "")]
        if os.path.basename(cargo_home) == ".cargo":
            candidates.append(os.path.join(os.path.dirname(cargo_home), ".rustup"))
        candidates.append(os.path.expanduser("~/.rustup"))
        rustup_home = next((c for c in candidates if c and os.path.isdir(c)), None)
    env = {"CARGO_HOME": cargo_home}
    folders = [os.path.join(cargo_home, part) for part in _CARGO_PARTS]
    if rustup_home is not None:
        env["RUSTUP_HOME"] = rustup_home
        folders.append(rustup_home)
    return _toolchain("rustup", folders, env)


def _pyenv(root: str) -> Toolchain:
    """pyenv's shims exec ``PYENV_ROOT/libexec/pyenv``, which picks a version under ``PYENV_ROOT/versions``.

    The global choice is ``PYENV_ROOT/version``, inside the root: no home file needed.
    """
    return _toolchain("pyenv", [root], {"PYENV_ROOT": root})


def _read_head(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""


def shared_prefix(folder: str) -> bool:
    """Whether ``folder``, the parent of a ``bin`` folder, holds far more than one runtime.

    A home (``~/bin``) or a home's ``~/.local`` (pip's and pipx's programs,
    and every program's data under ``share``): then only the ``bin`` folder
    or the program itself is a runtime's.
    """
    return folder in homes() or os.path.basename(folder) == ".local"


def _program_files(program: str) -> list[str]:
    """What to mount for a lone program outside the system folders: the file, and what its link points to.

    A compiled program needs nothing else; a script that is part of a larger
    install (asdf before 0.16: ``bin/asdf`` beside ``lib/``) brings the
    folder above its ``bin``.
    """
    files = [os.path.abspath(program), os.path.realpath(program)]
    real, above = files[-1], os.path.dirname(os.path.dirname(files[-1]))
    script = _read_head(real).startswith("#!")
    if script and os.path.basename(os.path.dirname(real)) == "bin" and not shared_prefix(above):
        files.append(above)
    return [f for f in files if not _within(f, _SYSTEM)]


def _asdf(data: str, shim: str) -> Toolchain | None:
    """asdf's shims run ``asdf exec``, which reads versions and installs from ``ASDF_DATA_DIR``."""
    found = _ASDF_EXEC.search(_read_head(shim))
    if found is None:
        return None
    word = found.group(1)
    program = word if "/" in word else shutil.which(word)
    folders = [data]
    if program is not None and not _within(os.path.abspath(program), [data]):
        folders += _program_files(program)
    return _toolchain(
        "asdf", folders, {"ASDF_DATA_DIR": data}, home=_home_of(data), home_files=(_TOOL_VERSIONS, _ASDF_CONFIG)
    )


def _mise(data: str, binary: str) -> Toolchain:
    """mise's shims are links to mise itself, which reads installs from ``MISE_DATA_DIR``."""
    return _toolchain(
        "mise", [data, *_program_files(binary)], {"MISE_DATA_DIR": data}, home=_home_of(data),
        home_files=(_TOOL_VERSIONS,),
    )  # fmt: skip


def _sdkman(root: str) -> Toolchain:
    """sdkman's ``candidates/<tool>/current`` links; one tool runs another (gradle runs java)."""
    candidates = os.path.join(root, "candidates")
    env = {"SDKMAN_DIR": root, "SDKMAN_CANDIDATES_DIR": candidates}
    try:
        names = sorted(os.listdir(candidates))
    except OSError:
        names = []
    for name in names:
        current = os.path.join(candidates, name, "current")
        if os.path.isdir(current):
            # As sdkman's own start-up script does: JAVA_HOME, GRADLE_HOME, ...
            env[re.sub(r"[^A-Z0-9]", "_", name.upper()) + "_HOME"] = current
    return _toolchain("sdkman", [candidates], env)


def _is_rustup_bin(folder: str) -> bool:
    return os.path.basename(folder) == "bin" and os.path.isfile(os.path.join(folder, "rustup"))


def _is_pyenv_root(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "libexec", "pyenv"))


def _is_sdkman_root(folder: str) -> bool:
    return os.path.isdir(os.path.join(folder, "candidates")) and (
        os.path.basename(folder) == ".sdkman" or os.path.isfile(os.path.join(folder, "bin", "sdkman-init.sh"))
    )


def for_program(found: str) -> Toolchain | None:
    """The toolchain behind ``found`` (a program's path as PATH gives it) when it is a version manager's proxy.

    The path as found, not resolved: a proxy is told apart by where it is
    (``~/.cargo/bin/cargo``), and what it links to (``rustup``) says nothing
    of the toolchain.
    """
    path = os.path.abspath(found)
    folder = os.path.dirname(path)
    above = os.path.dirname(folder)
    if _is_rustup_bin(folder):
        return _rustup(above)
    if os.path.basename(folder) in ("shims", "bin") and _is_pyenv_root(above):
        return _pyenv(above)
    if os.path.basename(folder) == "shims" and os.path.isdir(os.path.join(above, "installs")):
        real = os.path.realpath(path)
        if os.path.basename(real).startswith("mise"):
            return _mise(above, real)
        return _asdf(above, path)
    parts = Path(path).parents
    if len(parts) > 4 and parts[3].name == "candidates" and _is_sdkman_root(str(parts[4])):
        return _sdkman(str(parts[4]))
    return None


def for_folder(folder: str) -> Toolchain | None:
    """The toolchain a folder the host named belongs to, when it is a version manager's own.

    So that naming ``~/.cargo`` or ``~/.rustup`` for a build whose Makefile
    calls cargo brings the variables rustup needs, as a proxy on PATH would.
    """
    folder = os.path.abspath(folder)
    if _is_rustup_bin(os.path.join(folder, "bin")):
        return _rustup(folder)
    if os.path.isfile(os.path.join(folder, "settings.toml")) and os.path.isdir(os.path.join(folder, "toolchains")):
        cargo = os.path.join(os.path.dirname(folder), ".cargo")
        if os.path.basename(folder) == ".rustup" and _is_rustup_bin(os.path.join(cargo, "bin")):
            return _rustup(cargo, folder)
        return _toolchain("rustup", [folder], {"RUSTUP_HOME": folder})
    if _is_pyenv_root(folder):
        return _pyenv(folder)
    if _is_sdkman_root(folder):
        return _sdkman(folder)
    shims = os.path.join(folder, "shims")
    if os.path.isdir(shims) and os.path.isdir(os.path.join(folder, "installs")):
        for name in sorted(os.listdir(shims)):
            found = for_program(os.path.join(shims, name))
            if found is not None:
                return found
    return None


def runtime_problem(path: str) -> str | None:
    """Why ``path`` cannot be a runtime folder the host names for its bots (None: it can).

    One line, naming the fix; the caller puts the option or key in front.
    """
    if not os.path.isabs(path):
        return "give the folder's absolute path (a runtime is mounted where it is on this machine)"
    path = os.path.normpath(path)
    if path == "/" or os.path.realpath(path) == "/":
        return "that is the whole filesystem; name the runtime's own folder (for example /opt/jdk-21)"
    if not os.path.exists(path):
        return "no such folder"
    if not os.path.isdir(path):
        return "not a folder; name the folder that holds the runtime"
    if "/tmp" in (path, os.path.realpath(path)):
        return "every bot has a private /tmp of its own; name a folder inside it"
    for own in _OWN_MOUNTS:
        if _within(os.path.realpath(path), [own]):
            return f"every bot has a {own} of its own; name the runtime's own folder"
    home = _shows_a_home(path)
    if home is not None:
        if home in (os.path.abspath(path), os.path.realpath(path)):
            return (
                f"that is the home folder {home}; name the toolchain's own folder in it "
                f"(for example {os.path.join(home, '.rustup')}), never a whole home"
            )
        return f"that folder holds the home folder {home}; name the toolchain's own folder instead"
    return None
