"""The Jinja2 environment of every page famiglia writes, and safe JSON inside a page.

Autoescaping is on for every template, so a name or reason from a bot or a
tournament file is shown as text. Data for a page's script goes in a
``<script type="application/json">`` element through ``script_json``, which
escapes ``<``, ``>`` and ``&`` (so neither ``</script>`` nor ``<!--`` can end or
change the element) and the two line separators JavaScript once treated as
line ends.

A viewer page's data is large (a snapshot of the position for every decision)
and repeats itself from step to step, so it goes in packed by ``packed_json``:
gzip, then base64. The page's script unpacks it with the browser's own
``DecompressionStream``; base64 holds no character that could end or change
the element it sits in. The compression is zlib-ng's where it is installed (a
dependency of famiglia): the same deflate stream format as zlib's, as small at
the same level, in about two fifths of the time; Python's own zlib otherwise.
"""

from __future__ import annotations

import base64
import gzip
import importlib.resources
import zlib
from collections.abc import Callable
from functools import cache
from typing import Any

import jinja2
import msgspec
from markupsafe import Markup

__all__ = ["PACK_LEVEL", "environment", "package_text", "packed_json", "script_json", "unpack_json"]

PACK_LEVEL = 5
"""A page about a twentieth of its JSON. With zlib-ng, 6 (zlib's default) makes a
Sicilianos game's pages 2% smaller for 30% more time spent compressing."""


_GZIP_WBITS = 31
"""zlib's window bits for a gzip stream (15, plus 16 for gzip's header and trailer; the header's time is 0)."""


@cache
def _gzip() -> Callable[[bytes, int], bytes]:
    """gzip compression: zlib-ng's where it is installed, Python's own zlib otherwise (the same format)."""
    try:
        from zlib_ng import zlib_ng
    except ImportError:  # an install without the wheel: slower, as small
        return lambda data, level: zlib.compress(data, level, _GZIP_WBITS)
    return lambda data, level: zlib_ng.compress(data, level, _GZIP_WBITS)


_UNSAFE_IN_SCRIPT = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def script_json(value: Any) -> Markup:
    """``value`` as JSON that is safe verbatim inside a script element."""
    text = msgspec.json.encode(value).decode("utf-8")
    return Markup(text.translate(_UNSAFE_IN_SCRIPT))


def packed_json(value: Any) -> str:
    """``value`` as gzip-compressed JSON in base64 (the same bytes for the same value)."""
    return base64.b64encode(_gzip()(msgspec.json.encode(value), PACK_LEVEL)).decode("ascii")


def unpack_json(text: str) -> Any:
    """What ``packed_json`` packed (for tests and tools that read a page's data)."""
    return msgspec.json.decode(gzip.decompress(base64.b64decode(text)))


def package_text(name: str) -> str:
    """A file of ``tournaments/hosting/viewer/static``."""
    return importlib.resources.files("tournaments.hosting.viewer").joinpath("static", name).read_text(encoding="utf-8")


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tournaments.hosting.viewer", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["script_json"] = script_json
    return env
