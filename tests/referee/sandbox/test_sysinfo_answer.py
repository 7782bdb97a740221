"""sysinfo answered with fixed figures by each seat's own supervisor (issue 42; referee.sandbox.sysinfo_answer).

Each test starts a real bot as the referee starts one, at ``standard`` and
``strict``: what programs read through ``sysinfo`` (the C library's
``sysconf(_SC_PHYS_PAGES)``, Python's ``os.sysconf``) is the seat's memory
bound, and what a hostile bot does to its supervisor (bad addresses, a flood
of calls, signals) costs only itself. The writer/reader pair that shows
sysinfo carries no bit between seats is in test_seat_channels.py.
"""

from __future__ import annotations

import os
import resource
import shutil
import struct
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from referee.bots import BotSpec
from referee.errors import BotCrashed
from referee.process import BotProcess, open_bot
from referee.sandbox import SandboxUnavailable, require_level
from referee.sandbox import launch as launch_module
from referee.sandbox.strays import descendants, namespace_pid
from referee.sandbox.sysinfo_answer import ANSWER_LAYOUT, answer_bytes
from referee.settings import BotLimits, RefereeSettings

pytestmark = pytest.mark.slow

LEVELS = ["standard", "strict"]
BOUND_MB = 1536
"""The seats' memory bound in these tests: what their sysinfo must report as total and free memory."""

SYSINFO = r"""
import ctypes, os, sys
class SysInfo(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3), ("totalram", ctypes.c_ulong),
                ("freeram", ctypes.c_ulong), ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
                ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong), ("procs", ctypes.c_ushort),
                ("pad", ctypes.c_ushort), ("totalhigh", ctypes.c_ulong), ("freehigh", ctypes.c_ulong),
                ("mem_unit", ctypes.c_uint), ("rest", ctypes.c_char * 8)]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NUMBER = {"x86_64": 99, "aarch64": 179}[os.uname().machine]

def call(address):
    result = libc.syscall(ctypes.c_long(NUMBER), ctypes.c_void_p(address))
    return "ok" if result == 0 else "errno %d" % ctypes.get_errno()
"""

FIGURES = (
    SYSINFO
    + r"""
info = SysInfo()
assert libc.sysinfo(ctypes.byref(info)) == 0, ctypes.get_errno()
pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
print(info.totalram * info.mem_unit, info.freeram * info.mem_unit, info.sharedram, info.bufferram,
      info.totalswap, list(info.loads), info.procs, info.uptime > 0, pages, flush=True)
"""
)

