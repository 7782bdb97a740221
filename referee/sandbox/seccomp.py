"""A seccomp filter for bots: classic BPF built here, handed to bubblewrap (``--seccomp FD``).

Seats must reach no channel to each other or to the host. The namespaces cut
most: a network namespace of its own, a PID namespace, a view of the files.
What they do not cover is refused here, at both levels:

- **Sockets are allow-listed by family.** ``socket()`` may create only
  ``AF_INET`` and ``AF_INET6`` sockets: they live in the bot's empty network
  namespace, and runtimes create them at start to probe for IPv4 and IPv6.
  ``AF_UNIX`` fails with EACCES: a unix socket is reached through a path, and
  the paths a bot must see (the system folders, its runtime, its own folder)
  could hold one. Every other family fails with EAFNOSUPPORT, the kernel's own
  answer for a family it lacks, which runtimes take as "not there". Several
  families are not confined by the network namespace: ``AF_VSOCK`` ports are
  one table for the whole machine (one seat bound ports spelling its hand, the
  next read them by trying to bind the same ones); ``AF_NETLINK`` talks to
  kernel subsystems; ``AF_ALG`` and the rest are kernel surface no bot needs.
  A family the kernel adds tomorrow is refused too. ``socketpair`` stays
  allowed: a pair is connected only to itself. Nothing a bot needs goes:
  netlink would only list the empty namespace's ``lo``; without it
  ``getifaddrs``, ``if_nameindex`` and what is built on them (Node's
  ``os.networkInterfaces()``) fail with that same error, and ``getaddrinfo``'s
  ``AI_ADDRCONFIG`` check assumes both IPv4 and IPv6.
- **No new user namespace**: ``unshare`` and ``clone`` with ``CLONE_NEWUSER``
  fail with EPERM. Inside one, a bot would hold every capability over it and
  reach kernel code written for root (mounting, netfilter, more socket kinds).
  Chromium and Electron need one for their own sandbox: such a bot must run
  them with ``--no-sandbox``. bwrap is not hindered: it loads this filter last,
  just before it starts the command, after its own namespaces exist.
- **clone3 reports ENOSYS**: its flags sit in memory the filter cannot read,
  so the C library falls back to ``clone``, whose flags it can.
- **No kernel keyrings** (``keyctl``, ``add_key``, ``request_key``: EPERM).
  Their users are Kerberos credential caches, disk and file encryption and
  network file systems, none of them a bot's; a key is kernel state outside
  the sandbox's view.
- **No typing into a terminal**: ``ioctl(fd, TIOCSTI)`` pushes bytes into a
  terminal's input as if typed, ``TIOCLINUX`` can do the same on a virtual
  console; both fail with EPERM whatever terminal descriptor a build or bot
  came by. The kernel reads the request as 32 bits, so the filter does too.
- **io_uring reports ENOSYS**: it could create sockets and make other calls
  behind the filter's back; runtimes fall back to ordinary calls.
- A system call of another ABI (32-bit x86 code on x86_64, x32) is refused
  whole, because its numbers differ.

- **No kernel state two seats could share through a file they both see.**
  Every seat sees the same system files, runtime and (for one entrant's two
  seats) bot folder: the same inodes, and the kernel keeps some state per
  inode that any opener can change and any other opener can observe. So:

  - *file locks hold nothing*: ``flock`` and the ``fcntl`` lock commands
    (``F_SETLK``, ``F_SETLKW``, ``F_OFD_SETLK``, ``F_OFD_SETLKW``) succeed
    without taking a lock. An error would break programs that lock a file
    of their own at start (Go's and cargo's build caches, the JVM's
    performance data, SQLite); success with no effect keeps every runtime
    working and leaves no lock for another seat to find. ``F_GETLK`` stays:
    with no seat holding a lock, it can only show a lock of the host's.
    Leases (``F_SETLEASE``) fail with EACCES, as for a file one does not
    own; directory notices (``F_NOTIFY``) with EINVAL, as on a kernel built
    without them.
  - *no watching another's opens*: ``inotify`` and ``fanotify`` report
    ENOSYS, as on a kernel built without them (programs then poll).
  - *no looking into the page cache*: ``mincore`` and ``cachestat`` report
    ENOSYS, ``preadv2`` with ``RWF_NOWAIT`` fails with EOPNOTSUPP (as for a
    file without that support), and Linux's own asynchronous I/O
    (``io_setup``, ``io_submit``: the same probe, and a machine-wide
    counter) reports ENOSYS; the C library's ``aio_*`` uses threads instead.
    Whether a page of a shared file is in memory still shows in how long
    reading it takes, and in a page fault's count (docs/sandbox.md).
- **Nothing that could wake a stopped tree, where the referee freezes by
  signal** (``freeze_by_signal``: a host with no cgroup freezer, where the
  referee stops a seat's processes with SIGSTOP between its requests,
  ``referee.sandbox.sigfreeze``): sending SIGCONT (``kill``, ``tkill``,
  ``tgkill``, ``rt_sigqueueinfo``, ``rt_tgsigqueueinfo``,
  ``pidfd_send_signal``: EPERM); tracing (``ptrace``: EPERM), since a tracer
  may resume a stopped tracee; POSIX timers and message-queue notices
  (``timer_create``, ``mq_notify``: ENOSYS), whose signal lies in memory the
  filter cannot read; SIGCONT as a descriptor's I/O signal (``fcntl``
  ``F_SETSIG``) or as the signal of a parent's death (``prctl``
  ``PR_SET_PDEATHSIG``): EINVAL. Where the host freezes by control group none
  of this is refused: a frozen group wakes for nothing of its own.
- **No BPF, perf events or userfaultfd** (EPERM): counters of the machine's
  caches and scheduler, and a way to stretch a race into a reliable one.

``strict`` refuses more: tracing, other processes' memory, mounting, loading
kernel modules, and every new namespace (``clone`` with any namespace flag,
``unshare`` and ``setns`` whole).

At both levels ``sysinfo``, which tells the machine's free, shared and
buffered memory, load and number of threads (each of which a seat moves), is
answered with fixed figures by the seat's own supervisor: a second filter
(``sysinfo_notice_filter``) hands the call to it
(``referee.sandbox.sysinfo_answer``). Refusing it would not do: the C
library's ``sysconf(_SC_PHYS_PAGES)`` does not check the call's error, so
every program that sizes its heap by the machine's memory (the JVM, .NET,
GHC's runtime) would read an undefined number.

Only x86_64 and aarch64 are known; elsewhere ``filter_for`` raises
``UnknownArchitecture`` and the levels that need it are refused.
"""

