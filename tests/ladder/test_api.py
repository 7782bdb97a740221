"""The HTTP API against a running server, with an attacker's list: what is refused, and how."""

from __future__ import annotations

import errno
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from ladder.web import uploads
from ladder.web.guard import Throttle
from tests.ladder.helpers import MANIFEST, SAMPLE_BOTS, archive, file_member, link_member, upload_of
from tests.ladder.server import running_server


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_a_submission_with_its_owner_s_token_becomes_a_queued_version(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.post(
            "/api/submissions", content=upload_of(SAMPLE_BOTS / "random_py"), headers=bearer(server.tokens["ann"])
        )
        assert answer.status_code == 202, answer.text
        assert answer.json() == {"entrant": "ann", "version": 1, "state": "queued", "page": "/entrants/ann"}
        mine = (await http.get("/api/entrants/ann", headers=bearer(server.tokens["ann"]))).json()
        assert mine["owner"] is True and mine["versions"][0]["state"] == "queued"


async def test_requests_without_a_valid_token_change_nothing(tmp_path: Path) -> None:
    package = upload_of(SAMPLE_BOTS / "random_py")
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.post("/api/submissions", content=package)).status_code == 401
        for token in ("wrong", server.tokens["ann"][:-1], server.tokens["ann"] + "x", "Basic"):
            answer = await http.post("/api/submissions", content=package, headers=bearer(token))
            assert answer.status_code in (401, 403), token
        # A token in the query string is not a token: it would end in logs and histories.
        answer = await http.post(f"/api/submissions?token={server.tokens['ann']}", content=package)
        assert answer.status_code == 401
        assert server.ladder.store.versions() == []


async def test_another_entrant_s_report_is_not_found_like_a_missing_one(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        await http.post(
            "/api/submissions", content=upload_of(SAMPLE_BOTS / "random_py"), headers=bearer(server.tokens["ann"])
        )
        own = await http.get("/api/entrants/ann/versions/1/report", headers=bearer(server.tokens["ann"]))
        assert own.status_code == 200 and own.json()["state"] == "queued"
        theirs = await http.get("/api/entrants/ann/versions/1/report", headers=bearer(server.tokens["bob"]))
        missing = await http.get("/api/entrants/ann/versions/9/report", headers=bearer(server.tokens["bob"]))
        anonymous = await http.get("/api/entrants/ann/versions/1/report")
        assert theirs.status_code == missing.status_code == anonymous.status_code == 404
        assert theirs.content == missing.content == anonymous.content
        public = (await http.get("/api/entrants/ann", headers=bearer(server.tokens["bob"]))).json()
        assert public["owner"] is False and public["versions"][0]["reason"] is None


async def test_hostile_archives_are_refused_with_a_reason_and_nothing_is_kept(tmp_path: Path) -> None:
    attacks = {
        "zip-slip": archive(MANIFEST, file_member("../../escape.py")),
        "absolute": archive(MANIFEST, file_member("/tmp/escape.py")),
        "link out": archive(MANIFEST, link_member("data", "/etc")),
        "not tar": b"\x1f\x8b\x08 gzip? no" * 100,
    }
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        for name, body in attacks.items():
            answer = await http.post("/api/submissions", content=body, headers=bearer(server.tokens["ann"]))
            assert answer.status_code == 400, name
            assert answer.json()["error"], name
        assert server.ladder.store.versions() == []
        assert not (tmp_path / "escape.py").exists()


async def test_an_oversized_body_is_refused_before_it_is_all_read(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        limit = server.ladder.config.submissions.max_bytes

        async def endless() -> AsyncIterator[bytes]:
            chunk = b"\0" * (1 << 20)
            for _ in range(limit // len(chunk) + 8):
                yield chunk

        answer = await http.post("/api/submissions", content=endless(), headers=bearer(server.tokens["ann"]))
        assert answer.status_code == 413
        assert "at most" in answer.json()["error"]


async def test_token_guessing_is_slowed_to_a_stop(tmp_path: Path) -> None:
    throttle = Throttle(limit=3, window_s=600)
    async with running_server(tmp_path, throttle=throttle) as server, httpx.AsyncClient(base_url=server.url) as http:
        codes = [
            (await http.post("/api/submissions", content=b"", headers=bearer(f"guess{i}"))).status_code
            for i in range(5)
        ]
        assert codes == [403, 403, 403, 429, 429]
        # Even the right token waits out the window: a guesser cannot tell a hit from the rest.
        right = await http.post("/api/submissions", content=b"", headers=bearer(server.tokens["ann"]))
        assert right.status_code == 429


async def test_submissions_past_the_hourly_limit_answer_429(tmp_path: Path) -> None:
    package = upload_of(SAMPLE_BOTS / "random_py")
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        codes = [
            (await http.post("/api/submissions", content=package, headers=bearer(server.tokens["ann"]))).status_code
            for _ in range(7)
        ]
        assert codes == [202] * 6 + [429]


async def test_malformed_requests_get_answers_not_crashes(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.get("/api/submissions")).status_code == 405
        assert (await http.get("/api/entrants/nobody")).status_code == 404
        assert (await http.get("/games/game-1.html")).status_code == 404
        assert (await http.get("/games/../../etc/passwd")).status_code == 404
        assert (await http.get("/games/game-99999999999999999999.html")).status_code == 404
        assert (await http.get("/api/games", params={"entrant": "' OR 1=1 --"})).json() == []
        login = await http.post(
            "/login", content=b"token=" + b"a" * 10_000, headers={"content-type": "application/x-www-form-urlencoded"}
        )
        assert login.status_code == 413
        board = (await http.get("/api/standings")).json()
        assert [(row["entrant"], row["state"], row["rank"]) for row in board] == [
            ("ann", "no version yet", None),
            ("bob", "no version yet", None),
        ]


async def test_a_bare_api_address_is_no_page_and_redirects_nowhere(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        for method in ("GET", "POST"):
            answer = await http.request(method, "/api", follow_redirects=False)
            assert answer.status_code == 404 and "location" not in answer.headers, (method, answer.headers)


async def test_an_upload_the_full_disk_cannot_keep_is_503_and_records_no_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full_disk(uploads: Path, digest: str, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(uploads / digest))

    monkeypatch.setattr(uploads, "save_upload", full_disk)
    package = upload_of(SAMPLE_BOTS / "random_py")
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.post("/api/submissions", content=package, headers=bearer(server.tokens["ann"]))
        assert answer.status_code == 503 and "send it again later" in answer.text, answer.text
        mine = (await http.get("/api/entrants/ann", headers=bearer(server.tokens["ann"]))).json()
        assert mine["versions"] == []  # no version that names an upload the ladder does not have
        monkeypatch.undo()  # room again: the same upload is taken
        again = await http.post("/api/submissions", content=package, headers=bearer(server.tokens["ann"]))
        assert again.status_code == 202, again.text
    assert "an upload of ann could not be kept" in capsys.readouterr().err  # the host is told why
