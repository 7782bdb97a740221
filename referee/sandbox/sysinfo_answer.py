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
after every namespace, limit and the level's filter are in place
(``referee.sandbox.launch``). It is the init of the bot's PID namespace (pid
1: ``bwrap --as-pid-1``, in place of bwrap's own). With the referee running
as root it runs before the drop to the bot's uid, as root with no capability
but the two that let it write into the bot's memory (``CAP_SYS_PTRACE``, and
``CAP_DAC_OVERRIDE`` to open ``/proc/<pid>/mem``, the bot's file) and
``no_new_privs``; without root, as the user in the bot's user namespace, with
none. It forks; the child loads a one-rule filter that sends ``sysinfo`` to a
listener, passes the listener to its parent over a socket pair and becomes
the rest of the chain: the bot, pid 2. The supervisor stays and answers each
call: it writes the fixed figures into the caller's memory through
``/proc/<pid>/mem`` and lets the call return 0. As the namespace's init it
also reaps the processes orphaned there, and when the bot ends it ends as the
bot did (its exit status, or 128 + its signal, as bwrap reports a signal),
and the namespace, with whatever the bot left, ends with it. Its figures:
total and free memory the seat's bound (``memory_mb``, or the machine's total
without one), no shared, buffered or swap memory, load 0, one process; only
the uptime is the kernel's (any program reads it from its clock).

Why inside the sandbox and not in the referee: what a bot makes it do is the
bot's own cost. It runs in the seat's control group (its CPU time and memory
are the seat's, frozen with it) and in its namespaces, so it sees no other
seat. Why the init: the kernel keeps every signal sent from inside a PID
namespace off its init unless the init handles it (SIGKILL and SIGSTOP never
get through), and ``kill(-1, ...)`` spares it, so the bot cannot stop or kill
it; the one signal it handles, SIGCHLD, only makes it reap. Why root, under a
root referee: bwrap's monitor, whose death kills the sandbox through the
init's parent-death signal, is root without capabilities, and such a process
may not signal another uid; and the bot, another uid, can neither signal nor
trace it. It writes only where the caller pointed (an address the caller
does not have fails with EFAULT, as from the kernel), and only after checking
that the notification still stands, so a pid reused meanwhile gets nothing.
One difference from the kernel: ``/proc/<pid>/mem`` writes as a debugger
does, so an address in the caller's own read-only private memory gets the
figures in a copy of its page rather than EFAULT; shared mappings (the
system's files) are never written.

Every process of the bot's tree descends from the supervisor, so a kernel
that lets a process trace only its descendants (Yama's ``ptrace_scope`` 1)
still lets it write into each of them.

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
_KEPT_CAPABILITIES = (1, 19)  # CAP_DAC_OVERRIDE, CAP_SYS_PTRACE
_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 24, 38
_CAPABILITY_VERSION_3 = 0x20080522
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
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


def _become_the_bot(channel: socket.socket, program: bytes, command: list[str]) -> None:
    """In the child: load the filter that hands ``sysinfo`` to a listener, give the listener away, exec the bot."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
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
    signal.set_wakeup_fd(-1)
    for signum in (*_PYTHON_IGNORES, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    os.execv(command[0], command)


def _keep_only_ptrace() -> None:
    """As root: give up every capability but those that open and write another uid's memory, for good
    (bounding set, no_new_privs).

    Without root there is nothing to give up: the supervisor is the bot's own uid with no capability.
    """
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        if cap not in _KEPT_CAPABILITIES and libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"cannot drop capability {cap}")
    header = ctypes.create_string_buffer(struct.pack("=Ii", _CAPABILITY_VERSION_3, 0))
    kept = sum(1 << cap for cap in _KEPT_CAPABILITIES)  # effective, permitted, inheritable; the high 32 bits: none
    data = ctypes.create_string_buffer(struct.pack("=6I", kept, kept, 0, 0, 0, 0))
    number = _SYS_CAPSET.get(os.uname().machine, -1)
    if libc.syscall(ctypes.c_long(number), header, data) != 0:
        raise OSError(ctypes.get_errno(), "cannot set the supervisor's capabilities")
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot set no_new_privs")


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
    """Leave as the bot left: its exit status, or 128 + its signal (a namespace's init cannot
    send itself one), which bwrap reports for a process killed by a signal anyway."""
    os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status))


def _reap(bot: int) -> None:
    """Collect every child that has ended (orphans of the namespace come to its init); end with the bot."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == bot:
            _end_as(status)


def _drain(fd: int) -> None:
    """Empty a non-blocking pipe."""
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def main(argv: list[str]) -> None:
    program, answer, command = bytes.fromhex(argv[1]), bytes.fromhex(argv[2]), argv[3:]
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    # A child's end wakes the loop below: set before the fork, so not even a bot that ends at once is missed.
    ended_read, ended_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(ended_write, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    child = os.fork()
    if child == 0:
        ours.close()
        try:
            _become_the_bot(theirs, program, command)
        except BaseException as exc:  # noqa: BLE001 - any failure here must end the child, never run a second supervisor
            os.write(2, f"famiglia: the sandbox's sysinfo supervisor failed to start the bot: {exc}\n".encode())
        os._exit(127)
    theirs.close()
    try:
        _keep_only_ptrace()
    except OSError as exc:  # never answer with more power than that: the seat ends
        os.write(2, f"famiglia: the sandbox's sysinfo supervisor cannot drop its capabilities: {exc}\n".encode())
        os._exit(125)
    # Python handles SIGINT (KeyboardInterrupt): a handled signal is one a bot could send its
    # namespace's init. Left to the default, the kernel keeps it away.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # Not in the bot's folder: the supervisor reads no file there, and a look for the
    # processes working in it (famiglia check-bot's) finds the bot's own alone.
    os.chdir("/")
    listener = -1
    try:
        _, fds, _, _ = socket.recv_fds(ours, 1, 1)
        listener = fds[0] if fds else -1
    except OSError:
        pass
    ours.close()
    poller = select.poll()
    poller.register(ended_read, select.POLLIN)
    if listener >= 0:
        poller.register(listener, select.POLLIN)
    _reap(child)
    while True:
        for fd, events in poller.poll():
            if fd == ended_read:
                _drain(ended_read)
                _reap(child)
            elif events & select.POLLIN:
                _answer_one(listener, answer)
            else:  # every process the filter covers has ended: no call will come
                poller.unregister(listener)


if __name__ == "__main__":
    main(sys.argv)
