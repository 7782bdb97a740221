"""The anonymous page cache keeps small pages a second, and never what asks not to be stored nor a large body."""

from __future__ import annotations

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ladder.web.cache import KeepAnonymous, PageCache


def counting_app() -> tuple[Starlette, dict[str, int]]:
    calls = {"page": 0, "secret": 0, "big": 0}

    async def page(request: Request) -> Response:
        calls["page"] += 1
        return Response(f"page {calls['page']}", media_type="text/plain")

    async def secret(request: Request) -> Response:
        calls["secret"] += 1
        return Response(f"secret {calls['secret']}", media_type="text/plain", headers={"cache-control": "no-store"})

    async def big(request: Request) -> Response:
        calls["big"] += 1
        return Response(b"x" * (2 << 20), media_type="application/octet-stream")

    app = Starlette(routes=[Route("/page", page), Route("/secret", secret), Route("/big", big)])
    return app, calls


async def test_small_pages_are_kept_and_no_store_or_large_bodies_are_not() -> None:
    app, calls = counting_app()
    transport = httpx.ASGITransport(app=KeepAnonymous(app, PageCache(max_age_s=3600)))
    async with httpx.AsyncClient(transport=transport, base_url="http://ladder") as client:
        assert (await client.get("/page")).text == (await client.get("/page")).text == "page 1"
        assert calls["page"] == 1
        assert [(await client.get("/secret")).text for _ in range(2)] == ["secret 1", "secret 2"]
        assert [len((await client.get("/big")).content) for _ in range(2)] == [2 << 20, 2 << 20]
        assert calls["big"] == 2  # streamed through each time, never held to be kept
