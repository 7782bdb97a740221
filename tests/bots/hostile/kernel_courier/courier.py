"""Carries bits from one seat to another through kernel state both can reach: one command per line.

Not a game bot: a test drives two of them, a writer and a reader, each started
as the referee starts a bot, one line at a time on stdin; each answers one
line on stdout. Commands (``<targets>``: files or folders both seats see, one
bit each; ``<count>``: how many bits, for channels with no file):

- ``prepare <channel> <tag> <targets|count>``: the reader gets ready (sets its
  watches) before the writer writes; ``ok`` or ``refused <ERRNO>``;
- ``send <channel> <tag> <bits> <targets|count>``: the writer sets each 1 and
  holds it; ``ok`` or ``refused <ERRNO>``;
- ``receive <channel> <tag> <targets|count>``: ``bits <0 and 1 ...>`` or ``refused <ERRNO>``;
- ``hold <channel> <amount>`` / ``sample <channel>``: for the machine's
  figures (``pty_nr``: terminals; ``procs``: threads, by ``sysinfo``;
  ``meminfo``: shared memory in MiB, ``Shmem`` in kB; ``sysinfo_shared``:
  the same memory, ``sysinfo``'s shared figure in kB): the writer takes
  ``amount`` of them; the reader reads the figure, ``value <n>`` or ``refused <ERRNO>``;
- ``clear``: let go of everything held (locks, watches, objects, threads, memory); ``ok``.

``<tag>`` is a number that keeps one test's names (IPC keys, socket and queue
names) apart from another's. A bit the reader cannot read at all is
``refused``; one it reads the same whatever the writer did carries nothing.
"""

import ctypes
import errno
import fcntl
import mmap
import os
import platform
import signal
import socket
import struct
import sys
import threading

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
NUMBERS = {"x86_64": {"cachestat": 451, "add_key": 248, "keyctl": 250},
           "aarch64": {"cachestat": 451, "add_key": 217, "keyctl": 219}}[platform.machine()]  # fmt: skip
F_OFD_GETLK, F_OFD_SETLK = 36, 37
IN_OPEN, IN_ACCESS, IN_NONBLOCK = 0x20, 0x1, os.O_NONBLOCK
FAN_REPORT_FID, FAN_NONBLOCK, FAN_MARK_ADD, FAN_OPEN, FAN_ACCESS = 0x200, 0x2, 0x1, 0x20, 0x1
AT_FDCWD = -100
IPC_CREAT, IPC_RMID = 0o1000, 0
KEY_SPEC_USER_KEYRING, KEYCTL_SEARCH, KEYCTL_UNLINK = -4, 10, 9

held = []  # what the writer holds: descriptors, sockets, threads' stop event, memory
undo = []  # how to remove what it made outside itself (IPC objects, files, keys)
watches = {}  # the reader's: channel -> its state


class Refused(Exception):
    pass


def check(result):
    """A C call's result; OSError from errno when it is -1."""
    if result == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def raw(name, *args):
    return check(libc.syscall(NUMBERS[name], *[ctypes.c_long(a) if isinstance(a, int) else a for a in args]))


def lock_record(kind):
    return struct.pack("hhqqi", kind, os.SEEK_SET, 0, 0, 0)


def a_file_in(folder):
    return next(os.path.join(folder, n) for n in sorted(os.listdir(folder)) if os.path.isfile(os.path.join(folder, n)))


def touch(path):
    """Open and read a byte of ``path``: an open and an access, a page loaded."""
    with open(path, "rb") as handle:
        handle.read(1)


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def ipc_key(tag, index):
    return (int(tag) * 64 + index) & 0x7FFFFFFF


def name(tag, index):
    return f"famiglia-courier-{tag}-{index}"


# --- the writer: one function per channel, given (tag, index) of each 1 and its target --------


def send_flock(tag, index, target):
    fd = os.open(target, os.O_RDONLY)
    held.append(fd)
    fcntl.flock(fd, fcntl.LOCK_EX)


def send_posix(tag, index, target):
    fd = os.open(target, os.O_RDONLY)
    held.append(fd)
    fcntl.fcntl(fd, fcntl.F_SETLK, lock_record(fcntl.F_RDLCK))


def send_ofd(tag, index, target):
    fd = os.open(target, os.O_RDONLY)
    held.append(fd)
    fcntl.fcntl(fd, F_OFD_SETLK, lock_record(fcntl.F_RDLCK))


def send_dnotify(tag, index, target):
    touch(a_file_in(target))


def send_opened(tag, index, target):
    touch(target)


def send_cached(tag, index, target):
    touch(target)


def send_msg(tag, index, target):
    queue = check(libc.msgget(ipc_key(tag, index), IPC_CREAT | 0o600))
    undo.append(lambda: libc.msgctl(queue, IPC_RMID, None))


def send_shm(tag, index, target):
    segment = check(libc.shmget(ipc_key(tag, index), 4096, IPC_CREAT | 0o600))
    undo.append(lambda: libc.shmctl(segment, IPC_RMID, None))


