"""No channel between seats through the kernel they share (issues 25 and 26).

The namespaces give each bot its own network, processes and files, but some of
the kernel is one for the whole machine: vsock ports, netlink, user namespaces,
keyrings, a terminal's input, the machine-wide counters in /proc. These tests
try each from inside real sandboxes, the way the referee starts bots, and
check the system call filter (``referee.sandbox.seccomp``) and the /proc mask
(``referee.sandbox.procmask``) leave nothing: one seat binds vsock ports that
spell a secret and the next seat reads them in a real match; a probe bot tries
the socket families, new user namespaces, keyrings and TIOCSTI on a terminal
it opened itself, and reads the machine's counters. A last test checks the
filter's program itself on both known machines, aarch64 included.
"""

from __future__ import annotations

import errno
import os
import random
import shutil
import struct
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from referee.bots import BotSpec, load_bot
from referee.match import MatchSpec, run_match
from referee.process import open_bot
from referee.sandbox import launch as launch_module
from referee.sandbox import require_level
from referee.sandbox.procmask import MASKED_FILES, MASKED_FOLDERS
from referee.sandbox.seccomp import filter_for, sysinfo_notice_filter
from referee.settings import Clock, RefereeSettings
from tests.referee.sandbox.test_containment import CLOCK, LEVELS, copy_bot, report, with_args

pytestmark = pytest.mark.slow


@pytest.fixture
def arena() -> Iterator[Path]:
    """A folder of the host's open to every user (mode 755): bots with uids of their own read their copies there."""
    folder = Path(tempfile.mkdtemp(prefix="famiglia-kernel-", dir="/tmp"))
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def stderr_inside(spec: BotSpec, level: str, until: str) -> str:
    """Start ``spec`` as the referee starts a bot at ``level``; its stderr once it shows ``until`` (10 s at most)."""
    settings = RefereeSettings(sandbox=require_level(level), grace_ms=200)
    async with open_bot(spec, settings) as bot:
        with trio.move_on_after(10):
            while until not in bot.stderr_text():
                await trio.sleep(0.02)
    text = bot.stderr_text()
    assert until in text, text
    return text


# --- a secret carried from seat to seat through vsock ports -----------------------------


@pytest.mark.parametrize("level", LEVELS)
async def test_no_seat_reads_what_another_spelled_in_vsock_ports(level: str, arena: Path) -> None:
    # The sender binds a port for every 1 of the secret before it says ready;
    # the receiver tries the same ports at its first request, when every seat
    # is ready. vsock ports are one table for the whole machine, so without
    # the filter the receiver reads the secret exactly.
    courier = load_bot(str(copy_bot(arena, "vsock_courier")))
    passer = load_bot(str(copy_bot(arena, "passer")))
    secret = f"{random.getrandbits(12) | 0x801:012b}"  # first and last bit set: never all zeros
    port = random.randrange(1 << 20, 1 << 30)  # apart from other test runs on this machine
    sender = with_args(courier, "send", str(port), secret)
    receiver = with_args(courier, "receive", str(port), str(len(secret)))
    settings = RefereeSettings(clock=Clock(time=CLOCK), sandbox=require_level(level), grace_ms=200)
    specs = [sender, receiver, passer]
    async with open_bot(sender, settings) as a, open_bot(receiver, settings) as b, open_bot(passer, settings) as c:
        record = await run_match(MatchSpec(game="vendetta", seed=4), [a, b, c], settings,
                                 commands=[s.command for s in specs])  # fmt: skip
    assert record.result.terminations == [] and record.sandbox == level
    heard = report(b.stderr_text(), "vsock_courier")
    assert heard == {"receive": "refused: EAFNOSUPPORT"}, f"the secret: {secret}; the other seat: {heard}"
    assert report(a.stderr_text(), "vsock_courier") == {"send": "refused: EAFNOSUPPORT"}, a.stderr_text()


# --- the kernel's other shared interfaces, from one bot ---------------------------------


