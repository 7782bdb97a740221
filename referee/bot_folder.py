"""A bot's folder as data: packed the same way every time, unpacked and made safe without trusting it.

A bot folder is a stranger's: it may hold links that lead out of it, device
files, set-id programs, and folders nested deeper than any recursion limit.
Everything here walks it with an explicit stack (never a recursive walk), never
follows a link, and never opens what it did not create.

- ``pack_folder``: (SHA-256, tar bytes) of a folder, the same bytes for the
  same content, so the hash names the content (builds are cached by it and
  Dask workers are sent it).
- ``unpack_package``: those bytes into a fresh folder, refusing names that
  leave it and anything that is not a file, a folder or a link.
- ``make_safe_for_host``: after a build, every entry owned by the referee's
  user, no set-id or sticky bit, no group or other write, readable by all (a
  bot runs as a uid of its own and must read its files).
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

from referee.bots import BotSpecError

__all__ = [
    "MAX_PACKAGE_BYTES",
    "SKIPPED_NAMES",
    "make_safe_for_host",
    "pack_folder",
    "remove_tree",
    "unpack_package",
    "walk_entries",
]

MAX_PACKAGE_BYTES = 256 << 20
"""The largest bot folder packed (a build cache entry, a package for a Dask worker)."""
SKIPPED_NAMES = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache"})
"""What a bot folder's package leaves out, with all it holds: caches and version control, not the bot."""


def walk_entries(folder: Path, *, skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry below ``folder`` as (path, lstat), a folder before what it holds, links not followed.

    An explicit stack, not recursion: a folder nested 100,000 deep is walked
    like a flat one. Names in ``skip`` are left out with what they hold.
    """
    stack = [str(folder)]
    while stack:
        current = stack.pop()
        with os.scandir(current) as entries:
            found = sorted(entries, key=lambda entry: entry.name)
        for entry in reversed(found):  # popped in name order
            if entry.name in skip:
                continue
            info = entry.stat(follow_symlinks=False)
            yield entry.path, info
            if stat.S_ISDIR(info.st_mode):
                stack.append(entry.path)


def pack_folder(folder: Path) -> tuple[str, bytes]:
    """(sha256, tar bytes) of a bot folder, the same bytes for the same content.

    Files, folders and links are packed (links as links); anything else (a
    FIFO, a socket, a device) is left out. BotSpecError past ``MAX_PACKAGE_BYTES``.
    """
    buffer = io.BytesIO()
    paths = sorted(
        (path for path, info in walk_entries(folder, skip=SKIPPED_NAMES) if _packable(info.st_mode)),
        key=lambda path: Path(path).relative_to(folder).parts,
    )
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path in paths:
            info = archive.gettarinfo(path, arcname=str(Path(path).relative_to(folder)))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if info.isfile():
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
                with os.fdopen(fd, "rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)
            if buffer.tell() > MAX_PACKAGE_BYTES:
                raise BotSpecError(
                    f"{folder}: over {MAX_PACKAGE_BYTES >> 20} MiB packed; ship a smaller bot folder "
                    "(leave data and build outputs out of it)"
                )
    data = buffer.getvalue()
    return hashlib.sha256(data).hexdigest(), data


def _packable(mode: int) -> bool:
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)


def unpack_package(package: bytes, folder: Path) -> None:
    """Unpack ``pack_folder``'s bytes into ``folder`` (which must not exist yet).

    Only files, folders and links are made; anything else is left out. A name
    that leaves the folder (``..``, or through a link unpacked before it), a
    hard link to something outside it, or a name given twice is refused:
    BotSpecError. A leading ``/`` is dropped. A symbolic link may name any
    target: it is resolved inside the sandbox, which shows only the system,
    the runtime and the bot's own folder. Modes are the package's without
    set-id, sticky, or group and other write bits.

    Written here rather than with tarfile's extraction filters, which Python
    3.11 has only from 3.11.4 on (Debian 12 ships 3.11.2).
    """
    folder.mkdir(mode=0o700)
    top = os.path.realpath(folder)
    try:
        with tarfile.open(fileobj=io.BytesIO(package), mode="r:") as archive:
            for member in archive:
                _unpack_member(archive, member, top)
    except (tarfile.TarError, OSError, ValueError) as exc:
        raise BotSpecError(f"a bot package could not be unpacked: {exc}") from None


def _inside(top: str, name: str) -> str:
    """The path ``name`` (a member's or a hard link's) stands for below ``top``; ValueError when it leaves it."""
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"{name!r} leaves the folder")
    target = os.path.join(top, *parts)
    # Through a link unpacked before it, a name can still lead out: the folder above must stay inside.
    parent = os.path.realpath(os.path.dirname(target))
    if parent != top and not parent.startswith(top + os.sep):
        raise ValueError(f"{name!r} leads out of the folder through a link")
    return target


def _unpack_member(archive: tarfile.TarFile, member: tarfile.TarInfo, top: str) -> None:
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        return  # a device, a FIFO: nothing a bot needs
    target = _inside(top, member.name)
    mode = member.mode & 0o755
    if member.isdir():
        if os.path.lexists(target) and not stat.S_ISDIR(os.lstat(target).st_mode):
            raise ValueError(f"{member.name!r} is given twice")
        os.makedirs(target, mode=0o700, exist_ok=True)
        os.chmod(target, mode | 0o700)  # a folder (checked above), not a link
    elif member.issym():
        os.symlink(member.linkname, target)
    elif member.islnk():
        source = _inside(top, member.linkname)
        if not stat.S_ISREG(os.lstat(source).st_mode):
            raise ValueError(f"hard link {member.name!r} to {member.linkname!r}, which is not a file")
        os.link(source, target, follow_symlinks=False)
    else:
        data = archive.extractfile(member)
        assert data is not None
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode | 0o600)
        with os.fdopen(fd, "wb") as out:
            while chunk := data.read(1 << 20):
                out.write(chunk)


def make_safe_for_host(folder: Path, *, owner: int | None) -> None:
    """After a stranger's code wrote ``folder``: nothing in it can be a way up, and a bot can read it all.

    Every entry (``folder`` itself included) gets ``owner`` as its user and
    group (None: left as is, for a referee that is not root and owns them
    already); files keep only their owner's execute bit as a hint (0644 or
    0755), folders become 0755; set-id and sticky bits are gone. Links are
    neither followed nor changed but for their owner. Entries that are not
    files, folders or links (a FIFO the build made) are removed.

    Only call it when nothing else can write ``folder`` any more (the build's
    processes are gone). It works through descriptors, one folder open at a
    time: no recursion, and no path that grows past the kernel's limit
    however deep the folders are nested.
    """
    top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if owner is not None:
            os.fchown(top, owner, owner)
        os.fchmod(top, 0o755)
    finally:
        os.close(top)
    _walk_at(folder, lambda at, name, info: _make_entry_safe(at, name, info, owner))


def _make_entry_safe(at: int, name: str, info: os.stat_result, owner: int | None) -> None:
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        if owner is not None:
            os.chown(name, owner, owner, dir_fd=at, follow_symlinks=False)
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        os.unlink(name, dir_fd=at)
        return
    # The owner first: were the chown to fail after the chmod, a set-id file of
    # the build's uid would stay; this way the error stops everything first.
    if owner is not None:
        os.chown(name, owner, owner, dir_fd=at, follow_symlinks=False)
    # Not a link (lstat said so, and nothing runs in the folder any more): the
    # mode change cannot land elsewhere.
    os.chmod(name, 0o755 if stat.S_ISDIR(mode) or mode & stat.S_IXUSR else 0o644, dir_fd=at)


def _walk_at(folder: Path, visit: Callable[[int, str, os.stat_result], None]) -> None:
    """``visit(folder_fd, name, lstat)`` for every entry below ``folder``, a folder before what it holds.

    Depth first with one folder descriptor open at a time: down by name from
    the folder's descriptor, back up through ``..``. A folder is entered
    after ``visit`` (which may open it to its walker).
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        pending = [_visit_folder(fd, visit)]
        while pending:
            if pending[-1]:
                child = os.open(
                    pending[-1].pop(), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd
                )
                os.close(fd)
                fd = child
                pending.append(_visit_folder(fd, visit))
            else:
                pending.pop()
                if pending:
                    parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
                    os.close(fd)
                    fd = parent
    finally:
        os.close(fd)


