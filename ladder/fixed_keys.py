"""The ladder file's keys that cannot change once a ladder has a store: its games would stop meaning one thing.

Changing ``game`` on an existing ladder rated Sicilianos games together with
Vendetta ones; ``variants`` change the rules the same way; ``table_sizes`` may
change until the first game is recorded, never after (ratings across sizes are
one scale only when the sizes were always dealt together). The values are kept
in the store's ``setting`` table at the first start and compared at every one
after. Every other key may change between two starts (docs/ladder.md lists them).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from ladder.config import LadderConfig
    from ladder.store import LadderStore

__all__ = ["FIXED_KEYS", "keep_fixed_keys"]

FIXED_KEYS = ("game", "variants", "table_sizes")
"""The keys checked; ``table_sizes`` only once a game exists."""


def keep_fixed_keys(store: LadderStore, config: LadderConfig, file: Path) -> None:
    """Record the fixed keys at a ladder's first start; ValueError (one line) when ``config`` changed one since."""
    now = {
        "game": config.game,
        "variants": dict(sorted(config.variants.items())),
        "table_sizes": sorted(set(config.table_sizes)),
    }
    has_games = store.db.execute("SELECT 1 FROM game LIMIT 1").fetchone() is not None
    with store.transaction():
        for key in FIXED_KEYS:
            row = store.db.execute("SELECT value FROM setting WHERE key = ?", (f"fixed.{key}",)).fetchone()
            encoded = msgspec.json.encode(now[key]).decode()
            if row is None or (key == "table_sizes" and not has_games):
                store.db.execute("INSERT OR REPLACE INTO setting VALUES (?, ?)", (f"fixed.{key}", encoded))
                continue
            if row[0] != encoded:
                raise ValueError(
                    f"{file}: {key} is {_shown(now[key])} but this ladder was started with {_shown(row[0], raw=True)}, "
                    f"and {key} cannot change {'once games are played' if key == 'table_sizes' else 'on a ladder'}; "
                    f"put it back, or start a new ladder file (famiglia ladder init) for the new {key}"
                )


def _shown(value: object, *, raw: bool = False) -> str:
    decoded = msgspec.json.decode(value) if raw and isinstance(value, str) else value
    if isinstance(decoded, str):
        return repr(decoded)
    return msgspec.json.encode(decoded).decode()