@pytest.mark.parametrize("level", LEVELS)
async def test_a_bot_gets_no_other_socket_family_user_namespace_keyring_or_terminal_input(
    level: str, arena: Path
) -> None:
    probe = load_bot(str(copy_bot(arena, "kernel_probe")))
    seen = report(await stderr_inside(probe, level, "kernel_probe: done"), "kernel_probe")
    # Families outside the network namespace, and any the kernel may add: as if absent.
    for family in ("vsock", "netlink", "packet", "alg", "bluetooth", "xdp"):
        assert seen[f"socket:{family}"] == "refused: EAFNOSUPPORT", (family, seen)
    # IPv4 and IPv6 sockets are made (runtimes probe them), and lead nowhere; a pair is its own.
    assert seen["socket:inet"] == seen["socket:inet6"] == seen["socketpair"] == "ok", seen
    assert seen["connect:inet"] == "refused: ENETUNREACH", seen
    # No user namespace: by unshare, by clone, nor by clone3 (whose flags the filter cannot read).
    assert seen["unshare:newuser"] == seen["clone:newuser"] == "refused: EPERM", seen
    assert seen["clone3"] == "refused: ENOSYS", seen
    assert seen["keyctl"] == seen["add_key"] == "refused: EPERM", seen
    # A terminal it opened and made its own: an ordinary request works, typing into it does not.
    assert seen["ioctl:TIOCGWINSZ"] == "ok", seen
    assert seen["ioctl:TIOCSTI"] == seen["ioctl:TIOCLINUX"] == "refused: EPERM", seen


@pytest.mark.parametrize("level", LEVELS)
async def test_the_machines_counters_in_proc_tell_a_bot_nothing(level: str, arena: Path) -> None:
    files = [f"/proc/{name}" for name in MASKED_FILES if os.path.isfile(f"/proc/{name}")]
    folders = [f"/proc/{name}" for name in MASKED_FOLDERS if os.path.isdir(f"/proc/{name}")]
    # The audit's list (issue 26), wherever this kernel has the file.
    for name in ("stat", "loadavg", "interrupts", "cmdline", "softirqs", "schedstat", "uptime"):
        assert f"/proc/{name}" in files or not os.path.exists(f"/proc/{name}"), name
    own = ["/proc/self/status", "/proc/cpuinfo", "/proc/meminfo"]  # its own, or static, or needed (see procmask)
    probe = with_args(load_bot(str(copy_bot(arena, "kernel_probe"))), *(f"read:{p}" for p in [*files, *folders, *own]))
    seen = report(await stderr_inside(probe, level, "kernel_probe: done"), "kernel_probe")
    for path in files:
        assert seen[f"read:{path}"] == "refused: EACCES", (path, seen[f"read:{path}"])
    for path in folders:
        assert seen[f"read:{path}"] == "0 entries", (path, seen[f"read:{path}"])
    for path in own:
        assert seen[f"read:{path}"].endswith(" bytes") and not seen[f"read:{path}"].startswith("0 "), path
    # With /proc/stat and /sys out of sight the C library counts the CPUs it may run on.
    assert int(seen["cpus"]) >= 1


# --- runtimes still start, and take the refusals gracefully -----------------------------