def send_sem(tag, index, target):
    semaphores = check(libc.semget(ipc_key(tag, index), 1, IPC_CREAT | 0o600))
    undo.append(lambda: libc.semctl(semaphores, 0, IPC_RMID))


def send_mq(tag, index, target):
    queue = f"/{name(tag, index)}".encode()
    fd = check(libc.mq_open(queue, os.O_CREAT | os.O_RDWR, 0o600, None))
    held.append(fd)
    undo.append(lambda: libc.mq_unlink(queue))


def send_abstract(tag, index, target):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    held.append(sock)
    sock.bind("\0" + name(tag, index))
    sock.listen()


def send_file(folder):
    def send(tag, index, target):
        path = os.path.join(folder, name(tag, index))
        with open(path, "w"):
            pass
        undo.append(lambda: os.unlink(path))

    return send


def send_key(tag, index, target):
    serial = raw("add_key", b"user", name(tag, index).encode(), b"1", 1, KEY_SPEC_USER_KEYRING)
    undo.append(lambda: raw("keyctl", KEYCTL_UNLINK, serial, KEY_SPEC_USER_KEYRING))


# --- the reader: prepare (optional), then one function per bit ----------------------------


def prepare_dnotify(tag, targets):
    fired = [False] * len(targets)
    for index, folder in enumerate(targets):
        number = signal.SIGRTMIN + index

        def note(signum, frame, index=index):
            fired[index] = True

        signal.signal(number, note)
        fd = os.open(folder, os.O_RDONLY)
        held.append(fd)
        fcntl.fcntl(fd, fcntl.F_SETSIG, number)
        fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
    return fired


def prepare_inotify(tag, targets):
    fd = check(libc.inotify_init1(IN_NONBLOCK))
    held.append(fd)
    numbers = {
        check(libc.inotify_add_watch(fd, target.encode(), IN_OPEN | IN_ACCESS)): i for i, target in enumerate(targets)
    }
    return fd, numbers, [False] * len(targets)


def prepare_fanotify(tag, targets):
    groups = []
    for target in targets:
        fd = check(libc.fanotify_init(FAN_REPORT_FID | FAN_NONBLOCK, os.O_RDONLY))
        held.append(fd)
        check(libc.fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN | FAN_ACCESS, AT_FDCWD, target.encode()))
        groups.append(fd)
    return groups


def receive_flock(state, tag, index, target):
    with open(target, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def receive_lock(command):
    def receive(state, tag, index, target):
        with open(target, "rb") as handle:
            answer = fcntl.fcntl(handle, command, lock_record(fcntl.F_WRLCK))
        return struct.unpack("hhqqi", answer)[0] != fcntl.F_UNLCK

    return receive


def receive_dnotify(state, tag, index, target):
    return state[index]


def receive_inotify(state, tag, index, target):
    fd, numbers, seen = state
    while True:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            break
        at = 0
        while at < len(data):
            wd, _, _, length = struct.unpack_from("iIII", data, at)
            if wd in numbers:
                seen[numbers[wd]] = True
            at += 16 + length
    return seen[index]


def receive_fanotify(state, tag, index, target):
    try:
        return bool(os.read(state[index], 65536))
    except BlockingIOError:
        return False


def receive_nowait(state, tag, index, target):
    fd = os.open(target, os.O_RDONLY)
    try:
        os.preadv(fd, [bytearray(1)], 0, os.RWF_NOWAIT)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def receive_mincore(state, tag, index, target):
    fd = os.open(target, os.O_RDONLY)
    try:
        address = libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            check(-1)
        try:
            vector = (ctypes.c_ubyte * 1)()
            check(libc.mincore(address, 4096, vector))
            return bool(vector[0] & 1)
        finally:
            libc.munmap(address, 4096)
    finally:
        os.close(fd)


def receive_cachestat(state, tag, index, target):
    fd = os.open(target, os.O_RDONLY)
    try:
        span = struct.pack("QQ", 0, 0)
        figures = ctypes.create_string_buffer(40)
        raw("cachestat", fd, span, figures, 0)
        return struct.unpack("5Q", figures.raw)[0] > 0
    finally:
        os.close(fd)


def receive_exists(call):
    def receive(state, tag, index, target):
        try:
            call(tag, index)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOKEY, errno.ECONNREFUSED):
                return False
            raise
        return True

    return receive


def open_mq(tag, index):
    os.close(check(libc.mq_open(f"/{name(tag, index)}".encode(), os.O_RDONLY)))


def connect_abstract(tag, index):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect("\0" + name(tag, index))


def search_key(tag, index):
    raw("keyctl", KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, b"user", name(tag, index).encode(), 0)


def stat_in(folder):
    return lambda tag, index: os.stat(os.path.join(folder, name(tag, index)))


