"""Files only the host may read: 0600 files in 0700 folders.

Everything the harness writes (the results store, replays, bots' stderr,
report pages) can hold a deal, so it is created here. Folders the harness
creates are 0700; folders that already exist are the user's and are left
as they are. Files are created 0600 without following a symlink at their
name, whatever the umask says.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "create_private",
    "make_private_dirs",
    "opened_warning",
    "tighten",
    "write_private",
]

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each 0700; existing folders stay as they are."""
    missing: list[Path] = []
    here = folder
    while not here.exists() and here != here.parent:
        missing.append(here)
        here = here.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, PRIVATE_DIR)
        except FileExistsError:
            continue  # made meanwhile by someone else: not ours to change
        # mkdir's mode passes through the umask, which may have taken owner bits away.
        os.chmod(path, PRIVATE_DIR)
    if not folder.is_dir():
        raise NotADirectoryError(20, "not a folder", str(folder))


def create_private(path: Path, *, exclusive: bool = True) -> int:
    """Open ``path`` for writing as a new 0600 file; a descriptor.

    ``exclusive``: fail with FileExistsError if anything is at ``path``
    (nothing is ever overwritten); else truncate a regular file there.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    flags |= os.O_EXCL if exclusive else os.O_TRUNC
    fd = os.open(path, flags, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
    except OSError:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, data: bytes, *, replace: bool = True) -> None:
    """Write a whole 0600 file: beside it under a unique name, then into place.

    A reader never sees half a file. ``replace=False`` fails with
    FileExistsError when ``path`` exists instead of replacing it.
    """
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = create_private(temporary)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # fails if path exists: never overwrites
    finally:
        temporary.unlink(missing_ok=True)


def tighten(path: Path) -> int | None:
    """Make an existing file or folder of ours the owner's alone (0600, 0700); the mode it had if it was open.

    An older famiglia wrote some files more open, and a host who runs ``chmod -R o+rX`` over a
    checkout (to open a bot folder to the sandbox's uids) opens the results beside it too.
    None when nothing was changed: already private, someone else's, or neither file nor folder.
    """
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if info.st_uid != os.geteuid() or not info.st_mode & 0o077:
        return None
    if stat.S_ISREG(info.st_mode):
        os.chmod(path, PRIVATE_FILE)
    elif stat.S_ISDIR(info.st_mode):
        os.chmod(path, PRIVATE_DIR)
    else:
        return None
    return stat.S_IMODE(info.st_mode)


def opened_warning(tightened: list[tuple[Path, int]]) -> str | None:
    """One line for the host about files of theirs that others could read, now closed again; None if none."""
    if not tightened:
        return None
    named = ", ".join(f"{path} (was {mode:04o})" for path, mode in tightened[:3])
    more = f" and {len(tightened) - 3} more" if len(tightened) > 3 else ""
    return (
        f"warning: {named}{more} could be read by other users, and results and replays hold whole deals: "
        "famiglia made them the owner's alone again; open only a bot's own folder to others "
        "(chmod -R o+rX path/to/bot), never a folder of results"
    )