from __future__ import annotations

import errno
import platform
import struct
from typing import Literal

__all__ = ["UnknownArchitecture", "filter_for", "sysinfo_notice_filter"]


class UnknownArchitecture(Exception):
    """No system call table for this machine."""


# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6].
# Both known machines are little-endian: an argument's low 32 bits come first.
_NR, _ARCH = 0, 4
_ARG0, _ARG1, _ARG2, _ARG5 = 16, 24, 32, 56

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_ALLOW = 0x7FFF0000
_USER_NOTIF = 0x7FC00000  # SECCOMP_RET_USER_NOTIF: the call waits for the filter's listener to answer it
_ERRNO = 0x00050000
_NO_EFFECT = 0  # as an errno: the call returns 0 without being made

_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
_CLONE_NEWUSER = 0x10000000
_NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C  # the same on x86_64 and aarch64
# fcntl commands, the same on both machines (64-bit: no separate F_SETLK64).
_F_SETLK, _F_SETLKW, _F_OFD_SETLK, _F_OFD_SETLKW = 6, 7, 37, 38
_F_SETLEASE, _F_NOTIFY, _F_SETSIG = 1024, 1026, 10
_PR_SET_PDEATHSIG = 1
_RWF_NOWAIT = 0x08
_SIGCONT = 18  # the same on both machines
_X32_BIT = 0x40000000

