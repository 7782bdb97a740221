"""A hostile entrant's uploads that got past the first wall: each is refused with one line, and leaves nothing."""

from __future__ import annotations

import io
import os
import tarfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import trio

from ladder.config import SubmissionSection
from ladder.submissions import check_submission, save_upload
from ladder.upload import UploadRefused, inspect_upload
from referee.settings import RefereeSettings
from tests.ladder.helpers import MANIFEST, archive, file_member, link_member
from tests.ladder.server import running_server


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def _number(value: int, width: int) -> bytes:
    """A tar number field: octal, or GNU base-256 for a negative or too large value."""
    if 0 <= value < 8 ** (width - 1):
        return b"%0*o\0" % (width - 1, value)
    return bytes([0o377 if value < 0 else 0o200]) + (value % (1 << (8 * (width - 1)))).to_bytes(width - 1, "big")


def _header(name: bytes, kind: bytes, size: int, *, real_size: int | None = None, holes: int = 0) -> bytes:
    """A hand-made GNU tar header: what ``tarfile`` will not write (negative sizes, sparse maps)."""
    header = bytearray(512)
    header[: len(name)] = name
    header[100:108] = _number(0o644, 8)
    header[108:116] = header[116:124] = _number(0, 8)
    header[124:136] = _number(size, 12)
    header[136:148] = _number(0, 12)
    header[156:157] = kind
    header[257:265] = b"ustar  \0"
    if holes:  # one data block after ``holes`` bytes of nothing
        header[386:398], header[398:410] = _number(holes, 12), _number(size, 12)
    if real_size is not None:
        header[483:495] = _number(real_size, 12)
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header)


def _gnu_archive(*members: bytes) -> bytes:
    data = MANIFEST[1]
    manifest = _header(b"bot.toml", b"0", len(data)) + data + b"\0" * (-len(data) % 512)
    return manifest + b"".join(members) + b"\0" * 1024


def test_a_sparse_file_cannot_hide_a_bomb_behind_a_negative_size() -> None:
    # A sparse file "unpacks" to its real size in zeros that are written out for real; one that
    # claims a negative real size cancelled a terabyte's worth from the unpacked bytes' count.
    terabyte = 1 << 40
    bomb = _gnu_archive(
        _header(b"minus", b"S", 0, real_size=-terabyte),
        _header(b"zeros", b"S", 512, real_size=terabyte, holes=terabyte - 512) + b"y" * 512,
    )
    assert len(bomb) < 4096
    with tarfile.open(fileobj=io.BytesIO(bomb)) as read:  # what tarfile makes of it
        assert [member.size for member in read][1:] == [-terabyte, terabyte]
    with pytest.raises(UploadRefused, match="negative size|sparse"):
        inspect_upload(bomb, SubmissionSection(max_unpacked_bytes=1 << 20))
    alone = _gnu_archive(_header(b"zeros", b"S", 512, real_size=1 << 16, holes=(1 << 16) - 512) + b"y" * 512)
    with pytest.raises(UploadRefused, match="sparse"):
        inspect_upload(alone, SubmissionSection())


async def test_an_entry_of_negative_size_is_refused_with_a_reason_not_a_server_error(tmp_path: Path) -> None:
    # tarfile moves back by a negative size and fails with a ValueError of its own: once an HTTP 500.
    damaged = _gnu_archive(_header(b"back", b"0", -(1 << 60)))
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.post("/api/submissions", content=damaged, headers=bearer(server.tokens["ann"]))
        assert answer.status_code == 400, answer.text
        assert "negative size" in answer.json()["error"]
        assert server.ladder.store.versions() == []
        assert (await http.get("/api/standings")).status_code == 200


@pytest.mark.parametrize(
    "links",
    [
        [link_member("here", "."), link_member("up", "here/..")],
        [link_member("p", "."), link_member("shadow", "p/p/p/p/p/p/p/p/p/p/../../../../../../../../../../etc/shadow")],
        [link_member("here", "."), link_member("here/up", "..")],
    ],
    ids=["dot-then-dotdot", "climb-to-etc", "link-in-a-linked-folder"],
)
def test_a_link_leading_out_through_another_link_of_the_archive_is_refused(
    links: list[tuple[tarfile.TarInfo, bytes]],
) -> None:
    # Each target looks inside on paper (``here/..`` is ``.``), and leads out once ``here`` is a link.
    with pytest.raises(UploadRefused, match="outside the folder"):
        inspect_upload(archive(MANIFEST, *links), SubmissionSection())


