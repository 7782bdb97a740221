"""The client side of a submission: pack a bot folder and post it (``famiglia ladder submit``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from referee.bot_folder import pack_folder

__all__ = ["SubmitFailed", "ask_challenge", "submit_folder"]


class SubmitFailed(ValueError):
    """The server could not be reached, or refused the request (its reason)."""


def submit_folder(server: str, token: str, folder: Path, *, timeout_s: float = 120.0) -> dict[str, Any]:
    """Post ``folder`` (packed as the ladder unpacks it) to ``server``; the server's answer."""
    _check_server(server)
    if not (folder / "bot.toml").is_file():
        raise SubmitFailed(f"{folder}: no bot.toml there; submit the bot's folder (docs/bots.md)")
    _, package = pack_folder(folder)
    headers = {"authorization": f"Bearer {token}", "content-type": "application/x-tar"}
    return _post(server.rstrip("/") + "/api/submissions", headers, package, timeout_s)


def ask_challenge(server: str, token: str, opponents: list[str], *, timeout_s: float = 60.0) -> dict[str, Any]:
    """Ask ``server`` for a table against ``opponents``; the server's answer."""
    _check_server(server)
    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    body = json.dumps({"opponents": opponents}).encode()
    return _post(server.rstrip("/") + "/api/challenges", headers, body, timeout_s)


def _check_server(server: str) -> None:
    if not server.startswith(("http://", "https://")):
        raise SubmitFailed(f"--server {server}: give the ladder's address, http://HOST:PORT or https://HOST")


def _post(url: str, headers: dict[str, str], body: bytes, timeout_s: float) -> dict[str, Any]:
    """POST, and the JSON answer when it is 202; SubmitFailed with the server's reason otherwise."""
    try:
        answer = httpx.post(url, content=body, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise SubmitFailed(f"{url}: cannot reach the ladder: {exc}") from None
    try:
        said: Any = answer.json()
    except ValueError:
        said = {}
    if not isinstance(said, dict):
        said = {}
    if answer.status_code != 202:
        reason = said.get("error") or answer.reason_phrase
        raise SubmitFailed(f"the ladder refused ({answer.status_code}): {reason}")
    return dict(said)