PYTHON = """
import fcntl, os, socket, sqlite3, sys
def say(text): print("runtime:", text, file=sys.stderr, flush=True)
# Locks hold nothing in the sandbox, but taking one succeeds: a program that locks its own files runs.
with open("/tmp/own.lock", "w") as own:
    fcntl.flock(own, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.lockf(own, fcntl.LOCK_EX | fcntl.LOCK_NB)
    say("locked yes")
with sqlite3.connect("/tmp/own.sqlite") as db:  # SQLite locks its file with fcntl
    db.execute("create table t (x)")
    db.execute("insert into t values (1)")
    say(f"sqlite {db.execute('select count(*) from t').fetchone()[0]}")
try:
    say(f"interfaces {socket.if_nameindex()}")
except OSError as exc:
    say(f"interfaces refused: {exc.errno}")
say(f"cpus {os.cpu_count()}")
say(f"resolved {socket.getaddrinfo('localhost', 80, flags=socket.AI_ADDRCONFIG)[0][4][0]}")
try:
    open("/proc/stat").read()
    say("stat read")
except OSError as exc:
    say(f"stat refused: {exc.errno}")
say("done")
"""
NODE = """
const os = require("os");
const say = (text) => process.stderr.write(`runtime: ${text}\\n`);
try { require("fs").watch("/tmp").close(); say("watch yes"); } catch (e) { say(`watch refused: ${-e.errno}`); }
try { say(`interfaces ${Object.keys(os.networkInterfaces())}`); } catch (e) { say(`interfaces refused: ${e.info.errno}`); }
say(`cpus ${os.availableParallelism()}`);
try { require("fs").readFileSync("/proc/stat"); say("stat read"); } catch (e) { say(`stat refused: ${-e.errno}`); }
require("dns").lookup("localhost", (error, address) => { say(`resolved ${error ? error.code : address}`); say("done"); });
"""
JAVA = """
import java.net.NetworkInterface;
import java.nio.file.*;
import java.util.Collections;

public class Probe {
    static void say(String text) { System.err.println("runtime: " + text); System.err.flush(); }

    public static void main(String[] args) throws Exception {
        say("interfaces " + Collections.list(NetworkInterface.getNetworkInterfaces()).size());
        say("cpus " + Runtime.getRuntime().availableProcessors());
        try { Files.readAllBytes(Path.of("/proc/stat")); say("stat read"); }
        catch (AccessDeniedException e) { say("stat refused: 13"); }
        say("done");
    }
}
"""


C = r"""
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(void) {
    int fd = open("/tmp/own.lock", O_CREAT | O_RDWR, 0600);
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    fprintf(stderr, "runtime: locked %s\n", flock(fd, LOCK_EX | LOCK_NB) == 0 && fcntl(fd, F_SETLK, &lock) == 0 ? "yes" : "no");
    fprintf(stderr, "runtime: watch %s\n", inotify_init1(0) == -1 && errno == ENOSYS ? "refused: 38" : "yes");
    fprintf(stderr, "runtime: cpus %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(stderr, "runtime: stat %s\n", open("/proc/stat", O_RDONLY) == -1 && errno == EACCES ? "refused: 13" : "read");
    fprintf(stderr, "runtime: done\n");
    return 0;
}
"""


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("runtime", ["python", "node", "java", "c"])
async def test_runtimes_start_list_interfaces_gracefully_and_count_the_cpus(
    runtime: str, level: str, arena: Path
) -> None:
    # glibc's getifaddrs and if_nameindex, and libuv's interface list, ask
    # netlink: refused, they fail with EAFNOSUPPORT and the program goes on.
    # The JVM lists interfaces with ioctls on an IPv4 socket: it still sees lo.
    # File locks succeed without holding anything; watching files is refused.
    await probe_runtime(runtime, level, arena)