def test_links_that_stay_inside_through_other_links_are_still_taken() -> None:
    inside = archive(
        MANIFEST,
        file_member("lib/a.py"),
        link_member("l", "lib"),
        link_member("c.py", "l/a.py"),
        link_member("sub/b.py", "../lib/a.py"),
        link_member("self", "."),
    )
    assert inspect_upload(inside, SubmissionSection())
    with pytest.raises(UploadRefused, match="loop of links"):
        inspect_upload(archive(MANIFEST, link_member("x", "y"), link_member("y", "x")), SubmissionSection())


async def test_an_upload_refused_by_the_hourly_limit_leaves_nothing_on_disk(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        per_hour = server.ladder.config.submissions.per_hour
        codes = []
        for i in range(per_hour + 3):
            upload = archive(MANIFEST, file_member("bot.py", f"# {i}".encode()))
            codes.append(
                (await http.post("/api/submissions", content=upload, headers=bearer(server.tokens["ann"]))).status_code
            )
        assert codes == [202] * per_hour + [429] * 3
        kept = sorted(os.listdir(server.ladder.paths.uploads))
        assert kept == sorted(f"{v.digest}.tar" for v in server.ladder.store.versions())


async def test_an_entrant_sends_one_upload_at_a_time(tmp_path: Path) -> None:
    # Each upload arriving is held in memory up to max_bytes: one entrant with many slow uploads at once
    # held as many times that.
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        ann = bearer(server.tokens["ann"])
        started, release = trio.Event(), trio.Event()

        async def slow() -> AsyncIterator[bytes]:
            yield b"\0" * 512
            started.set()
            await release.wait()

        answers: list[httpx.Response] = []

        async def send_slowly() -> None:
            answers.append(await http.post("/api/submissions", content=slow(), headers=ann))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send_slowly)
            await started.wait()
            with trio.fail_after(60):
                while True:  # until the server reads the slow body (it has begun when a second is refused)
                    second = await http.post("/api/submissions", content=archive(MANIFEST), headers=ann)
                    if second.status_code == 429:
                        break
                    assert second.status_code == 202, second.text  # the slow one was not yet being read
                    await trio.sleep(0.05)
            assert "one at a time" in second.json()["error"]
            other = await http.post("/api/submissions", content=archive(MANIFEST), headers=bearer(server.tokens["bob"]))
            assert other.status_code == 202, other.text
            release.set()
        assert answers[0].status_code == 400  # its zeros are no tar archive: refused, and the next may come
        again = await http.post("/api/submissions", content=archive(MANIFEST, file_member("x.py")), headers=ann)
        assert again.status_code == 202, again.text


@pytest.mark.parametrize(
    ("manifest", "says"),
    [
        (b'name = "x"\ncommand = "python3 bot.py"\nlanguage = ' + b"[" * 20000 + b"]" * 20000, "too deeply"),
        (b'name = "x"\ncommand = "./' + b"a" * 5000 + b'"\n', "cannot be looked up"),
        (b'name = "x"\ncommand = "python3 a\\u0000b"\n', "NUL"),
        (b'name = "x"\ncommand = "python3 bot.py"\nbuild = "sh -c a\\u0000b"\n', "could not be started"),
    ],
    ids=["nested-toml", "long-program", "nul-in-command", "nul-in-build"],
)
async def test_a_bot_toml_the_referee_chokes_on_is_rejected_as_the_entrant_s_to_fix(
    tmp_path: Path, manifest: bytes, says: str
) -> None:
    # These escaped as RecursionError, OSError or ValueError: "the ladder could not check it; tell the host".
    data = archive(file_member("bot.toml", manifest), file_member("bot.py", b"print(1)\n"))
    digest = inspect_upload(data, SubmissionSection())
    save_upload(tmp_path / "uploads", digest, data)
    verdict, spec = await check_submission(
        tmp_path / "uploads", digest, "ann", "vendetta", RefereeSettings(sandbox="none")
    )
    assert not verdict.accepted and spec is None
    assert verdict.reason.startswith("build: ann: ") and says in verdict.reason
    assert "\n" not in verdict.reason