def _visit_folder(fd: int, visit: Callable[[int, str, os.stat_result], None]) -> list[str]:
    """Visit each entry of the open folder ``fd``; the names of its subfolders."""
    with os.scandir(fd) as entries:
        names = [entry.name for entry in entries]
    folders = []
    for name in names:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        visit(fd, name, info)
        if stat.S_ISDIR(info.st_mode):
            folders.append(name)
    return folders


def remove_tree(folder: Path) -> None:
    """Remove ``folder`` and everything in it, however deep, following no link; nothing if it is gone.

    ``shutil.rmtree`` recurses once per level and fails past Python's
    recursion limit, which a stranger's build can reach on purpose.
    """
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        os.unlink(folder)
        return
    below: list[str] = []  # the names taken down from ``folder``, to remove on the way back up
    try:
        while True:
            inner = _empty_but_folders(fd)
            if inner is not None:
                # Entered only after making it ours to list (a build may leave a folder at mode 000).
                os.chmod(inner, 0o700, dir_fd=fd)
                child = os.open(inner, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = child
                below.append(inner)
            elif below:
                parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = parent
                os.rmdir(below.pop(), dir_fd=fd)
            else:
                break
    finally:
        os.close(fd)
    os.rmdir(folder)


def _empty_but_folders(fd: int) -> str | None:
    """Unlink every entry of the open folder ``fd`` that is not a folder; the name of one folder left, if any."""
    with os.scandir(fd) as entries:
        names = [entry.name for entry in entries]
    folder = None
    for name in names:
        if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            folder = name
        else:
            os.unlink(name, dir_fd=fd)
    return folder
