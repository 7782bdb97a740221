"""The ``sysinfo`` system call answered with fixed figures, inside each bot's sandbox (issue 42).

``sysinfo()`` tells the machine's free, shared and buffered memory, its load
and its number of threads: each moves when any seat holds memory or starts
threads, so one seat could spell a hidden hand to another in it. Refusing the
call breaks programs: the C library's ``sysconf(_SC_PHYS_PAGES)`` ignores its
error and reads memory the call never set, so the JVM, .NET and GHC would size
their heaps from a random number. A classic filter can refuse a call but not
answer it, so the call is handed to a supervisor instead: seccomp's user
notification (``SECCOMP_RET_USER_NOTIF``), as LXD and Incus answer ``sysinfo``
for their containers.

The supervisor is this file, run by famiglia's own Python (``-I -S -c``, the
standard library only) as a link of the launcher chain, inside the sandbox,
as the bot's uid, after every namespace, limit and the level's filter are in
place (``referee.sandbox.launch``). It forks; the child loads a one-rule filter
that sends ``sysinfo`` to a listener, passes the listener to its parent over a
socket pair and becomes the rest of the chain (the bot). The parent stays, the
bot's parent, and answers each call: it writes the fixed figures into the
caller's memory through ``/proc/<pid>/mem`` and lets the call return 0. Its
figures: total and free memory the seat's bound (``memory_mb``, or the
machine's total without one), no shared, buffered or swap memory, load 0, one
process; only the uptime is the kernel's (any program reads it from its clock).

Why inside the sandbox and not in the referee: what a bot makes it do is the
bot's own cost. It runs in the seat's control group (its CPU time and memory
are the seat's, frozen with it) and in its namespaces, so it sees no other
seat and has no more power than the bot. A bot that stops or kills it only
hurts itself: its ``sysinfo`` calls wait (its own time runs) or, with the
supervisor gone, the bot is killed too (its parent-death signal). It writes
only where the caller pointed (an address the caller does not have fails
with EFAULT, as from the kernel), and only after checking that the
notification still stands, so a pid reused meanwhile gets nothing. One
difference from the kernel: ``/proc/<pid>/mem`` writes as a debugger does, so
an address in the caller's own read-only private memory gets the figures in
a copy of its page rather than EFAULT; shared mappings (the system's files)
are never written.

The bot is the supervisor's child, so a kernel that lets a process trace only
its descendants (Yama's ``ptrace_scope`` 1) still lets the supervisor write
into every process of the bot's tree. Inside the PID namespace the supervisor
is pid 2 and the bot pid 3 (``referee.sandbox.strays``). The supervisor ends
as the bot ended: with its exit status, or killed by the same signal.

Run as ``python -I -S -c <this file> <filter hex> <answer hex> <command...>``.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import math
import os
import select
import signal
import socket
import struct
import sys
import time

__all__ = [
    "ANSWER_LAYOUT",
    "SUPERVISOR_PYTHON",
    "answer_bytes",
    "machine_memory_bytes",
    "main",
    "supervisor_argv",
    "user_notification_available",
]

ANSWER_LAYOUT = "=q3Q6QHH4xQQI4x"
"""struct sysinfo on a 64-bit machine: uptime, loads[3], total, free, shared, buffer, total swap, free swap
(each a long), procs and pad (u16), total and free high memory (long), mem_unit (u32); 112 bytes."""

_NOTIF = "=QIIiIQ6Q"  # struct seccomp_notif: id, pid, flags, then struct seccomp_data (nr, arch, ip, args[6])
_RESPONSE = "=QqiI"  # struct seccomp_notif_resp: id, val, error, flags
# The ioctls of a seccomp listener, encoded as _IOWR/_IOW('!', n, size): the same on every machine famiglia knows.
_RECV = 0xC0502100  # SECCOMP_IOCTL_NOTIF_RECV, struct seccomp_notif (80 bytes)
_SEND = 0xC0182101  # SECCOMP_IOCTL_NOTIF_SEND, struct seccomp_notif_resp (24 bytes)
_ID_VALID = 0x40082102  # SECCOMP_IOCTL_NOTIF_ID_VALID, u64
_SECCOMP_SET_MODE_FILTER, _FLAG_NEW_LISTENER = 1, 1 << 3
_SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
_PR_SET_PDEATHSIG = 1
_STILL_ANSWERING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE, signal.SIGUSR1,
                    signal.SIGUSR2, signal.SIGALRM, signal.SIGXFSZ)  # fmt: skip
"""What the referee's cleanup (SIGTERM to the bot's process group) or the bot may send: the supervisor
goes on answering until the bot itself has ended."""
_PYTHON_IGNORES = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT)
"""Dispositions Python sets at start that the bot must not inherit (a write past file_mb must raise SIGXFSZ)."""


def answer_bytes(memory_bytes: int, *, uptime_s: int = 0) -> bytes:
    """The struct sysinfo every call of a seat gets: ``memory_bytes`` total and free, nothing else moving."""
    return struct.pack(ANSWER_LAYOUT, uptime_s, 0, 0, 0, memory_bytes, memory_bytes, 0, 0, 0, 0, 1, 0, 0, 0, 1)


SUPERVISOR_PYTHON = os.path.realpath(sys.executable)
"""The interpreter that runs the supervisor: famiglia's own, its standard library alone (``-I -S``).
Its prefix is in every bot's view (``referee.sandbox.view``)."""


@functools.cache
def _source() -> str:
    with open(__file__, encoding="utf-8") as handle:
        return handle.read()


@functools.cache
def user_notification_available() -> bool:
    """Whether this kernel can hand a call to a listener (``user_notif`` among seccomp's actions: Linux 5.0 and later)."""
    try:
        with open("/proc/sys/kernel/seccomp/actions_avail", encoding="ascii") as handle:
            return "user_notif" in handle.read().split()
    except OSError:
        return False