_Instruction = tuple[int, int, int, int]  # (code, jump if true, jump if false, k)


class _Table:
    def __init__(self, audit_arch: int, numbers: dict[str, int], *, x32: bool) -> None:
        self.audit_arch = audit_arch
        self.numbers = numbers
        self.x32 = x32


_COMMON = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "clone3": 435,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "pidfd_send_signal": 424,
    "cachestat": 451,
}

_TABLES = {
    "x86_64": _Table(
        0xC000003E,
        {
            **_COMMON,
            "socket": 41,
            "ioctl": 16,
            "clone": 56,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "bpf": 321,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "kexec_load": 246,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "flock": 73,
            "fcntl": 72,
            "inotify_init": 253,
            "inotify_init1": 294,
            "inotify_add_watch": 254,
            "fanotify_init": 300,
            "fanotify_mark": 301,
            "mincore": 27,
            "preadv2": 327,
            "io_setup": 206,
            "io_submit": 209,
            "sysinfo": 99,
            "kill": 62,
            "tkill": 200,
            "tgkill": 234,
            "rt_sigqueueinfo": 129,
            "rt_tgsigqueueinfo": 297,
            "timer_create": 222,
            "mq_notify": 244,
            "prctl": 157,
        },
        x32=True,
    ),
    "aarch64": _Table(
        0xC00000B7,
        {
            **_COMMON,
            "socket": 198,
            "ioctl": 29,
            "clone": 220,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "bpf": 280,
            "perf_event_open": 241,
            "userfaultfd": 282,
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "kexec_load": 104,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "flock": 32,
            "fcntl": 25,
            "inotify_init1": 26,  # aarch64 has no inotify_init
            "inotify_add_watch": 27,
            "fanotify_init": 262,
            "fanotify_mark": 263,
            "mincore": 232,
            "preadv2": 286,
            "io_setup": 0,
            "io_submit": 2,
            "sysinfo": 179,
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "rt_sigqueueinfo": 138,
            "rt_tgsigqueueinfo": 240,
            "timer_create": 107,
            "mq_notify": 184,
            "prctl": 167,
        },
        x32=False,
    ),
}
_TABLES["arm64"] = _TABLES["aarch64"]

