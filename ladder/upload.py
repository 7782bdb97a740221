"""An uploaded bot archive, judged before a byte of it is written: hostile input.

An upload is a tar archive as ``famiglia ladder submit`` makes it
(``referee.bot_folder.pack_folder``). ``inspect_upload`` reads its member list
and refuses, with a reason an entrant can act on, anything past the ladder's
bounds (archive size, entries, unpacked bytes) or anything a bot folder has no
use for: absolute names, ``..``, links that lead out of the folder, devices
and FIFOs, a name given twice. ``unpack_package`` (which unpacks it) checks
names and links again and drops set-id bits, so these checks are a first
wall, not the only one.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import tarfile

from ladder.config import SubmissionSection

__all__ = ["UploadRefused", "inspect_upload"]


class UploadRefused(ValueError):
    """An upload that is not taken, with the reason its sender is shown."""


def inspect_upload(data: bytes, limits: SubmissionSection) -> str:
    """The SHA-256 of an acceptable upload; UploadRefused saying what is wrong with any other."""
    if len(data) > limits.max_bytes:
        raise UploadRefused(f"the archive is {len(data)} bytes; at most {limits.max_bytes} are taken")
    if not data:
        raise UploadRefused("the upload is empty; send a tar archive of the bot folder")
    entries = 0
    unpacked = 0
    names: set[str] = set()
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            for member in archive:
                entries += 1
                if entries > limits.max_files:
                    raise UploadRefused(f"the archive holds over {limits.max_files} entries")
                name = _member_name(member.name)
                if name in names:
                    raise UploadRefused(f"{name!r} is in the archive twice")
                names.add(name)
                if member.isreg():
                    unpacked += member.size
                    if unpacked > limits.max_unpacked_bytes:
                        raise UploadRefused(f"the archive unpacks to over {limits.max_unpacked_bytes} bytes")
                elif member.issym() or member.islnk():
                    _check_link(name, member)
                elif not member.isdir():
                    raise UploadRefused(f"{name!r} is a device or a FIFO; a bot folder holds files and folders")
    except tarfile.TarError as exc:
        raise UploadRefused(f"not a tar archive ({exc}); send one made by famiglia ladder submit") from None
    if "bot.toml" not in names:
        raise UploadRefused("the archive has no bot.toml at its top; send the bot's folder (docs/bots.md)")
    return hashlib.sha256(data).hexdigest()


def _member_name(raw: str) -> str:
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
        raise UploadRefused(f"{name!r} links to {target[:100]!r}, outside the folder")
    else:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if resolved == ".." or resolved.startswith(("/", "../")):
        raise UploadRefused(f"{name!r} links to {target[:100]!r}, outside the folder")
