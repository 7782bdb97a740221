"""A seccomp filter for bots: classic BPF built here, handed to bubblewrap (``--seccomp FD``).

The mount namespace already hides the host's folders, but a unix socket is
reached through a path, and the paths a bot must see (the system folders, its
runtime, its own folder) could hold one. So a bot may not create an
``AF_UNIX`` socket at all: ``socket(AF_UNIX, ...)`` fails with EACCES.
``socketpair`` stays allowed: a pair is connected only to itself. ``io_uring``
could create sockets behind the filter's back, so it reports ENOSYS (runtimes
fall back to ordinary calls). A system call of another ABI (32-bit x86 code on
x86_64, x32) is refused whole, because its numbers differ.

``strict`` refuses more: tracing, other processes' memory, kernel keyrings,
BPF, perf events, userfaultfd, mounting, and new namespaces (``clone`` with a
namespace flag, ``unshare``, ``setns``; ``clone3`` reports ENOSYS so that the C
library falls back to ``clone``, whose flags the filter can read).

Only x86_64 and aarch64 are known; elsewhere ``filter_for`` raises
``UnknownArchitecture`` and the levels that need it are refused.
"""

from __future__ import annotations

import errno
import platform
import struct
from typing import Literal

__all__ = ["UnknownArchitecture", "filter_for"]


class UnknownArchitecture(Exception):
    """No system call table for this machine."""


# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0 = 0, 4, 16

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

_AF_UNIX = 1
_NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_X32_BIT = 0x40000000


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
}

_TABLES = {
    "x86_64": _Table(
        0xC000003E,
        {
            **_COMMON,
            "socket": 41,
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
        },
        x32=True,
    ),
    "aarch64": _Table(
        0xC00000B7,
        {
            **_COMMON,
            "socket": 198,
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
        },
        x32=False,
    ),
}
_TABLES["arm64"] = _TABLES["aarch64"]

# What each level refuses outright, and with which error.
_ENOSYS_ALWAYS = ("io_uring_setup", "io_uring_enter", "io_uring_register")
_EPERM_STRICT = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
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


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> tuple[int, int, int, int]:
    return (code, jt, jf, k)


def filter_for(level: Literal["standard", "strict"], machine: str | None = None) -> bytes:
    """The compiled filter (an array of ``struct sock_filter``) for ``level`` on this machine."""
    table = _TABLES.get(machine or platform.machine())
    if table is None:
        raise UnknownArchitecture(f"no system call table for {machine or platform.machine()}")
    nr = table.numbers
    refused: list[tuple[int, int]] = [(nr[name], errno.ENOSYS) for name in _ENOSYS_ALWAYS]
    if level == "strict":
        refused += [(nr[name], errno.EPERM) for name in _EPERM_STRICT]
        refused.append((nr["clone3"], errno.ENOSYS))

    def refuse(code: int) -> tuple[int, int, int, int]:
        return _op(_RET_K, _ERRNO | code)

    # The program: check the ABI, load the call's number, then one test per
    # refused call, each followed by its own return; the socket and clone tests
    # look at the first argument and load the number again; allow the rest.
    tests: list[tuple[str, int, int]] = []  # (kind, number, errno)
    for number, code in refused:
        tests.append(("nr", number, code))
    tests.append(("socket", nr["socket"], errno.EACCES))
    if level == "strict":
        tests.append(("clone", nr["clone"], errno.EPERM))

    program: list[tuple[int, int, int, int]] = [
        _op(_LD_W_ABS, _ARCH),
        _op(_JEQ_K, table.audit_arch, 1, 0),
        refuse(errno.EPERM),  # another ABI
        _op(_LD_W_ABS, _NR),
    ]
    if table.x32:
        program += [_op(_JSET_K, _X32_BIT, 0, 1), refuse(errno.EPERM)]
    for kind, number, code in tests:
        if kind == "nr":
            program += [_op(_JEQ_K, number, 0, 1), refuse(code)]
        elif kind == "socket":
            # if nr == socket and (arg0 & 0xffffffff) == AF_UNIX: refuse; reload nr either way.
            program += [
                _op(_JEQ_K, number, 0, 4),
                _op(_LD_W_ABS, _ARG0),
                _op(_JEQ_K, _AF_UNIX, 0, 1),
                refuse(code),
                _op(_LD_W_ABS, _NR),
            ]
        else:  # clone with a namespace flag
            program += [
                _op(_JEQ_K, number, 0, 4),
                _op(_LD_W_ABS, _ARG0),
                _op(_JSET_K, _NAMESPACE_FLAGS, 0, 1),
                refuse(code),
                _op(_LD_W_ABS, _NR),
            ]
    program.append(_op(_RET_K, _ALLOW))
    return b"".join(struct.pack("=HBBI", code, jt, jf, k) for code, jt, jf, k in program)
