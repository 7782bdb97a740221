"""The archives people make of a bot folder, turned into the one package shape famiglia unpacks.

Entrants upload what their tools make: ``zip -r``, ``tar -czf``, ``tar -C bot
-cf x.tar .`` (every name under ``./``), an archive of the folder itself (every
name under ``bot/``). ``accept_upload`` turns each into the uncompressed tar
``famiglia ladder submit`` sends (``referee.bot_folder.pack_folder``'s shape):
names relative to the bot's folder, no ``./``, no top folder. Every bound is
kept while doing so, on bytes actually produced, never on sizes an archive
claims: the decompressed stream stops at what the ladder's limits allow, a zip
member is counted as it is read. The package then goes through
``ladder.upload``'s checks as any upload does, so a zip's names and links are
held to the same rules as a tar's.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import stat
import tarfile
import zipfile
import zlib

import msgspec

from ladder.config import SubmissionSection
from ladder.upload import UploadRefused, check_extended_headers, check_package, normal_name

__all__ = ["AcceptedUpload", "accept_upload"]

_CHUNK = 1 << 16
_LINK_TARGET_BYTES = 4096
"""A zip member that is a link holds its target as its data: no real one is longer than a path."""


class AcceptedUpload(msgspec.Struct, frozen=True, kw_only=True):
    digest: str
    """The SHA-256 of ``package``: the version's name for its bot."""
    package: bytes
    """An uncompressed tar in famiglia's package shape: what is stored and unpacked."""
    converted_from: str
    """What was uploaded: "tar" (taken as it came), or "zip", "tar.gz", ... (converted)."""


def accept_upload(data: bytes, limits: SubmissionSection) -> AcceptedUpload:
    """The package of an acceptable upload of any kind people make; UploadRefused with one line for any other."""
    if len(data) > limits.max_bytes:
        raise UploadRefused(f"the archive is {len(data)} bytes; at most {limits.max_bytes} are taken")
    if not data:
        raise UploadRefused("the upload is empty; send a zip or tar archive of the bot folder")
    kind = _kind(data)
    if kind == "zip":
        tar = _zip_to_tar(data, limits)
    elif kind == "tar":
        tar = data
    else:
        tar = _decompressed(data, kind, limits)
    check_extended_headers(tar)
    reshaped = _repack(tar, _top_folder(tar))
    check_package(reshaped, limits)
    return AcceptedUpload(digest=hashlib.sha256(reshaped).hexdigest(), package=reshaped, converted_from=kind)


def _kind(data: bytes) -> str:
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if data[:2] == b"\x1f\x8b":
        return "tar.gz"
    if data[:3] == b"BZh":
        return "tar.bz2"
    if data[:6] == b"\xfd7zXZ\x00":
        return "tar.xz"
    return "tar"


def _tar_bound(limits: SubmissionSection) -> int:
    # A tar of the largest folder the limits take: its bytes, a header and padding per entry, the end blocks.
    return limits.max_unpacked_bytes + 1536 * limits.max_files + (1 << 20)


def _decompressed(data: bytes, kind: str, limits: SubmissionSection) -> bytes:
    bound = _tar_bound(limits)
    raw = io.BytesIO(data)
    try:
        # read(n) inflates at most n bytes whatever the archive claims: a bomb stops at the bound.
        if kind == "tar.gz":
            with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
                tar = stream.read(bound + 1)
        elif kind == "tar.bz2":
            with bz2.BZ2File(raw, mode="rb") as stream:
                tar = stream.read(bound + 1)
        else:
            with lzma.LZMAFile(raw, mode="rb") as stream:
                tar = stream.read(bound + 1)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise UploadRefused(f"a damaged {kind} archive ({exc}); make it again, or send a zip or plain tar") from None
    if len(tar) > bound:
        raise UploadRefused(f"the archive unpacks to over {limits.max_unpacked_bytes} bytes")
    return tar


