"""What a build leaves on disk: measured while it runs and once it has ended, against its bound (``build_mb``).

``file_mb`` (RLIMIT_FSIZE) bounds each file a build writes, not how many: one
build wrote 48 files of 63 MiB, 3.0 GB kept in the build cache, and each
submission to a ladder added as much. The one place a build can write to disk is
its copy in the build cache (its ``/tmp`` is memory, bounded by ``tmp_mb``), so
that folder is what is measured:

- ``watch`` waits for the build and measures the folder every few tenths of a
  second meanwhile; past the bound it says so, and the caller stops the build;
- ``folder_bytes`` measures it again once every process of the build has gone,
  and that figure is what the build is held to, and kept by the cache.

An entry counts as its size or its blocks, whichever is more, and at least
``ENTRY_BYTES``: a sparse file takes its size once copied, and a million empty
files take a million inodes. The walk goes through folder descriptors, so no
depth of nesting stops it, follows no link, and skips what vanishes while it
counts. While the build runs, the build may move the folders being counted: each
step back up is checked to land where it came from, and a walk that cannot finish
is tried again at the next tick; a build that keeps every walk from finishing is
stopped: what it writes must be measurable.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Literal

__all__ = ["ENTRY_BYTES", "Unmeasurable", "Watched", "folder_bytes", "watch"]

ENTRY_BYTES = 4096
"""The least an entry counts for: a block, and an inode."""

WATCH_TICK_S = 0.2
"""How often a running build's folder is measured, at least (a walk that takes long is spaced out more)."""

WALKS_MISSED = 10
"""Walks in a row a build may keep from finishing (folders moved or closed while counted) before it is stopped."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Unmeasurable(Exception):
    """A walk of the folder could not finish: a folder moved while it was counted, or could not be listed."""


def folder_bytes(folder: Path, stop_above: int = -1) -> int:
    """The bytes the entries below ``folder`` take on disk; once the count passes ``stop_above`` (when 0 or
    more) it stops there and returns the count so far. Unmeasurable when a walk cannot finish."""
    fd = _open_folder(folder, None)
    try:
        here = os.fstat(fd)
        path = [(here.st_dev, here.st_ino)]  # each folder walked down through, to check each step back up
        total, folders = _count(fd)
        pending = [folders]
        while pending:
            if 0 <= stop_above < total:
                return total
            if pending[-1]:
                name = pending[-1].pop()
                try:
                    child = _open_folder(name, fd)
                except (FileNotFoundError, NotADirectoryError):
                    continue  # gone, or no longer a folder: not there to count
                os.close(fd)
                fd = child
                here = os.fstat(fd)
                path.append((here.st_dev, here.st_ino))
                counted, folders = _count(fd)
                total += counted
                pending.append(folders)
            else:
                pending.pop()
                path.pop()
                if pending:
                    parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
                    os.close(fd)
                    fd = parent
                    here = os.fstat(fd)
                    if (here.st_dev, here.st_ino) != path[-1]:
                        raise Unmeasurable("a folder moved while it was counted")
        return total
    finally:
        os.close(fd)


def _open_folder(name: Path | str, at: int | None) -> int:
    """A descriptor of the folder ``name`` (below the folder ``at``), made listable if it is ours and closed."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=at)
    except PermissionError:
        pass
    try:
        # A folder the build closed to everyone (mode 000): its owner may open it again. Without
        # root the referee is that owner; as root it would not have been refused. Changed through
        # a descriptor of that very folder: a link put in its place meanwhile is not followed.
        handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=at)
        try:
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
        finally:
            os.close(handle)
        return os.open(name, _DIR_FLAGS, dir_fd=at)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise
        raise Unmeasurable(f"a folder of the build's cannot be listed ({exc.strerror})") from None


def _count(fd: int) -> tuple[int, list[str]]:
    """The bytes the entries of the open folder ``fd`` take (not what its subfolders hold), and its subfolders."""
    try:
        with os.scandir(fd) as entries:
            names = [entry.name for entry in entries]
    except OSError as exc:
        raise Unmeasurable(f"a folder of the build's cannot be listed ({exc.strerror})") from None
    total = 0
    folders = []
    for name in names:
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        total += max(info.st_size, info.st_blocks * 512, ENTRY_BYTES)
        if stat.S_ISDIR(info.st_mode):
            folders.append(name)
    return total, folders


Watched = int | Literal["over", "unmeasurable", "timeout"]


def watch(process: subprocess.Popen[bytes], folder: Path, limit: int, timeout_s: float) -> Watched:
    """Wait for ``process`` (a build writing ``folder``): its exit code; "over" once the folder holds more
    than ``limit`` bytes (0: no limit); "unmeasurable" when the build keeps ``WALKS_MISSED`` walks of it in
    a row from finishing; "timeout" after ``timeout_s``. The caller stops the build in the last three cases."""
    deadline = time.monotonic() + timeout_s
    tick = WATCH_TICK_S
    missed = 0
    while True:
        try:
            return process.wait(timeout=max(0.0, min(tick, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() >= deadline:
            return "timeout"
        if limit <= 0:
            continue
        began = time.monotonic()
        try:
            if folder_bytes(folder, stop_above=limit) > limit:
                return "over"
            missed = 0
        except Unmeasurable:
            missed += 1
            if missed >= WALKS_MISSED:
                return "unmeasurable"
        # A walk that takes long (a folder of many entries) is spaced out: it takes a fifth of the time at most.
        tick = max(WATCH_TICK_S, 4 * (time.monotonic() - began))
