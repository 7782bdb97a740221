"""What a referee process holds on the host for its sandboxed bots: a block of uids, a folder of FIFOs.

As root each bot (and each build) runs as a uid of its own, taken from a block
of ``UIDS_PER_REFEREE`` uids that this referee process alone holds on the host
(``uids``); each bot's stdout is a FIFO in a folder of this referee's
(``fifos``, see ``referee.sandbox.launch`` for why a FIFO). A referee killed
with SIGKILL leaves its FIFO folder behind for the next one to sweep
(``referee.sandbox.leftovers``); its uid block needs no sweeping, since the
kernel drops the lock that holds it with the process.

A FIFO's path is seen by its bot: ``/proc/self/mountinfo`` shows where on the
host each mount of its view comes from. So the folder and the FIFO are named
by random tokens alone, never by the referee's pid or a count of the bots it
started; the folder is known as a live referee's by a lock it holds (as the
uid blocks are), not by a pid in its name.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import stat
import tempfile
import threading

from referee.sandbox.names import FIFO_PREFIX, FIFO_STAGING_PREFIX

__all__ = ["LAST_UID", "UIDS_PER_REFEREE", "FifoFolder", "UidPool", "fifos", "uids"]

# 2,048 games of four at once; from the default base 0x70000000 that leaves
# 32,767 blocks below 2**31 (see _claim_block), far more than referees on one host.
UIDS_PER_REFEREE = 8192
"""The bot uids one referee process holds; the capacity check counts bots against it."""

LAST_UID = 0x7FFFFFFE  # below 2**31 - 1: some tools still read a uid as a signed 32-bit number
_UID_BLOCKS = "/run/famiglia-uid-blocks"
_uid_block_claims: list[int] = []  # the claims' descriptors: held open, the locks last as long as the process


class UidPool:
    """Distinct uids for the bots alive in this referee process.

    A uid of its own per bot makes its process count its own (a fork bomb cannot
    starve another seat of threads) and keeps it from signalling, tracing or
    reading another bot's processes. Each referee process claims a block of
    ``UIDS_PER_REFEREE`` uids of its own (``_claim_block``), so the bots of two
    referees on one host (worker processes, Dask workers, two tournaments) never
    share a uid.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._used: set[int] = set()
        self._block: tuple[int, int, int] | None = None  # (pid, base, first uid) of the block this process holds

    def acquire(self, base: int) -> int:
        with self._lock:
            # A forked child inherits the parent's block (and its lock): it claims one of its own.
            if self._block is None or self._block[:2] != (os.getpid(), base):
                self._block = (os.getpid(), base, _claim_block(base))
                self._used.clear()
            first = self._block[2]
            for uid in range(first, first + UIDS_PER_REFEREE):
                if uid not in self._used:
                    self._used.add(uid)
                    return uid
        raise RuntimeError(f"more than {UIDS_PER_REFEREE} bots at once in one referee process")

    def release(self, uid: int) -> None:
        with self._lock:
            self._used.discard(uid)


def _claim_block(base: int) -> int:
    """The first uid of a block of ``UIDS_PER_REFEREE`` that no other live referee on this host holds.

    A block is held by an exclusive ``flock`` on a file named after it in a
    folder only root can write: the kernel drops the lock when the process
    dies, however it dies, so a killed referee's block is free again without
    any cleanup. The search starts at a block picked from the pid, so referees
    started together rarely try the same files. Without that folder (no /run)
    the block is the pid's alone, as unlikely to collide but not excluded.
    """
    blocks = (LAST_UID + 1 - base) // UIDS_PER_REFEREE
    if blocks < 1:
        raise RuntimeError(f"bot_uid_base {base} leaves no room for {UIDS_PER_REFEREE} uids below {LAST_UID}")
    start = os.getpid() % blocks
    folder = _uid_blocks_folder()
    if folder is None:
        return base + start * UIDS_PER_REFEREE
    for step in range(blocks):
        first = base + (start + step) % blocks * UIDS_PER_REFEREE
        try:
            fd = os.open(os.path.join(folder, str(first)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError:  # not a plain file of ours (a link, a folder): not a block to use
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _uid_block_claims.append(fd)
        return first
    raise RuntimeError(f"every block of {UIDS_PER_REFEREE} bot uids from {base} is held by another referee")


def _uid_blocks_folder() -> str | None:
    """The folder of the uid blocks' lock files, root's alone; None where it cannot be had safely."""
    try:
        os.mkdir(_UID_BLOCKS, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = os.lstat(_UID_BLOCKS)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return None
    return _UID_BLOCKS


uids = UidPool()
"""This referee process's bot uids."""


def _locked_folder() -> tuple[str, int]:
    """A new FIFO folder (``famiglia-bots-<random>``) and a descriptor holding its lock.

    The folder is made and locked under a staging name, then renamed: a
    sweeping referee looks only at ``famiglia-bots-`` folders, so it never
    finds one between its making and its lock. The lock (``flock`` on the
    folder) lasts as long as this process or a forked child holds the
    descriptor, however it ends; the descriptor closes on exec, so no bot holds it.
    """
    staging = tempfile.mkdtemp(prefix=FIFO_STAGING_PREFIX)
    fd = -1
    try:
        os.chmod(staging, 0o711)
        fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        fcntl.flock(fd, fcntl.LOCK_EX)
        folder = os.path.join(os.path.dirname(staging), f"{FIFO_PREFIX}r{secrets.token_hex(8)}")  # names.FIFO_NAME
        os.rename(staging, folder)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        os.rmdir(staging)
        raise
    return folder, fd


class FifoFolder:
    """The folder of this referee's stdout FIFOs, there only while a bot uses one.

    Searchable but not listable by others; each FIFO is owned by its bot's uid
    and mounted into that bot's sandbox alone. Both are named by random tokens:
    the bot sees its FIFO's path on the host (the module's docstring).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: str | None = None
        self._hold = -1  # the descriptor whose lock marks the folder as a live referee's
        self._users = 0

    def make_fifo(self, uid: int | None) -> str:
        with self._lock:
            if self._path is None:
                self._path, self._hold = _locked_folder()
            self._users += 1
            path = os.path.join(self._path, secrets.token_hex(8))
        try:
            os.mkfifo(path, 0o600)
            if uid is not None:
                os.chown(path, uid, uid)
                os.chmod(path, 0o600)  # the bot's alone (it opens it read-write); mounted in its sandbox only
        except BaseException:
            self.remove(path)
            raise
        return path

    def remove(self, path: str) -> None:
        with self._lock:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            self._users -= 1
            if self._users == 0 and self._path is not None:
                try:
                    os.rmdir(self._path)
                except OSError:
                    pass
                os.close(self._hold)
                self._path, self._hold = None, -1


fifos = FifoFolder()
"""This referee process's stdout FIFOs."""