def _zip_to_tar(data: bytes, limits: SubmissionSection) -> bytes:
    out = io.BytesIO()
    unpacked = 0
    try:
        with (
            zipfile.ZipFile(io.BytesIO(data)) as archive,
            tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            members = archive.infolist()
            if len(members) > limits.max_files:
                raise UploadRefused(f"the archive holds over {limits.max_files} entries")
            for member in members:
                if member.flag_bits & 0x1:
                    raise UploadRefused(f"{member.filename[:100]!r} is encrypted; send the archive without a password")
                mode = member.external_attr >> 16
                info = tarfile.TarInfo(member.filename.rstrip("/") or member.filename)
                info.mtime = 0
                if member.is_dir():
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
                    continue
                with archive.open(member) as stream:
                    if stat.S_ISLNK(mode):
                        target = stream.read(_LINK_TARGET_BYTES + 1)
                        if len(target) > _LINK_TARGET_BYTES:
                            raise UploadRefused(f"{member.filename[:100]!r} is a link with an over-long target")
                        info.type, info.linkname, info.mode = tarfile.SYMTYPE, target.decode("utf-8", "replace"), 0o777
                        tar.addfile(info)
                        continue
                    body = bytearray()
                    # Counted as read, not as the zip claims: a member may say 1 byte and inflate to gigabytes.
                    while chunk := stream.read(_CHUNK):
                        body += chunk
                        if unpacked + len(body) > limits.max_unpacked_bytes:
                            raise UploadRefused(f"the archive unpacks to over {limits.max_unpacked_bytes} bytes")
                unpacked += len(body)
                info.size = len(body)
                info.mode = (mode & 0o777) or 0o644
                tar.addfile(info, io.BytesIO(bytes(body)))
    except UploadRefused:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, OSError, EOFError,
            zlib.error, lzma.LZMAError, ValueError) as exc:  # fmt: skip
        raise UploadRefused(f"a zip archive famiglia cannot read ({exc}); make it again, or send a tar") from None
    return out.getvalue()


def _names(tar: bytes) -> list[tuple[str, bool]]:
    """Every member's raw name and whether it is a folder; the headers were checked already."""
    try:
        names = []
        with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as archive:
            for member in archive:
                if member.size < 0:  # before tarfile seeks back by it to read the next header
                    raise UploadRefused(f"{member.name[:100]!r} claims a negative size; the archive is damaged")
                names.append((member.name, member.isdir()))
        return names
    except UploadRefused:
        raise
    except (tarfile.TarError, ValueError, OverflowError, RecursionError) as exc:
        raise UploadRefused(f"not a zip or tar archive ({exc}); send one of the bot's folder") from None


def _top_folder(tar: bytes) -> str:
    """The one folder every name is under when the archive was made of the folder itself, else ""."""
    names = [normal_name(name) for name, _ in _names(tar) if not _is_the_folder(name)]
    if not names or "bot.toml" in names:
        return ""
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) != 1:
        return ""
    (top,) = tops
    return top if f"{top}/bot.toml" in names else ""


def _is_the_folder(name: str) -> bool:
    """``.`` or ``./``: the entry of the folder itself."""
    return not [part for part in name.split("/") if part not in ("", ".")]


def _repack(tar: bytes, top: str) -> bytes:
    """``tar`` in the package shape: ``./`` and the top folder taken off every name (and a hard link's target),
    members in ``pack_folder``'s order with its owner and time fields, so the same folder is the same
    package (and digest) whatever archive it came in."""
    prefix = f"{top}/" if top else ""

    def strip(name: str) -> str:
        if _is_the_folder(name):
            return ""
        name = normal_name(name)
        return name[len(prefix) :] if prefix and name.startswith(prefix) else ("" if name == top else name)

    members: list[tuple[list[str], tarfile.TarInfo, bytes | None]] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as source:
            for member in source:
                name = strip(member.name)
                if not name:
                    if member.isdir():
                        continue  # the folder itself ("./", or the top folder)
                    raise UploadRefused(f"{member.name[:100]!r} is not a file of the bot's folder")
                copy = tarfile.TarInfo(name)  # owner, group and time zero, as pack_folder writes them
                copy.type, copy.mode, copy.size = member.type, member.mode & 0o7777, member.size
                if member.issym():
                    copy.linkname = member.linkname
                elif member.islnk():
                    copy.linkname = strip(member.linkname)
                stream = source.extractfile(member) if member.isreg() else None
                members.append((name.split("/"), copy, None if stream is None else stream.read()))
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as target:
            for _, info, body in sorted(members, key=lambda entry: entry[0]):
                target.addfile(info, None if body is None else io.BytesIO(body))
    except UploadRefused:
        raise
    except (tarfile.TarError, ValueError, OverflowError, RecursionError, OSError) as exc:
        raise UploadRefused(f"not a zip or tar archive ({exc}); send one of the bot's folder") from None
    return out.getvalue()