C_SYSCONF = r"""
#include <stdio.h>
#include <unistd.h>
int main(void) {
    printf("%ld %ld\n", sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE), sysconf(_SC_AVPHYS_PAGES) * sysconf(_SC_PAGESIZE));
    return 0;
}
"""


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder of the host open to every user, for bots with uids of their own."""
    made = Path(tempfile.mkdtemp(prefix="famiglia-sysinfo-", dir="/tmp"))
    made.chmod(0o755)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def settings(level: str) -> RefereeSettings:
    return RefereeSettings(sandbox=require_level(level), grace_ms=200, limits=BotLimits(memory_mb=BOUND_MB))


@asynccontextmanager
async def python_bot(level: str, where: Path, code: str) -> AsyncIterator[BotProcess]:
    spec = BotSpec(name="sysinfo", command=[sys.executable, "-c", code], cwd=str(where))
    async with open_bot(spec, settings(level)) as bot:
        yield bot


async def line_of(bot: BotProcess) -> str:
    with trio.fail_after(60):  # a guard against a hang, far beyond a start on a loaded host
        return (await bot.readline()).decode()


# --- the figures ---------------------------------------------------------------------


def test_the_answer_is_struct_sysinfo_with_the_bound_as_total_and_free_and_nothing_moving() -> None:
    fields = struct.unpack(ANSWER_LAYOUT, answer_bytes(BOUND_MB << 20))
    assert struct.calcsize(ANSWER_LAYOUT) == 112  # the kernel's struct sysinfo on a 64-bit machine
    uptime, loads, (total, free, shared, buffered, swap, free_swap), procs = (
        fields[0],
        fields[1:4],
        fields[4:10],
        fields[10],
    )
    assert (total, free) == (BOUND_MB << 20, BOUND_MB << 20) and fields[-1] == 1  # mem_unit: bytes
    assert loads == (0, 0, 0) and (shared, buffered, swap, free_swap) == (0, 0, 0, 0) and procs == 1 and uptime == 0


@pytest.mark.parametrize("level", LEVELS)
async def test_pythons_sysconf_and_sysinfo_tell_the_seats_bound_and_nothing_of_the_machine(
    level: str, folder: Path
) -> None:
    async with python_bot(level, folder, FIGURES) as bot:
        words = (await line_of(bot)).split(" ", 5)
    total, free, shared, buffered, swap = (int(w) for w in words[:5])
    bound = min(BOUND_MB << 20, _machine_memory())
    assert (total, free, shared, buffered, swap) == (bound, bound, 0, 0, 0)
    assert words[5] == "[0, 0, 0] 1 True " + str(bound)  # no load, one process, a real uptime, sysconf's pages


def _machine_memory() -> int:
    with open("/proc/meminfo", encoding="ascii") as handle:
        return int(handle.readline().split()[1]) << 10


@pytest.mark.parametrize("linking", ["dynamic", "static"])
@pytest.mark.parametrize("level", LEVELS)
async def test_a_c_programs_sysconf_tells_the_seats_bound(level: str, linking: str, folder: Path) -> None:
    # The C library's sysconf(_SC_PHYS_PAGES) reads sysinfo and ignores its error: refused, it
    # returned garbage. A static program (as Go's and many others are) goes through the same call.
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc) on this host")
    (folder / "sysconf.c").write_text(C_SYSCONF)
    program = folder / "sysconf"
    flags = ["-static"] if linking == "static" else []
    built = await trio.run_process([compiler, *flags, "-O1", "-o", str(program), str(folder / "sysconf.c")],
                                   capture_stdout=True, capture_stderr=True, check=False)  # fmt: skip
    if built.returncode != 0:
        pytest.skip(f"cannot link a {linking} C program here: {built.stderr.decode().strip()[-200:]}")
    program.chmod(0o755)
    spec = BotSpec(name="sysconf", command=[str(program)], cwd=str(folder))
    async with open_bot(spec, settings(level)) as bot:
        physical, available = (int(word) for word in (await line_of(bot)).split())
    bound = min(BOUND_MB << 20, _machine_memory())
    assert (physical, available) == (bound, bound)


# --- a hostile bot and its supervisor --------------------------------------------------

BAD_ADDRESSES = (
    SYSINFO
    + r"""
info = SysInfo()
# A file of the system mapped shared and read-only: the supervisor writes as a debugger would,
# and a debugger may not write a shared mapping the process cannot write itself.
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
with open(sys.executable, "rb") as handle:
    shared = libc.mmap(None, 4096, 1, 1, handle.fileno(), 0)  # PROT_READ, MAP_SHARED
    before = ctypes.string_at(shared, 112)
    print(call(0), call(0xFFFF800000001000), call(shared), ctypes.string_at(shared, 112) == before,
          call(ctypes.addressof(info)), info.totalram > 0, flush=True)
"""
)


@pytest.mark.parametrize("level", LEVELS)
async def test_sysinfo_into_memory_the_bot_has_not_or_shares_read_only_fails_with_efault_and_is_answered_after(
    level: str, folder: Path
) -> None:
    async with python_bot(level, folder, BAD_ADDRESSES) as bot:
        # EFAULT for no memory, the kernel's and a shared file's; then answered.
        assert await line_of(bot) == "errno 14 errno 14 errno 14 True ok True"


FLOOD = (
    SYSINFO
    + r"""
import threading
info = SysInfo()
def flood():
    for _ in range(3000):
        libc.syscall(ctypes.c_long(NUMBER), ctypes.byref(info))
threads = [threading.Thread(target=flood) for _ in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print("done", flush=True)
"""
)


async def test_a_flood_of_sysinfo_calls_costs_the_referee_no_cpu(folder: Path) -> None:
    # 24,000 calls from eight threads: the supervisor that answers them runs in the seat's own
    # sandbox and control group, so the referee only waits for the bot's line.
    async with python_bot("standard", folder, FLOOD) as bot:
        before = resource.getrusage(resource.RUSAGE_SELF)
        assert await line_of(bot) == "done"
        after = resource.getrusage(resource.RUSAGE_SELF)
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert spent < 0.25, f"the referee spent {spent:.2f} s of CPU while a bot called sysinfo 24,000 times"


ATTACKS_ITS_SUPERVISOR = (
    SYSINFO
    + r"""
import signal, time
supervisor = os.getppid()
for signum in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGSEGV):
    try:
        os.kill(supervisor, signum)  # the kernel drops it (the user's uid), or refuses it (root's)
    except PermissionError:
        pass