# The calls each level refuses whatever their arguments, and with which error.
_REFUSED_ALWAYS = {
    "io_uring_setup": errno.ENOSYS,
    "io_uring_enter": errno.ENOSYS,
    "io_uring_register": errno.ENOSYS,
    "clone3": errno.ENOSYS,
    "keyctl": errno.EPERM,
    "add_key": errno.EPERM,
    "request_key": errno.EPERM,
    "bpf": errno.EPERM,
    "perf_event_open": errno.EPERM,
    "userfaultfd": errno.EPERM,
    # Kernel state kept per file, which every seat's view shares (the module's docstring).
    "flock": _NO_EFFECT,
    "inotify_init": errno.ENOSYS,
    "inotify_init1": errno.ENOSYS,
    "inotify_add_watch": errno.ENOSYS,
    "fanotify_init": errno.ENOSYS,
    "fanotify_mark": errno.ENOSYS,
    "mincore": errno.ENOSYS,
    "cachestat": errno.ENOSYS,
    "io_setup": errno.ENOSYS,
    "io_submit": errno.ENOSYS,
}
_REFUSED_STRICT = {
    **{
        name: errno.EPERM
        for name in (
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "unshare",
            "setns",
            "mount",
            "umount2",
            "pivot_root",
            "chroot",
            "kexec_load",
            "init_module",
            "finit_module",
            "delete_module",
            "open_tree",
            "move_mount",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
        )
    },
}
# Where the referee freezes by SIGSTOP: a tracer may resume its stopped tracee, and a
# timer or a queue's notice may deliver SIGCONT (its signal lies in memory the filter cannot read).
_REFUSED_FREEZING_BY_SIGNAL = {"ptrace": errno.EPERM, "timer_create": errno.ENOSYS, "mq_notify": errno.ENOSYS}
# Where the referee freezes by SIGSTOP: the calls that send a signal, and the argument that
# holds it. None may send SIGCONT.
_SIGNAL_ARGUMENT = {
    "kill": _ARG1,
    "tkill": _ARG1,
    "tgkill": _ARG2,
    "rt_sigqueueinfo": _ARG1,
    "rt_tgsigqueueinfo": _ARG2,
    "pidfd_send_signal": _ARG1,
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> _Instruction:
    return (code, jt, jf, k)


def _refuse(code: int) -> _Instruction:
    return _op(_RET_K, _ERRNO | code)


_ALLOWED = _op(_RET_K, _ALLOW)


def _when_equal(value: int, then: _Instruction) -> list[_Instruction]:
    """``then`` (a return) when the loaded word is ``value``; else on to the next instruction."""
    return [_op(_JEQ_K, value, 0, 1), then]


def _when_any_bit(mask: int, then: _Instruction) -> list[_Instruction]:
    """``then`` (a return) when the loaded word has any bit of ``mask``; else on."""
    return [_op(_JSET_K, mask, 0, 1), then]


def _when_argument_is(loaded: int, argument: int, value: int, code: int) -> list[_Instruction]:
    """Refuse with ``code`` when the loaded word is ``loaded`` and the word at ``argument`` is ``value``;
    else on to the instruction after these five (the loaded word is then lost: a return must follow)."""
    return [
        _op(_JEQ_K, loaded, 0, 3),  # not it: over the next three
        _op(_LD_W_ABS, argument),
        *_when_equal(value, _refuse(code)),
    ]


def _for_call(number: int, body: list[_Instruction]) -> list[_Instruction]:
    """``body`` for system call ``number`` only; the other calls jump over it.

    The body loads an argument and must end in a return, so the call's number
    is never needed again after it.
    """
    assert body[-1][0] == _RET_K and len(body) <= 255  # a jump's offset is 8 bits
    return [_op(_JEQ_K, number, 0, len(body)), *body]


def filter_for(
    level: Literal["standard", "strict"], machine: str | None = None, *, freeze_by_signal: bool = False
) -> bytes:
    """The compiled filter (an array of ``struct sock_filter``) for ``level`` on this machine.

    ``freeze_by_signal``: the referee will stop the bot's tree with SIGSTOP
    (no cgroup freezer here): refuse what could wake it behind its back.
    """
    table = _TABLES.get(machine or platform.machine())
    if table is None:
        raise UnknownArchitecture(f"no system call table for {machine or platform.machine()}")
    nr = table.numbers
    refused = dict(_REFUSED_ALWAYS)
    if level == "strict":
        refused |= _REFUSED_STRICT
    if freeze_by_signal:
        refused |= _REFUSED_FREEZING_BY_SIGNAL

    program: list[_Instruction] = [
        _op(_LD_W_ABS, _ARCH),
        _op(_JEQ_K, table.audit_arch, 1, 0),
        _refuse(errno.EPERM),  # another ABI
        _op(_LD_W_ABS, _NR),
    ]
    if table.x32:
        program += _when_any_bit(_X32_BIT, _refuse(errno.EPERM))
    for name, code in refused.items():
        if name in nr:  # a call this machine lacks (inotify_init on aarch64) needs no refusal
            program += _when_equal(nr[name], _refuse(code))
    # The calls refused by their arguments: each block ends in its own return.
    program += _for_call(
        nr["socket"],
        [
            _op(_LD_W_ABS, _ARG0),
            *_when_equal(_AF_INET, _ALLOWED),
            *_when_equal(_AF_INET6, _ALLOWED),
            *_when_equal(_AF_UNIX, _refuse(errno.EACCES)),
            _refuse(errno.EAFNOSUPPORT),
        ],
    )
    program += _for_call(
        nr["ioctl"],
        [
            _op(_LD_W_ABS, _ARG1),
            *_when_equal(_TIOCSTI, _refuse(errno.EPERM)),
            *_when_equal(_TIOCLINUX, _refuse(errno.EPERM)),
            _ALLOWED,
        ],
    )
    # Any namespace at strict; at standard a user namespace, the one that needs
    # no capability (the others fail for a bot without them anyway).
    new_namespaces = _NAMESPACE_FLAGS if level == "strict" else _CLONE_NEWUSER
    program += _for_call(
        nr["clone"], [_op(_LD_W_ABS, _ARG0), *_when_any_bit(new_namespaces, _refuse(errno.EPERM)), _ALLOWED]
    )
    program += _for_call(
        nr["fcntl"],
        [
            _op(_LD_W_ABS, _ARG1),
            *_when_equal(_F_SETLK, _refuse(_NO_EFFECT)),
            *_when_equal(_F_SETLKW, _refuse(_NO_EFFECT)),
            *_when_equal(_F_OFD_SETLK, _refuse(_NO_EFFECT)),
            *_when_equal(_F_OFD_SETLKW, _refuse(_NO_EFFECT)),
            *_when_equal(_F_SETLEASE, _refuse(errno.EACCES)),
            *_when_equal(_F_NOTIFY, _refuse(errno.EINVAL)),
            *(_when_argument_is(_F_SETSIG, _ARG2, _SIGCONT, errno.EINVAL) if freeze_by_signal else []),
            _ALLOWED,
        ],
    )
    program += _for_call(
        nr["preadv2"], [_op(_LD_W_ABS, _ARG5), *_when_any_bit(_RWF_NOWAIT, _refuse(errno.EOPNOTSUPP)), _ALLOWED]
    )
    if freeze_by_signal:
        for name, argument in _SIGNAL_ARGUMENT.items():
            program += _for_call(
                nr[name], [_op(_LD_W_ABS, argument), *_when_equal(_SIGCONT, _refuse(errno.EPERM)), _ALLOWED]
            )
        program += _for_call(
            nr["prctl"],
            [
                _op(_LD_W_ABS, _ARG0),
                *_when_argument_is(_PR_SET_PDEATHSIG, _ARG1, _SIGCONT, errno.EINVAL),
                _ALLOWED,
            ],
        )
    if level == "standard":  # strict refuses unshare whatever its flags
        program += _for_call(
            nr["unshare"], [_op(_LD_W_ABS, _ARG0), *_when_any_bit(_CLONE_NEWUSER, _refuse(errno.EPERM)), _ALLOWED]
        )
    program.append(_ALLOWED)
    return b"".join(struct.pack("=HBBI", code, jt, jf, k) for code, jt, jf, k in program)


def sysinfo_notice_filter(machine: str | None = None) -> bytes:
    """A filter that hands ``sysinfo`` to its listener and lets every other call through.

    Loaded by the seat's supervisor (``referee.sandbox.sysinfo_answer``) on top
    of the level's filter, which decides everything else: a call the level
    refuses is refused whatever this one says (an error outranks a notice).
    """
    table = _TABLES.get(machine or platform.machine())
    if table is None:
        raise UnknownArchitecture(f"no system call table for {machine or platform.machine()}")
    program: list[_Instruction] = [
        _op(_LD_W_ABS, _ARCH),
        _op(_JEQ_K, table.audit_arch, 1, 0),
        _ALLOWED,  # another ABI: the level's filter refuses it
        _op(_LD_W_ABS, _NR),
        *_when_equal(table.numbers["sysinfo"], _op(_RET_K, _USER_NOTIF)),
        _ALLOWED,
    ]
    return b"".join(struct.pack("=HBBI", code, jt, jf, k) for code, jt, jf, k in program)
