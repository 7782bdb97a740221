"""The Jinja2 environment of every page famiglia writes, and safe JSON inside a page.

Autoescaping is on for every template, so a name or reason from a bot or a
tournament file is shown as text. Data for a page's script goes in a
``<script type="application/json">`` element through ``script_json``, which
escapes ``<``, ``>`` and ``&`` (so neither ``</script>`` nor ``<!--`` can end or
change the element) and the two line separators JavaScript once treated as
line ends.
"""

from __future__ import annotations

import importlib.resources
from functools import cache
from typing import Any

import jinja2
import msgspec
from markupsafe import Markup

__all__ = ["environment", "package_text", "script_json"]

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


def package_text(name: str) -> str:
    """A file of ``tournaments/viewer/static``."""
    return importlib.resources.files("tournaments.viewer").joinpath("static", name).read_text(encoding="utf-8")


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tournaments.viewer", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["script_json"] = script_json
    return env