try:
    os.kill(-1, signal.SIGKILL)  # every process this one may signal but itself and the namespace's init
except ProcessLookupError:  # none: the init is spared
    pass
time.sleep(0.2)
info = SysInfo()
print(supervisor, call(ctypes.addressof(info)), info.totalram > 0, flush=True)
"""
)


@pytest.mark.parametrize("level", LEVELS)
async def test_a_bot_can_neither_kill_nor_stop_its_supervisor_and_its_calls_are_answered(
    level: str, folder: Path
) -> None:
    # The supervisor is its PID namespace's init: the kernel keeps signals sent from inside the
    # namespace off an init that has no handler for them, SIGKILL and SIGSTOP always (and with
    # the referee as root, it is root: the bot's uid may not signal it at all).
    async with python_bot(level, folder, ATTACKS_ITS_SUPERVISOR) as bot:
        assert await line_of(bot) == "1 ok True"
        assert bot.process.returncode is None


@pytest.mark.parametrize(("code", "reason"), [("sys.exit(7)", "exited with code 7"),
                                               ("os.kill(os.getpid(), signal.SIGSEGV)", "killed by SIGSEGV")])  # fmt: skip
async def test_the_bots_own_end_is_reported_through_its_supervisor(code: str, reason: str, folder: Path) -> None:
    # The supervisor is the sandbox's pid 2, whose end bwrap reports: it ends as the bot did.
    async with python_bot("standard", folder, f"import os, signal, sys\n{code}\n") as bot:
        with trio.fail_after(60), pytest.raises(BotCrashed, match=reason):
            await bot.readline()


async def test_the_bot_inherits_no_signal_disposition_of_its_supervisor(folder: Path) -> None:
    # The supervisor's Python ignores SIGPIPE and SIGXFSZ from its start, and the supervisor
    # ignores SIGTERM: the bot must still die of a write past file_mb (SIGXFSZ), a broken
    # pipe and the referee's SIGTERM. grep shows the mask of ignored signals it was given.
    grep = shutil.which("grep")
    assert grep is not None
    spec = BotSpec(name="signals", command=[grep, "^SigIgn", "/proc/self/status"], cwd=str(folder))
    async with open_bot(spec, settings("standard")) as bot:
        assert (await line_of(bot)).split() == ["SigIgn:", "0" * 16]


def test_a_kernel_without_user_notification_refuses_both_levels_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A level is applied in full or not at all: without a listener sysinfo would tell the machine's figures.
    monkeypatch.setattr(launch_module, "user_notification_available", lambda: False)
    for level in LEVELS:
        with pytest.raises(
            SandboxUnavailable, match=r"seccomp user notification \(Linux 5.0 or later\).*--sandbox none"
        ):
            require_level(level)
    assert require_level("none") == "none"


async def test_a_root_referees_supervisor_keeps_only_the_capabilities_to_write_the_bots_memory(folder: Path) -> None:
    # It runs as root (bwrap's monitor, root without capabilities, must be able to kill it when the
    # referee dies), so it gives up everything else at once, for good: no_new_privs and the bounding set.
    if os.geteuid() != 0:
        pytest.skip("as a regular user the supervisor is the user's uid, with no capability to keep")
    async with python_bot("standard", folder, "import sys\nprint('up', flush=True)\nsys.stdin.read()\n") as bot:
        assert await line_of(bot) == "up"
        (init,) = [pid for pid in descendants(bot.pid) if namespace_pid(pid) == 1]
        status = dict(line.split(":\t", 1) for line in Path(f"/proc/{init}/status").read_text().splitlines())
    kept = f"{1 << 1 | 1 << 19:016x}"  # CAP_DAC_OVERRIDE, CAP_SYS_PTRACE
    assert status["Uid"].split() == ["0"] * 4
    assert (status["CapEff"], status["CapPrm"], status["CapBnd"]) == (kept, kept, kept)
    assert (status["CapInh"], status["CapAmb"], status["NoNewPrivs"]) == ("0" * 16, "0" * 16, "1")
