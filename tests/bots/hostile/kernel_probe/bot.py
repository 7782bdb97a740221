"""Tries the kernel's shared interfaces that the namespaces do not cover, reports each, then passes.

Each line on stderr is `kernel_probe: <probe> ok` or `kernel_probe: <probe> refused: <ERRNO>`
(the errno's name), then `kernel_probe: done`. The probes: sockets of several
families, an IPv4 connection out, new user namespaces (unshare, clone, clone3),
kernel keyrings, typing into a terminal (TIOCSTI, TIOCLINUX) it opens itself,
and the CPU count. Each argument `read:<path>` reads that file (or lists that
folder) and reports `read:<path> <n> bytes` (or `entries`).
"""

import ctypes
import errno
import fcntl
import json
import os
import platform
import socket
import sys
import termios

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NUMBERS = {  # system call numbers the C library has no wrapper for
    "x86_64": {"clone": 56, "clone3": 435, "keyctl": 250, "add_key": 248},
    "aarch64": {"clone": 220, "clone3": 435, "keyctl": 219, "add_key": 217},
}[platform.machine()]
CLONE_NEWUSER = 0x10000000
TIOCLINUX = 0x541C
FAMILIES = {"vsock": (40, socket.SOCK_STREAM), "netlink": (16, socket.SOCK_RAW), "packet": (17, socket.SOCK_RAW),
            "alg": (38, socket.SOCK_SEQPACKET), "bluetooth": (31, socket.SOCK_STREAM), "xdp": (44, socket.SOCK_RAW),
            "inet": (2, socket.SOCK_STREAM), "inet6": (10, socket.SOCK_STREAM)}  # fmt: skip


def say(text):
    sys.stderr.write(f"kernel_probe: {text}\n")
    sys.stderr.flush()


def report(probe, attempt):
    try:
        attempt()
    except OSError as exc:
        say(f"{probe} refused: {errno.errorcode.get(exc.errno or 0, exc.errno)}")
    else:
        say(f"{probe} ok")


def raw(name, *args):
    """A system call by number (integer arguments as longs); OSError from its errno."""
    result = libc.syscall(NUMBERS[name], *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if result == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def family(number, kind):
    def attempt():
        socket.socket(number, kind).close()

    return attempt


def connect_out():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        sock.connect(("192.0.2.1", 9))  # a documentation address: only a real route reaches it


def in_child(attempt):
    """``attempt`` in a child process, which alone changes (a new namespace would change the next probes)."""

    def run():
        reader, writer = os.pipe()
        child = os.fork()
        if child == 0:
            code = 0
            try:
                attempt()
            except OSError as exc:
                code = exc.errno or 255
            os.write(writer, bytes([code]))
            os._exit(0)
        os.close(writer)
        code = os.read(reader, 1)[0]
        os.close(reader)
        os.waitpid(child, 0)
        if code:
            raise OSError(code, os.strerror(code))

    return run


def unshare_user():
    if libc.unshare(CLONE_NEWUSER) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def clone_user():
    pid = raw("clone", CLONE_NEWUSER | 17, 0, 0, 0, 0)  # 17: SIGCHLD, as fork
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def clone3():
    raw("clone3", 0, 0)  # no arguments: the kernel says EINVAL, a filter ENOSYS


def keyctl():
    raw("keyctl", 0, -3, 1)  # KEYCTL_GET_KEYRING_ID of the session keyring, creating it


def add_key():
    raw(
        "add_key", ctypes.c_char_p(b"user"), ctypes.c_char_p(b"famiglia"), ctypes.c_char_p(b"x"), 1, -2
    )  # -2: process keyring


def on_own_terminal(request, argument):
    """The ioctl on a pty that a child of ours made its controlling terminal (TIOCSTI needs that)."""

    def attempt():
        master, slave = os.openpty()
        try:

            def in_new_session():
                os.setsid()
                fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
                fcntl.ioctl(slave, request, argument)

            in_child(in_new_session)()
        finally:
            os.close(master)
            os.close(slave)

    return attempt


def read(path):
    if os.path.isdir(path):
        return f"{len(os.listdir(path))} entries"
    with open(path, "rb") as handle:
        return f"{len(handle.read())} bytes"


for name, (number, kind) in FAMILIES.items():
    report(f"socket:{name}", family(number, kind))
report("socketpair", lambda: [end.close() for end in socket.socketpair()])
report("connect:inet", connect_out)
report("unshare:newuser", in_child(unshare_user))
report("clone:newuser", in_child(clone_user))
report("clone3", clone3)
report("keyctl", keyctl)
report("add_key", add_key)
report("ioctl:TIOCSTI", on_own_terminal(termios.TIOCSTI, b"x"))
report("ioctl:TIOCLINUX", on_own_terminal(TIOCLINUX, bytes([6, 0, 0, 0])))  # 6: the shift state
report("ioctl:TIOCGWINSZ", on_own_terminal(termios.TIOCGWINSZ, bytes(8)))  # an ordinary terminal request
say(f"cpus {os.cpu_count()}")
for argument in sys.argv[1:]:
    path = argument.removeprefix("read:")
    try:
        say(f"read:{path} {read(path)}")
    except OSError as exc:
        say(f"read:{path} refused: {errno.errorcode.get(exc.errno or 0, exc.errno)}")
say("done")

PASS = {"type": "place", "placements": []}
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        sys.stdout.write(json.dumps({"type": "ready", "name": "kernel_probe"}) + "\n")
    elif message["type"] == "request":
        action = (message.get("options") or [PASS])[0]
        sys.stdout.write(json.dumps({"type": "action", "id": message["id"], "action": action}) + "\n")
    sys.stdout.flush()
