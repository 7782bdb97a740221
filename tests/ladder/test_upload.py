"""Uploads are hostile: every bound and every kind of entry a bot folder has no use for is refused with a reason."""

from __future__ import annotations

import pytest

from ladder.config import SubmissionSection
from ladder.upload import UploadRefused, inspect_upload
from tests.ladder.helpers import (
    MANIFEST,
    SAMPLE_BOTS,
    archive,
    device_member,
    file_member,
    link_member,
    upload_of,
)

LIMITS = SubmissionSection(max_bytes=1 << 20, max_files=20, max_unpacked_bytes=64 << 10)


def test_a_packed_sample_bot_is_taken_and_named_by_its_hash() -> None:
    data = upload_of(SAMPLE_BOTS / "random_py")
    digest = inspect_upload(data, SubmissionSection())
    assert len(digest) == 64 and inspect_upload(data, SubmissionSection()) == digest


@pytest.mark.parametrize(
    ("members", "says"),
    [
        ([MANIFEST, file_member("../evil.py")], "leaves the folder"),
        ([MANIFEST, file_member("a/../../evil.py")], "leaves the folder"),
        ([MANIFEST, file_member("/etc/cron.d/evil")], "absolute path"),
        ([MANIFEST, link_member("up", "../../etc/passwd")], "outside the folder"),
        ([MANIFEST, link_member("abs", "/etc/passwd")], "outside the folder"),
        ([MANIFEST, link_member("hard", "../x", hard=True)], "outside the folder"),
        ([MANIFEST, device_member("null")], "device"),
        ([MANIFEST, file_member("bot.toml")], "twice"),
        ([file_member("bot.py")], "no bot.toml"),
    ],
    ids=[
        "zip-slip",
        "zip-slip-nested",
        "absolute",
        "symlink-out",
        "symlink-absolute",
        "hardlink-out",
        "device",
        "duplicate",
        "no-manifest",
    ],
)
def test_a_hostile_archive_is_refused_with_its_reason(members: list[tuple[object, bytes]], says: str) -> None:
    with pytest.raises(UploadRefused, match=says):
        inspect_upload(archive(*members), LIMITS)  # type: ignore[arg-type]


def test_an_archive_bomb_is_refused_by_its_unpacked_size() -> None:
    bomb = archive(MANIFEST, file_member("big", b"\0" * (65 << 10)))
    with pytest.raises(UploadRefused, match="unpacks to over"):
        inspect_upload(bomb, SubmissionSection(max_bytes=1 << 20, max_unpacked_bytes=64 << 10))


def test_too_many_entries_and_too_many_bytes_are_refused() -> None:
    many = archive(MANIFEST, *(file_member(f"f{i}") for i in range(30)))
    with pytest.raises(UploadRefused, match="over 20 entries"):
        inspect_upload(many, LIMITS)
    with pytest.raises(UploadRefused, match="at most 1024 are taken"):
        inspect_upload(many, SubmissionSection(max_bytes=1024))


def test_garbage_and_empty_uploads_are_refused() -> None:
    with pytest.raises(UploadRefused, match="not a tar archive"):
        inspect_upload(b"PK\x03\x04 not a tar at all" * 40, LIMITS)
    with pytest.raises(UploadRefused, match="empty"):
        inspect_upload(b"", LIMITS)


def test_a_link_that_stays_inside_the_folder_is_taken() -> None:
    inside = archive(MANIFEST, file_member("lib/a.py"), link_member("b.py", "lib/a.py"))
    assert inspect_upload(inside, LIMITS)
