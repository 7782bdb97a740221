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

__all__ = ["PRIVATE_DIR", "PRIVATE_FILE", "create_private", "make_private_dirs", "tighten", "write_private"]

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


def tighten(path: Path) -> None:
    """Make an existing file of ours 0600 (one an older famiglia wrote more open)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and info.st_mode & 0o077:
        os.chmod(path, PRIVATE_FILE)
