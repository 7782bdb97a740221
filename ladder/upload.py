"""An uploaded bot archive, judged before a byte of it is written: hostile input.

A package is a tar archive as ``famiglia ladder submit`` makes it
(``referee.bot_folder.pack_folder``); ``ladder.archives`` turns the other
archives people make into one first. ``check_package`` reads its member list
and refuses, with a reason an entrant can act on, anything past the ladder's
bounds (archive size, entries, unpacked bytes) or anything a bot folder has no
use for: absolute names, ``..``, links that lead out of the folder (through
other links of it too), devices and FIFOs, sparse files, a name given twice;
and, before tarfile reads a byte, extended headers that would make Python
3.11's tarfile work for hours or recurse past its limit. ``unpack_package`` (which unpacks it) checks
names and links again and drops set-id bits, so these checks are a first
wall, not the only one.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import posixpath
import re
import tarfile

from ladder.config import SubmissionSection

__all__ = ["UploadRefused", "check_extended_headers", "check_package", "inspect_upload", "normal_name"]


class UploadRefused(ValueError):
    """An upload that is not taken, with the reason its sender is shown."""


def inspect_upload(data: bytes, limits: SubmissionSection) -> str:
    """The SHA-256 of an acceptable upload in the package shape; UploadRefused saying what is wrong with any other.

    ``ladder.archives.accept_upload`` takes the other shapes people make (zip,
    compressed tars, a top folder) and ends here too, through ``check_package``.
    """
    if len(data) > limits.max_bytes:
        raise UploadRefused(f"the archive is {len(data)} bytes; at most {limits.max_bytes} are taken")
    if not data:
        raise UploadRefused("the upload is empty; send a tar archive of the bot folder")
    check_extended_headers(data)
    check_package(data, limits)
    return hashlib.sha256(data).hexdigest()


def check_package(data: bytes, limits: SubmissionSection) -> None:
    """Every member of the uncompressed tar ``data`` within the limits and of a kind a bot folder holds;
    ``check_extended_headers`` must have passed first."""
    entries = 0
    unpacked = 0
    names: set[str] = set()
    symlinks: dict[str, str] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            for member in archive:
                entries += 1
                if entries > limits.max_files:
                    raise UploadRefused(f"the archive holds over {limits.max_files} entries")
                if member.isdir() and not [part for part in member.name.split("/") if part not in ("", ".")]:
                    continue  # "./": the folder itself, as `tar -C bot -cf x.tar .` names it
                name = normal_name(member.name)
                if name in names:
                    raise UploadRefused(f"{name[:100]!r} is in the archive twice")
                names.add(name)
                if member.size < 0:
                    raise UploadRefused(f"{name[:100]!r} claims a negative size; the archive is damaged")
                if member.issparse():
                    raise UploadRefused(f"{name[:100]!r} is a sparse file; pack the folder with famiglia ladder submit")
                if member.isreg():
                    unpacked += member.size
                    if unpacked > limits.max_unpacked_bytes:
                        raise UploadRefused(f"the archive unpacks to over {limits.max_unpacked_bytes} bytes")
                elif member.issym() or member.islnk():
                    _check_link(name, member)
                    if member.issym():
                        symlinks[name] = member.linkname
                elif not member.isdir():
                    raise UploadRefused(f"{name[:100]!r} is a device or a FIFO; a bot folder holds files and folders")
    except UploadRefused:
        raise
    except (tarfile.TarError, ValueError, OverflowError, RecursionError) as exc:  # tarfile's own failures
        raise UploadRefused(f"not a tar archive ({exc}); send a zip or tar of the bot's folder") from None
    _check_link_chains(symlinks)
    if "bot.toml" not in names:
        raise UploadRefused("the archive has no bot.toml at its top; send the bot's folder (docs/bots.md)")


_PAX_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
_EXTENDED_TYPES = (*_PAX_TYPES, tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
_EXTENDED_BYTES = 64 << 10
_EXTENDED_IN_A_ROW = 8
_PAX_RECORDS = 32
_LONG_NUMBER = re.compile(rb"[0-9]{21}")
_SPARSE_MAP = re.compile(rb"GNU\.sparse")
_HIGH_BYTES = bytes(range(128, 256))


def check_extended_headers(data: bytes) -> None:
    """Refuse the extended headers (pax records, GNU long names) that Python 3.11's tarfile chokes on.

    Before 3.11.10 its pax parsing backtracks: a run of digits costs its length squared (40 KB of them, 3 to
    8 s on the server's one thread), and so do records shorter than the text before their ``=``. Each
    extended header also recurses once into the next. So every extended header, wherever one could be
    read (any block at a multiple of 512 with a valid checksum), is bounded here, in time linear in the
    upload: at most 64 KiB, at most 8 in a row, no number over 20 digits nor sparse map, and at most 32
    pax records, each ending where its length says.
    """
    long_numbers = [found.start() for found in _LONG_NUMBER.finditer(data)]
    sparse_maps = [found.start() for found in _SPARSE_MAP.finditer(data)]
    in_a_row: dict[int, int] = {}  # the offset after an extended header: how many came in a row up to it
    for offset in range(0, len(data) - 511, 512):
        kind = data[offset + 156 : offset + 157]
        if kind not in _EXTENDED_TYPES:
            continue
        block = data[offset : offset + 512]
        size, checksum = _number(block[124:136]), _number(block[148:156])
        if size is None or checksum is None or checksum not in _checksums(block):
            continue  # no header tarfile would read
        if not 0 <= size <= _EXTENDED_BYTES:
            raise UploadRefused(f"an extended header of {size} bytes; at most {_EXTENDED_BYTES} are taken")
        after = offset + 512 + -(-size // 512) * 512
        in_a_row[after] = in_a_row.get(offset, 0) + 1
        if in_a_row[after] > _EXTENDED_IN_A_ROW:
            raise UploadRefused(f"over {_EXTENDED_IN_A_ROW} extended headers in a row")
        if kind in _PAX_TYPES:
            first, last = offset + 512, min(offset + 512 + size, len(data))
            if _any_within(long_numbers, first, last) or _any_within(sparse_maps, first, last):
                raise UploadRefused("a pax header with a number over 20 digits or a sparse map")
            _check_pax_records(data, first, last)


def _any_within(positions: list[int], first: int, last: int) -> bool:
    at = bisect.bisect_left(positions, first)
    return at < len(positions) and positions[at] < last


def _number(field: bytes) -> int | None:
    """A number of a tar header as tarfile reads it (octal, or GNU base-256); None when it is not one."""
    if field[:1] in (b"\x80", b"\xff"):
        value = int.from_bytes(field[1:], "big")
        return value - 256 ** (len(field) - 1) if field[:1] == b"\xff" else value
    try:
        return int(field.split(b"\0", 1)[0].strip() or b"0", 8)
    except ValueError:
        return None


def _checksums(block: bytes) -> tuple[int, int]:
    """The checksum of a header block as unsigned and as signed bytes (tarfile takes either)."""
    counted = block[:148] + block[156:]
    unsigned = 256 + sum(counted)
    high = len(counted) - len(counted.translate(None, _HIGH_BYTES))
    return unsigned, unsigned - 256 * high


def _check_pax_records(data: bytes, first: int, last: int) -> None:
    """The pax records in ``data[first:last]``: each ``LENGTH KEYWORD=VALUE\\n`` whole, with its ``=`` and
    its newline inside its length, at most ``_PAX_RECORDS`` of them; NULs may pad the end."""
    position, records = first, 0
    while position < last and data[position] != 0:
        records += 1
        space = data.find(b" ", position, min(position + 21, last))
        digits = data[position:space] if space > position else b""
        end = position + int(digits) if digits.isdigit() else position
        if records > _PAX_RECORDS or end < position + 5 or end > last:
            raise UploadRefused(f"a pax header's record at byte {position - first} is malformed")
        if data[end - 1] != 0x0A or data.find(b"=", space, end) < 0:
            raise UploadRefused(f"a pax header's record at byte {position - first} is malformed")
        position = end


def normal_name(raw: str) -> str:
    """A member's name relative to the folder, without ``./`` or empty parts; UploadRefused when it leaves it."""
    if raw.startswith("/"):
        raise UploadRefused(f"{raw[:100]!r} is an absolute path; names in the archive are relative to the folder")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if not parts:
        raise UploadRefused("an entry without a name")
    if ".." in parts:
        raise UploadRefused(f"{raw[:100]!r} leaves the folder (..)")
    return "/".join(parts)


def _check_link(name: str, member: tarfile.TarInfo) -> None:
    target = member.linkname
    if member.islnk():  # a hard link names another member, from the top
        resolved = posixpath.normpath(target)
    elif target.startswith("/"):
        raise UploadRefused(f"{name[:100]!r} links to {target[:100]!r}, outside the folder")
    else:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if resolved == ".." or resolved.startswith(("/", "../")):
        raise UploadRefused(f"{name[:100]!r} links to {target[:100]!r}, outside the folder")


_LINK_STEPS = 1 << 18
"""Path components resolved over all the links of one archive: a few thousand for any real bot folder."""


def _check_link_chains(symlinks: dict[str, str]) -> None:
    """Refuse a link that leads out through other links of the archive, though its own target looks inside.

    ``a -> .`` and ``b -> a/..``: ``b``'s target is ``.`` on paper and the folder's parent on disk. Each
    link is resolved as the kernel will: component by component from the top, each link of the archive
    met on the way replaced by its target.
    """
    steps = 0
    for name, target in symlinks.items():
        out = UploadRefused(f"{name[:100]!r} links to {target[:100]!r}, outside the folder through its links")
        todo = [*reversed(target.split("/")), *reversed(name.split("/")[:-1])]  # the link's folder first
        done = [""]  # the resolved path so far, one prefix per component: "", "a", "a/b"
        hops = 0
        while todo:
            steps += 1
            if steps > _LINK_STEPS:
                raise UploadRefused("the archive's links are too many or too long to follow")
            part = todo.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if len(done) == 1:
                    raise out
                done.pop()
                continue
            here = f"{done[-1]}/{part}" if len(done) > 1 else part
            linked = symlinks.get(here)
            if linked is None:
                done.append(here)
                continue
            hops += 1
            if hops > 40:
                raise UploadRefused(f"{name[:100]!r} is in a loop of links")
            if linked.startswith("/"):
                raise out
            todo.extend(reversed(linked.split("/")))
