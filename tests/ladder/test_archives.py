"""Uploads in the shapes people make (zip, compressed tars, a top folder, ./ names) become the one package shape,
and every bound and hostile-entry check still holds for them."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

import httpx
import pytest

from ladder.archives import accept_upload
from ladder.config import SubmissionSection
from ladder.upload import UploadRefused
from referee.bot_folder import pack_folder, unpack_package
from tests.ladder.helpers import MANIFEST, SAMPLE_BOTS, archive, file_member
from tests.ladder.server import bearer, running_server

BOT = SAMPLE_BOTS / "random_py"
LIMITS = SubmissionSection(max_bytes=1 << 20, max_files=20, max_unpacked_bytes=64 << 10)


def tree(folder: Path) -> dict[str, bytes | str]:
    """Every file's bytes and every link's target below ``folder``, by relative name."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = os.readlink(path)
        elif path.is_file():
            found[name] = path.read_bytes()
    return found


def unpacked(package: bytes, tmp_path: Path, label: str) -> dict[str, bytes | str]:
    unpack_package(package, tmp_path / label)
    return tree(tmp_path / label)


def zipped(folder: Path, top: str = "") -> bytes:
    """What `zip -r` makes: folders as entries of their own, unix modes in the external attributes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as made:
        for path in sorted(folder.rglob("*")):
            if "__pycache__" in path.parts:
                continue
            name = (f"{top}/" if top else "") + str(path.relative_to(folder))
            made.write(path, name)
    return buffer.getvalue()


def tar_command(tmp_path: Path, *args: str) -> bytes:
    out = tmp_path / "made.tar"
    subprocess.run(["tar", "--exclude=__pycache__", *args, "-f", str(out)], check=True)
    return out.read_bytes()


@pytest.mark.parametrize("top", ["", "random_py"], ids=["names-at-top", "under-a-top-folder"])
def test_a_zip_of_a_bot_folder_becomes_the_same_files_as_submit_sends(tmp_path: Path, top: str) -> None:
    taken = accept_upload(zipped(BOT, top), SubmissionSection())
    assert taken.converted_from == "zip"
    assert unpacked(taken.package, tmp_path, "zip") == unpacked(pack_folder(BOT)[1], tmp_path, "submit")
    assert taken.package == accept_upload(zipped(BOT, top), SubmissionSection()).package  # the same every time


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        (["-C", str(BOT), "-c", "."], "tar"),  # every name under ./
        (["-C", str(BOT.parent), "-c", "random_py"], "tar"),  # the folder itself
        (["-C", str(BOT.parent), "-cz", "random_py"], "tar.gz"),
        (["-C", str(BOT), "-cj", "."], "tar.bz2"),
        (["-C", str(BOT.parent), "-cJ", "random_py"], "tar.xz"),
    ],
    ids=["dot-names", "top-folder", "gzip", "bzip2", "xz"],
)
def test_the_tars_people_make_become_the_same_files_as_submit_sends(tmp_path: Path, args: list[str], kind: str) -> None:
    taken = accept_upload(tar_command(tmp_path, *args), SubmissionSection())
    assert taken.converted_from == kind
    assert unpacked(taken.package, tmp_path, "made") == unpacked(pack_folder(BOT)[1], tmp_path, "submit")


def test_submit_s_own_package_is_kept_byte_for_byte() -> None:
    digest, package = pack_folder(BOT)
    taken = accept_upload(package, SubmissionSection())
    assert (taken.digest, taken.package, taken.converted_from) == (digest, package, "tar")


def zip_of(*entries: tuple[zipfile.ZipInfo | str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as made:
        for info, data in entries:
            made.writestr(info, data)
    return buffer.getvalue()


def zip_link(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


BOT_TOML = ("bot.toml", b'name = "x"\ncommand = "python3 bot.py"\n')


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (zip_of(BOT_TOML, ("../evil.py", b"x")), "leaves the folder"),
        (zip_of(BOT_TOML, ("/etc/cron.d/evil", b"x")), "absolute path"),
        (zip_of(BOT_TOML, zip_link("up", "../../etc/passwd")), "outside the folder"),
        (zip_of(BOT_TOML, zip_link("abs", "/etc/passwd")), "outside the folder"),
        (zip_of(BOT_TOML, ("big", b"\0" * (65 << 10))), "unpacks to over"),  # ~70 bytes zipped
        (zip_of(BOT_TOML, *[(f"f{n}", b"") for n in range(20)]), "over 20 entries"),
        (zip_of(("bot.py", b"x")), "no bot.toml"),
        (gzip.compress(archive(MANIFEST, file_member("big", b"\0" * (2 << 20)))), "unpacks to over"),
        (bz2.compress(archive(MANIFEST, file_member("big", b"\0" * (2 << 20)))), "unpacks to over"),
        (lzma.compress(archive(MANIFEST, file_member("big", b"\0" * (2 << 20)))), "unpacks to over"),
        (gzip.compress(archive(MANIFEST))[:-12], "damaged tar.gz"),
        (b"PK\x03\x04" + b"\0" * 100, "zip archive famiglia cannot read"),
    ],
    ids=[
        "zip-slip",
        "zip-absolute",
        "zip-symlink-out",
        "zip-symlink-absolute",
        "zip-bomb",
        "zip-too-many",
        "zip-no-manifest",
        "gzip-bomb",
        "bzip2-bomb",
        "xz-bomb",
        "gzip-truncated",
        "zip-damaged",
    ],
)
def test_a_hostile_archive_of_any_kind_is_refused_with_its_reason(data: bytes, says: str) -> None:
    with pytest.raises(UploadRefused, match=says):
        accept_upload(data, LIMITS)


def test_an_encrypted_zip_member_is_refused_not_asked_a_password() -> None:
    data = bytearray(zip_of(BOT_TOML))
    data[6] |= 0x1  # the local header's general purpose flag: encrypted
    central = data.rfind(b"PK\x01\x02")
    data[central + 8] |= 0x1  # and the central directory's
    with pytest.raises(UploadRefused, match="encrypted"):
        accept_upload(bytes(data), LIMITS)


async def test_the_api_takes_a_zip_and_a_tar_gz_and_stores_the_package(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        for body in (zipped(BOT, "random_py"), tar_command(tmp_path, "-C", str(BOT), "-cz", ".")):
            answer = await http.post("/api/submissions", content=body, headers=bearer(server.tokens["ann"]))
            assert answer.status_code == 202, answer.text
        versions = server.ladder.store.versions(entrant="ann")
        assert len(versions) == 2
        # Both are the same folder: the same package, so the same digest, whatever the archive was.
        assert versions[0].digest == versions[1].digest == pack_folder(BOT)[0]
        stored = server.ladder.paths.uploads.glob("*")
        assert [tarfile.is_tarfile(path) for path in stored] == [True]


async def test_the_entrant_s_page_takes_an_archive_by_form_with_the_api_s_checks(tmp_path: Path) -> None:
    from tests.ladder.server import logged_in

    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        mine = logged_in(server, "ann")
        own = (await http.get("/entrants/ann", headers=mine)).text
        assert 'enctype="multipart/form-data"' in own and 'action="/upload"' in own
        assert 'action="/upload"' not in (await http.get("/entrants/ann")).text

        async def send(name: str, body: bytes, headers: dict[str, str] = mine) -> httpx.Response:
            return await http.post("/upload", files={"archive": (name, body)}, headers=headers)

        taken = await send("random_py.zip", zipped(BOT, "random_py"))
        assert taken.status_code == 202 and "Version 1 received" in taken.text, taken.text
        (version,) = server.ladder.store.versions(entrant="ann")
        assert version.digest == pack_folder(BOT)[0]
        hostile = await send("evil.zip", zip_of(BOT_TOML, ("../evil.py", b"x")))
        assert hostile.status_code == 400 and "leaves the folder" in hostile.text
        empty = await http.post("/upload", files={"other": ("x", b"y")}, headers=mine)
        assert empty.status_code == 400 and "choose the archive" in empty.text
        huge = await send("huge.zip", b"PK\x03\x04" + b"\0" * (9 << 20))
        assert huge.status_code == 413
        forged = await send("bot.zip", zipped(BOT), {**mine, "origin": "http://evil.example"})
        assert forged.status_code == 403 and "another site" in forged.text
        stranger = await http.post("/upload", files={"archive": ("bot.zip", zipped(BOT))})
        assert stranger.status_code == 403
        assert len(server.ladder.store.versions(entrant="ann")) == 1  # only the one taken