def machine_memory_bytes() -> int:
    """The machine's total memory (``MemTotal``), 0 when /proc does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return 0


def supervisor_argv(bound_bytes: int) -> list[str]:
    """The chain's link that runs the supervisor for a seat whose memory is bounded by ``bound_bytes`` (0: none).

    The seat's figure is its bound, or the machine's total without one (a
    property of the machine, which no seat moves).
    """
    from referee.sandbox.seccomp import sysinfo_notice_filter  # the referee's side only: the supervisor runs alone

    total = machine_memory_bytes()
    memory = min(bound_bytes, total) if bound_bytes > 0 and total > 0 else bound_bytes or total
    return [SUPERVISOR_PYTHON, "-I", "-S", "-c", _source(), sysinfo_notice_filter().hex(), answer_bytes(memory).hex()]


class _FilterProgram(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def _become_the_bot(supervisor: int, channel: socket.socket, program: bytes, command: list[str]) -> None:
    """In the child: load the filter that hands ``sysinfo`` to a listener, give the listener away, exec the bot."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    # The bot dies with its supervisor: without it, its sysinfo calls would never be answered.
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != supervisor:
        os._exit(125)
    fprog = _FilterProgram(len(program) // 8, program)
    number = _SYS_SECCOMP.get(os.uname().machine, -1)
    listener = libc.syscall(ctypes.c_long(number), ctypes.c_long(_SECCOMP_SET_MODE_FILTER),
                            ctypes.c_long(_FLAG_NEW_LISTENER), ctypes.byref(fprog))  # fmt: skip
    if listener < 0:
        why = os.strerror(ctypes.get_errno())
        os.write(2, f"famiglia: the sandbox cannot answer sysinfo here (seccomp user notification: {why})\n".encode())
        os._exit(125)
    socket.send_fds(channel, [b"L"], [listener])
    os.close(listener)
    channel.close()
    for signum in _PYTHON_IGNORES:
        signal.signal(signum, signal.SIG_DFL)
    os.execv(command[0], command)


def _answer_one(listener: int, answer: bytes) -> None:
    """Take one pending call and answer it: the figures written where the caller asked, and 0 returned."""
    notice = bytearray(struct.calcsize(_NOTIF))  # the kernel wants it zeroed
    try:
        fcntl.ioctl(listener, _RECV, notice, True)
    except OSError:  # the caller was interrupted or died before the notice was read
        return
    call, pid, _flags, _nr, _arch, _ip, address, *_ = struct.unpack(_NOTIF, notice)
    error = -errno.ENOSYS  # a caller this supervisor cannot see (pid 0): as on a kernel without sysinfo
    if pid:
        error = _write_answer(listener, call, pid, address, answer)
    try:
        fcntl.ioctl(listener, _SEND, bytearray(struct.pack(_RESPONSE, call, 0, error, 0)), True)
    except OSError:  # the caller went away meanwhile
        pass


def _write_answer(listener: int, call: int, pid: int, address: int, answer: bytes) -> int:
    """Write ``answer`` (its uptime filled in) at ``address`` in ``pid``; 0, or the negative errno for the caller."""
    try:
        memory = os.open(f"/proc/{pid}/mem", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return -errno.ENOSYS
    try:
        # Opened after the notice: if the caller died and its pid went to another
        # process meanwhile, the notice no longer stands and nothing is written.
        fcntl.ioctl(listener, _ID_VALID, bytearray(struct.pack("=Q", call)), True)
        uptime = math.ceil(time.clock_gettime(time.CLOCK_BOOTTIME))
        data = struct.pack("=q", uptime) + answer[8:]
        if os.pwrite(memory, data, address) != len(data):
            return -errno.EFAULT
    except (OSError, OverflowError):  # an address outside the caller's memory, or a notice gone stale
        return -errno.EFAULT
    finally:
        os.close(memory)
    return 0


def _end_as(status: int) -> None:
    """Leave as the bot left: its exit status, or killed by its signal."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        if signum not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status))


def main(argv: list[str]) -> None:
    program, answer, command = bytes.fromhex(argv[1]), bytes.fromhex(argv[2]), argv[3:]
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    supervisor = os.getpid()
    child = os.fork()
    if child == 0:
        ours.close()
        try:
            _become_the_bot(supervisor, theirs, program, command)
        except BaseException as exc:  # noqa: BLE001 - any failure here must end the child, never run a second supervisor
            os.write(2, f"famiglia: the sandbox's sysinfo supervisor failed to start the bot: {exc}\n".encode())
        os._exit(127)
    theirs.close()
    # Not in the bot's folder: the supervisor reads no file there, and a look for the
    # processes working in it (famiglia check-bot's) finds the bot's own alone.
    os.chdir("/")
    for signum in _STILL_ANSWERING:
        signal.signal(signum, signal.SIG_IGN)
    listener = -1
    try:
        _, fds, _, _ = socket.recv_fds(ours, 1, 1)
        listener = fds[0] if fds else -1
    except OSError:
        pass
    ours.close()
    ended = os.pidfd_open(child)
    poller = select.poll()
    poller.register(ended, select.POLLIN)
    if listener >= 0:
        poller.register(listener, select.POLLIN)
    while True:
        for fd, events in poller.poll():
            if fd == ended:
                _, status = os.waitpid(child, 0)
                _end_as(status)
            elif events & select.POLLIN:
                _answer_one(listener, answer)
            else:  # every process the filter covers has ended: no call will come
                poller.unregister(listener)


if __name__ == "__main__":
    main(sys.argv)