@pytest.mark.parametrize(
    ("manifest", "says"),
    [
        (b'name = "x"\ncommand = "./missing"\n', "program './missing' not found in <upload>"),
        (b'name = "x"\ncommand = "python3 bot.py"\ncolour = "red"\n', "<upload>/bot.toml: unknown key 'colour'"),
        (
            b'name = "x"\ncommand = "python3 bot.py"\nbuild = "sh -c \'pwd; cd ..; pwd; exit 3\'"\n',
            "<upload> | <build cache>",
        ),
    ],
    ids=["missing-program", "unknown-key", "build-prints-its-folder"],
)
async def test_a_rejected_uploads_reason_does_not_name_the_hosts_build_cache(
    tmp_path: Path, private_build_cache: Path, manifest: bytes, says: str
) -> None:
    # Issue 42, item 7: the reason quoted the folder the upload was unpacked and built in.
    data = archive(file_member("bot.toml", manifest), file_member("bot.py", b"print(1)\n"))
    digest = inspect_upload(data, SubmissionSection())
    save_upload(tmp_path / "uploads", digest, data)
    verdict, _ = await check_submission(
        tmp_path / "uploads", digest, "ann", "vendetta", RefereeSettings(sandbox="none")
    )
    assert not verdict.accepted
    assert says in verdict.reason, verdict.reason
    for place in {str(private_build_cache), os.path.realpath(private_build_cache)}:
        assert place not in verdict.reason and place not in verdict.report


async def test_an_upload_that_stalls_is_cut_off_and_its_entrant_may_send_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sender whose network went away never finishes its body: with one upload at a time, its
    # entrant could not send another for as long as the dead connection lingered.
    monkeypatch.setattr("ladder.web.uploads.UPLOAD_S", 0.5)
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        host, port = server.url.removeprefix("http://").rsplit(":", 1)
        stream = await trio.open_tcp_stream(host, int(port))
        async with stream:
            await stream.send_all(
                b"POST /api/submissions HTTP/1.1\r\nhost: ladder\r\n"
                + f"authorization: Bearer {server.tokens['ann']}\r\ncontent-length: 100000\r\n\r\n".encode()
                + b"\0" * 512  # and not a byte more
            )
            answer = b""
            with trio.fail_after(60):
                while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                    chunk = await stream.receive_some()
                    if not chunk:
                        break
                    answer += chunk
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b"send it again" in answer
        again = await http.post("/api/submissions", content=archive(MANIFEST), headers=bearer(server.tokens["ann"]))
        assert again.status_code == 202, again.text


def _extended(kind: bytes, payload: bytes) -> bytes:
    """An extended header (pax ``x``, GNU long name ``L``) and its payload."""
    return _header(b"././@LongLink", kind, len(payload)) + payload + b"\0" * (-len(payload) % 512)


@pytest.mark.parametrize(
    "payload",
    [b"1" * 60_000, b"2 " * 30_000 + b"=\n"],
    ids=["a-long-number", "records-shorter-than-their-text"],
)
def test_a_pax_header_that_makes_tarfile_backtrack_is_refused_at_once(payload: bytes) -> None:
    # Python 3.11's tarfile (before 3.11.10) parses these in time quadratic in their size, on the
    # server's one thread: 40 KB of digits held every page and game for seconds, 8 MB for a day.
    started = time.monotonic()
    with pytest.raises(UploadRefused, match="20 digits|malformed"):
        inspect_upload(_gnu_archive(_extended(b"x", payload)), SubmissionSection())
    assert time.monotonic() - started < 20


async def test_a_chain_of_extended_headers_is_refused_with_a_reason_not_a_server_error(tmp_path: Path) -> None:
    # tarfile recurses once per extended header: thousands in a row ended in a RecursionError, an HTTP 500.
    chain = _extended(b"L", b"bot.toml\0") * 5000
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.post("/api/submissions", content=_gnu_archive(chain), headers=bearer(server.tokens["ann"]))
        assert answer.status_code == 400, answer.text
        assert "in a row" in answer.json()["error"]


def test_a_refusal_names_a_long_entry_in_a_line_of_bounded_length() -> None:
    # Names in pax headers may be as long as the upload: the reason echoed a megabyte back.
    long = "n" * 60_000
    with pytest.raises(UploadRefused, match="twice") as refused:
        inspect_upload(archive(MANIFEST, file_member(long), file_member(long)), SubmissionSection())
    assert len(str(refused.value)) < 300