@pytest.mark.parametrize("runtime", ["python", "node", "java", "c"])
async def test_runtimes_start_where_bots_are_stopped_by_signal(
    runtime: str, arena: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No control group (a regular user's host): the filter also refuses SIGCONT, ptrace,
    # timer_create and mq_notify (referee.sandbox.seccomp); no runtime needs them to start.
    monkeypatch.setattr(launch_module, "_tree_group", lambda kind, limits: None)
    await probe_runtime(runtime, "standard", arena)


async def probe_runtime(runtime: str, level: str, arena: Path) -> None:
    """Start a probe program of ``runtime`` at ``level`` and check what it reports."""
    program = {"python": [sys.executable, "-c", PYTHON], "node": ["node", "-e", NODE], "java": ["java", "Probe.java"],
               "c": [str(arena / "probe")]}  # fmt: skip
    needs = {"node": "node", "java": "java", "c": "cc"}
    if runtime in needs and shutil.which(needs[runtime]) is None:
        pytest.skip(f"{needs[runtime]} is not installed")
    (arena / "Probe.java").write_text(JAVA)
    os.chmod(arena / "Probe.java", 0o644)
    if runtime == "c":
        (arena / "probe.c").write_text(C)
        await trio.run_process(["cc", "-O1", "-o", str(arena / "probe"), str(arena / "probe.c")])
        os.chmod(arena / "probe", 0o755)
    spec = BotSpec(name=runtime, command=program[runtime], cwd=str(arena))
    seen = report(await stderr_inside(spec, level, "runtime: done"), "runtime")
    assert int(seen["cpus"]) >= 1
    assert seen["stat"] == f"refused: {errno.EACCES}"
    if runtime in ("python", "c"):
        assert seen["locked"] == "yes"
    if runtime == "python":
        assert seen["sqlite"] == "1"
    if runtime in ("node", "c"):
        assert seen["watch"] == f"refused: {errno.ENOSYS}"
    if runtime == "java":
        assert int(seen["interfaces"]) >= 1
    elif runtime != "c":
        assert seen["interfaces"] == f"refused: {errno.EAFNOSUPPORT}"
        assert seen["resolved"] in ("127.0.0.1", "::1")  # AI_ADDRCONFIG's check copes without netlink


# --- the filter's program, on both known machines ---------------------------------------

ALLOW = 0x7FFF0000
NUMBERS = {  # the kernel's own tables (arch/x86/entry/syscalls, include/uapi/asm-generic/unistd.h)
    "x86_64": {"read": 0, "ioctl": 16, "socket": 41, "clone": 56, "unshare": 272, "keyctl": 250, "add_key": 248,
               "request_key": 249, "clone3": 435, "io_uring_setup": 425, "socketpair": 53},
    "aarch64": {"read": 63, "ioctl": 29, "socket": 198, "clone": 220, "unshare": 97, "keyctl": 219, "add_key": 217,
                "request_key": 218, "clone3": 435, "io_uring_setup": 425, "socketpair": 199},
}  # fmt: skip
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def verdict(program: bytes, arch: int, nr: int, *args: int) -> int:
    """What the classic BPF ``program`` returns for a call (a small interpreter of the four opcodes it uses)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args, *[0] * (6 - len(args)))
    code = [struct.unpack_from("<HBBI", program, at) for at in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == 0x20:  # load a word of seccomp_data
            acc, pc = struct.unpack_from("<I", data, k)[0], pc + 1
        elif op == 0x15:  # jump if equal
            pc += 1 + (jt if acc == k else jf)
        elif op == 0x45:  # jump if any bit set
            pc += 1 + (jt if acc & k else jf)
        else:
            assert op == 0x06, f"unexpected opcode {op:#x}"
            return k


def refused(code: int) -> int:
    return 0x00050000 | code


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
@pytest.mark.parametrize("level", LEVELS)
def test_the_filter_allow_lists_socket_families_and_refuses_user_namespaces_keyrings_and_tiocsti(
    machine: str, level: str
) -> None:
    program = filter_for(level, machine)  # type: ignore[arg-type]
    nr, arch = NUMBERS[machine], AUDIT_ARCH[machine]

    def call(name: str, *args: int) -> int:
        return verdict(program, arch, nr[name], *args)

    strict = level == "strict"
    high = 0xFFFF_FFFF_0000_0000  # upper bits the kernel ignores in an int argument
    assert call("socket", 2, 1, 0) == call("socket", 10, 2, 0) == call("socket", high | 2, 1, 0) == ALLOW
    assert call("socket", 1, 1, 0) == refused(errno.EACCES)
    for family in (40, 16, 17, 38, 31, 44, 46, 0, 255, high | 40):  # 46: the first family Linux does not have yet
        assert call("socket", family, 1, 0) == refused(errno.EAFNOSUPPORT), family
    assert call("socketpair", 1, 1, 0) == call("read", 0) == ALLOW
    for request in (0x5412, 0x541C, high | 0x5412):  # TIOCSTI, TIOCLINUX: the kernel reads 32 bits
        assert call("ioctl", 0, request, 0) == refused(errno.EPERM), hex(request)
    assert call("ioctl", 0, 0x5401, 0) == call("ioctl", 0, 0x5413, 0) == ALLOW  # TCGETS, TIOCGWINSZ
    assert call("unshare", 0x10000000) == call("clone", 0x10000000 | 17) == refused(errno.EPERM)
    assert call("unshare", 0x400) == (refused(errno.EPERM) if strict else ALLOW)  # CLONE_FILES
    assert call("clone", 0x40000000 | 17) == (refused(errno.EPERM) if strict else ALLOW)  # CLONE_NEWNET
    assert call("clone", 0x003D0F00) == ALLOW  # a thread, as pthread_create asks
    assert call("clone3", 0, 88) == call("io_uring_setup", 8, 0) == refused(errno.ENOSYS)
    assert call("keyctl", 0) == call("add_key", 0) == call("request_key", 0) == refused(errno.EPERM)
    assert verdict(program, 0x40000003, nr["read"]) == refused(errno.EPERM)  # 32-bit x86
    if machine == "x86_64":
        assert verdict(program, arch, 0x40000000 | nr["read"]) == refused(errno.EPERM)  # x32


SHARED_STATE = {  # the calls that reach kernel state kept per file or per machine (the kernel's tables)
    "x86_64": {"flock": 73, "fcntl": 72, "inotify_init": 253, "inotify_init1": 294, "inotify_add_watch": 254,
               "fanotify_init": 300, "fanotify_mark": 301, "mincore": 27, "cachestat": 451, "preadv2": 327,
               "io_setup": 206, "io_submit": 209, "sysinfo": 99, "kill": 62, "tkill": 200, "tgkill": 234,
               "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424, "bpf": 321,
               "perf_event_open": 298, "userfaultfd": 323},
    "aarch64": {"flock": 32, "fcntl": 25, "inotify_init1": 26, "inotify_add_watch": 27, "fanotify_init": 262,
                "fanotify_mark": 263, "mincore": 232, "cachestat": 451, "preadv2": 286, "io_setup": 0,
                "io_submit": 2, "sysinfo": 179, "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
                "rt_tgsigqueueinfo": 240, "pidfd_send_signal": 424, "bpf": 280, "perf_event_open": 241,
                "userfaultfd": 282},
}  # fmt: skip


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
@pytest.mark.parametrize("level", LEVELS)
def test_the_filter_takes_locks_watches_page_cache_probes_and_sigcont_away(machine: str, level: str) -> None:
    program = filter_for(level, machine)  # type: ignore[arg-type]
    nr, arch = SHARED_STATE[machine], AUDIT_ARCH[machine]

    def call(name: str, *args: int) -> int:
        return verdict(program, arch, nr[name], *args)

    no_effect = refused(0)  # SECCOMP_RET_ERRNO with 0: the call returns 0 and is not made
    assert call("flock", 3, 2) == call("flock", 3, 1 | 4) == no_effect
    for command in (6, 7, 37, 38):  # F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW
        assert call("fcntl", 3, command, 0) == no_effect, command
    assert call("fcntl", 3, 1024, 0) == refused(errno.EACCES)  # F_SETLEASE
    assert call("fcntl", 3, 1026, 0) == refused(errno.EINVAL)  # F_NOTIFY
    for command in (0, 1, 2, 3, 4, 5, 36, 1025, 1030, 1031):  # dup, flags, F_GETLK, F_OFD_GETLK, pipes...
        assert call("fcntl", 3, command, 0) == ALLOW, command
    for name in ("inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark", "mincore", "cachestat",
                 "io_setup", "io_submit"):  # fmt: skip
        assert call(name, 0) == refused(errno.ENOSYS), name
    if machine == "x86_64":
        assert call("inotify_init") == refused(errno.ENOSYS)
    assert call("preadv2", 3, 0, 1, 0, 0, 0x08) == call("preadv2", 3, 0, 1, 0, 0, 0x18) == refused(errno.EOPNOTSUPP)
    assert call("preadv2", 3, 0, 1, 0, 0, 0) == call("preadv2", 3, 0, 1, 0, 0, 0x10) == ALLOW  # RWF_APPEND
    assert call("bpf", 0) == call("perf_event_open", 0) == call("userfaultfd", 0) == refused(errno.EPERM)
    # sysinfo goes through the level's filter at both levels, to the seat's supervisor (below): an
    # error here would outrank its notice, as the kernel takes the strongest verdict of all filters.
    assert call("sysinfo", 0) == ALLOW


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_supervisors_filter_hands_sysinfo_alone_to_its_listener(machine: str) -> None:
    program = sysinfo_notice_filter(machine)
    nr, arch = SHARED_STATE[machine], AUDIT_ARCH[machine]
    assert verdict(program, arch, nr["sysinfo"], 0) == 0x7FC00000  # SECCOMP_RET_USER_NOTIF
    for name in ("flock", "fcntl", "mincore", "bpf"):  # the level's filter decides these
        assert verdict(program, arch, nr[name], 0) == ALLOW, name
    assert verdict(program, 0x40000003, nr["sysinfo"], 0) == ALLOW  # another ABI: the level's filter refuses it


WAKERS = {  # the calls that could wake a tree stopped by SIGSTOP
    "x86_64": {"kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
               "pidfd_send_signal": 424, "ptrace": 101, "timer_create": 222, "mq_notify": 244, "fcntl": 72,
               "prctl": 157, "getpid": 39},
    "aarch64": {"kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240,
                "pidfd_send_signal": 424, "ptrace": 117, "timer_create": 107, "mq_notify": 184, "fcntl": 25,
                "prctl": 167, "getpid": 172},
}  # fmt: skip


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("by_signal", [False, True])
def test_where_the_referee_freezes_by_signal_nothing_can_send_sigcont_or_resume_a_stopped_process(
    machine: str, level: str, by_signal: bool
) -> None:
    program = filter_for(level, machine, freeze_by_signal=by_signal)  # type: ignore[arg-type]
    nr, arch = WAKERS[machine], AUDIT_ARCH[machine]

    def call(name: str, *args: int) -> int:
        return verdict(program, arch, nr[name], *args)

    for name, where in (("kill", 1), ("tkill", 1), ("tgkill", 2), ("rt_sigqueueinfo", 1), ("rt_tgsigqueueinfo", 2),
                        ("pidfd_send_signal", 1)):  # fmt: skip
        arguments = [5, 5, 5]
        arguments[where] = 18  # SIGCONT
        assert call(name, *arguments) == (refused(errno.EPERM) if by_signal else ALLOW), name
        for signal_number in (9, 15, 19, 10):  # SIGKILL, SIGTERM, SIGSTOP, SIGUSR1
            arguments[where] = signal_number
            assert call(name, *arguments) == ALLOW, (name, signal_number)
    # A tracer may resume its stopped tracee; a timer's or a queue's signal lies in memory.
    assert call("ptrace", 16) == (refused(errno.EPERM) if by_signal or level == "strict" else ALLOW)
    assert call("timer_create", 0, 0, 0) == call("mq_notify", 3, 0) == (refused(errno.ENOSYS) if by_signal else ALLOW)
    # SIGCONT as a descriptor's I/O signal (F_SETSIG) or as a parent's death signal: refused; others stay.
    assert call("fcntl", 3, 10, 18) == call("prctl", 1, 18) == (refused(errno.EINVAL) if by_signal else ALLOW)
    assert call("fcntl", 3, 10, 29) == call("prctl", 1, 9) == call("prctl", 15, 18) == ALLOW
    assert call("fcntl", 3, 6, 0) == refused(0)  # the rest of fcntl's block still holds
    assert call("getpid") == ALLOW