CHANNELS = {  # channel: (its writer, the reader's preparation or None, the reader)
    "flock": (send_flock, None, receive_flock),
    "posix": (send_posix, None, receive_lock(fcntl.F_GETLK)),
    "ofd": (send_ofd, None, receive_lock(F_OFD_GETLK)),
    "dnotify": (send_dnotify, prepare_dnotify, receive_dnotify),
    "inotify": (send_opened, prepare_inotify, receive_inotify),
    "fanotify": (send_opened, prepare_fanotify, receive_fanotify),
    "nowait": (send_cached, None, receive_nowait),
    "mincore": (send_cached, None, receive_mincore),
    "cachestat": (send_cached, None, receive_cachestat),
    "msg": (send_msg, None, receive_exists(lambda tag, i: check(libc.msgget(ipc_key(tag, i), 0)))),
    "shm": (send_shm, None, receive_exists(lambda tag, i: check(libc.shmget(ipc_key(tag, i), 0, 0)))),
    "sem": (send_sem, None, receive_exists(lambda tag, i: check(libc.semget(ipc_key(tag, i), 0, 0)))),
    "mq": (send_mq, None, receive_exists(open_mq)),
    "abstract": (send_abstract, None, receive_exists(connect_abstract)),
    "devshm": (send_file("/dev/shm"), None, receive_exists(stat_in("/dev/shm"))),
    "tmp": (send_file("/tmp"), None, receive_exists(stat_in("/tmp"))),
    "keys": (send_key, None, receive_exists(search_key)),
}
CACHED = {"nowait", "mincore", "cachestat"}  # the writer empties the page cache of every target first


# --- the machine's figures -----------------------------------------------------------


class SysInfo(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3), ("totalram", ctypes.c_ulong),
                ("freeram", ctypes.c_ulong), ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
                ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong), ("procs", ctypes.c_ushort),
                ("pad", ctypes.c_ushort), ("totalhigh", ctypes.c_ulong), ("freehigh", ctypes.c_ulong),
                ("mem_unit", ctypes.c_uint), ("rest", ctypes.c_char * 8)]  # fmt: skip


def sample(channel):
    if channel == "pty_nr":
        with open("/proc/sys/kernel/pty/nr") as handle:
            return int(handle.read())
    if channel in ("procs", "sysinfo_shared"):
        info = SysInfo()
        check(libc.sysinfo(ctypes.byref(info)))
        return info.procs if channel == "procs" else info.sharedram * info.mem_unit >> 10
    assert channel == "meminfo"
    with open("/proc/meminfo") as handle:  # shared memory: the figure the rest of the machine moves least
        return next(int(line.split()[1]) for line in handle if line.startswith("Shmem:"))


def hold(channel, amount):
    if channel == "pty_nr":
        for _ in range(amount):
            held.extend(os.openpty())
    elif channel == "procs":
        stop = threading.Event()
        held.append(stop)
        threading.stack_size(1 << 18)  # small stacks: a hundred threads stay far under the address-space limit
        for _ in range(amount):
            thread = threading.Thread(target=stop.wait, daemon=True)
            thread.start()
            held.append(thread)
    else:
        fd = os.memfd_create("courier")  # shared memory, written, so every page is really taken
        held.append(fd)
        chunk = b"\1" * (1 << 20)
        for _ in range(amount):
            os.write(fd, chunk)


def clear():
    for thing in held:
        if isinstance(thing, threading.Event):
            thing.set()  # the held threads leave
    for thing in reversed(held):
        if isinstance(thing, int):
            os.close(thing)
        elif isinstance(thing, socket.socket):
            thing.close()
        elif isinstance(thing, threading.Thread):
            thing.join()
    held.clear()
    for step in reversed(undo):
        try:
            step()
        except OSError:
            pass
    undo.clear()
    watches.clear()


def targets_of(words):
    return [str(i) for i in range(int(words[0]))] if len(words) == 1 and words[0].isdigit() else words


def command(line):
    verb, *words = line.split()
    if verb == "clear":
        clear()
        return "ok"
    if verb == "hold":
        hold(words[0], int(words[1]))
        return "ok"
    if verb == "sample":
        return f"value {sample(words[0])}"
    channel, tag, *rest = words
    send, get_ready, receive = CHANNELS[channel]
    if verb == "prepare":
        if get_ready is not None:
            try:
                watches[channel] = get_ready(tag, targets_of(rest))
            except OSError as exc:
                watches[channel] = exc  # the reader has no watch: its receive says why
                raise
        return "ok"
    if verb == "send":
        bits, targets = rest[0], targets_of(rest[1:])
        if channel in CACHED:
            for target in targets:
                evict(target)
        for index, (bit, target) in enumerate(zip(bits, targets)):
            if bit == "1":
                send(tag, index, target)
        return "ok"
    assert verb == "receive", verb
    state = watches.get(channel)
    if isinstance(state, OSError):
        raise state
    return "bits " + "".join("1" if receive(state, tag, i, t) else "0" for i, t in enumerate(targets_of(rest)))


for line in sys.stdin:
    try:
        answer = command(line)
    except OSError as exc:
        answer = f"refused {errno.errorcode.get(exc.errno or 0, exc.errno)}"
    sys.stdout.write(answer + "\n")
    sys.stdout.flush()
