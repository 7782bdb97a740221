"""``famiglia ladder serve`` end to end: entrants submit over HTTP, the good bots play, the broken one is told why."""

from __future__ import annotations

import httpx
import pytest

from tests.ladder.conftest import Served, games_going_on, standings, submit, wait_for

pytestmark = pytest.mark.slow


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_the_accepted_bots_are_ranked_with_games_and_the_broken_one_is_listed_unranked(served: Served) -> None:
    board = standings(served.url)
    everyone = [row for row in board if row["rank"] is not None]
    assert [row["rank"] for row in everyone] == list(range(1, len(everyone) + 1))
    assert board[: len(everyone)] == everyone  # the ranked rows first
    # The served ladder is shared: on this worker dan's resubmission (another test) may have come first.
    # Its rejected version 1 is never ranked either way, and dan is on the board whatever its state.
    dan = next(row for row in board if row["entrant"] == "dan")
    assert dan["rank"] is None or dan["version"] == 2
    assert dan["state"] in ("rejected", "checking", "active")
    rows = [row for row in everyone if row["entrant"] != "dan"]
    assert sorted(row["entrant"] for row in rows) == ["ann", "bob", "cat"]
    assert all(row["games"] >= 3 and row["low"] < row["mu"] < row["high"] for row in rows)
    fit = httpx.get(f"{served.url}/api/standings/fit", timeout=60).json()
    assert {row["entrant"] for row in fit} >= {"ann", "bob", "cat"}
    assert all(row["lower"] < row["rating"] < row["upper"] for row in fit)
    assert all(row["rating"] == row["low"] for row in rows)  # the rating is its interval's low end
    page = httpx.get(served.url + "/", timeout=30).text
    assert all(f">{name}<" in page for name in ("ann", "bob", "cat", "dan"))


def test_only_the_owner_of_a_rejected_version_reads_why(served: Served) -> None:
    reason_url = f"{served.url}/api/entrants/dan/versions/1/report"
    own = httpx.get(reason_url, headers=bearer(served.tokens["dan"]), timeout=30).json()
    assert own["state"] == "rejected" and own["reason"].startswith("check-bot: request ids")
    assert any(check["status"] == "fail" for check in own["report"]["checks"])
    for headers in ({}, bearer(served.tokens["ann"])):
        assert httpx.get(reason_url, headers=headers, timeout=30).status_code == 404
    public = httpx.get(f"{served.url}/entrants/dan", timeout=30).text
    assert "rejected" in public and "request ids" not in public
    mine = httpx.get(f"{served.url}/entrants/dan", headers=bearer(served.tokens["dan"]), timeout=30).text
    assert "request ids" in mine


def test_a_resubmission_becomes_a_new_active_version(served: Served) -> None:
    done = submit(served.url, served.tokens["dan"], "random_py")
    assert done.returncode == 0 and "submitted version 2 of dan" in done.stdout
    with games_going_on(served):
        wait_for(
            lambda: any(
                row["entrant"] == "dan" and row["version"] == 2 and row["state"] == "active"
                for row in standings(served.url)
            ),
            "dan's second version on the leaderboard",
        )
    versions = httpx.get(f"{served.url}/api/entrants/dan", timeout=30).json()["versions"]
    assert [(v["number"], v["state"]) for v in versions] == [(2, "active"), (1, "rejected")]
