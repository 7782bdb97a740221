"""A store opened for a tournament file: begun, resumed or grown, and readied for a run.

A store is begun from the file once (``tournaments.lifecycle.plan`` makes its
schedule). Run again with the same file, it resumes; with a file that adds
entrants or games, it grows (``tournaments.lifecycle.growth``).

``open_for_run`` is what a run does to its store before the first game: it
takes another store's deal key when asked to repeat its deals, begins,
resumes or grows the tournament, pins each entrant's bot version
(``tournaments.lifecycle.versions``), and leaves no empty results file behind
when any of that is refused.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from referee.private import tighten
from tournaments.config.tournament import TournamentConfig
from tournaments.lifecycle.growth import GrowthRefused, align_entrants, extension_games, incomparable_changes
from tournaments.lifecycle.plan import build_schedule, deal_differences
from tournaments.lifecycle.versions import settle_versions
from tournaments.playing import replays_folder
from tournaments.store import Store, remove_empty_store

__all__ = ["Opened", "ReadyToRun", "deal_key_from", "open_for_run", "open_tournament"]


class Opened(msgspec.Struct, frozen=True, kw_only=True):
    """What opening a store for a tournament file did."""

    config: TournamentConfig
    """The tournament as stored: entrants in the store's order (new ones last)."""
    how: Literal["begun", "resumed", "grown"]
    new_entrants: list[str] = []
    new_games: int = 0


def open_tournament(store: Store, config: TournamentConfig) -> Opened:
    """Begin ``config`` in an empty store, resume it, or grow the stored tournament into it.

    GrowthRefused (one line) when the file changes a setting the stored
    results depend on; it names each such setting with its old and new value.
    """
    stored = store.tournament()
    key = store.deal_key()
    # A store made before deal keys deals with the public derivation (b""), new games too.
    deal_key = b"" if key is None else key
    if stored is None:
        store.begin(config, build_schedule(config, deal_key))
        return Opened(config=config, how="begun")
    if stored[2] == config.fingerprint():
        return Opened(config=config, how="resumed")
    old = store.config()
    try:
        aligned = align_entrants(old, config)
        if stored[2] == aligned.fingerprint():
            return Opened(config=aligned, how="resumed")
        changes = incomparable_changes(old, aligned)
    except GrowthRefused as exc:
        raise GrowthRefused(f"{store.path} holds tournament {stored[0]!r}: {exc}; {_new_store(store.path)}") from None
    if changes:
        raise GrowthRefused(
            f"{store.path} holds tournament {stored[0]!r} played with {'; '.join(changes)}: "
            f"games under other settings cannot be compared with its results; put the file back to resume, "
            f"or {_new_store(store.path)}"
        )
    games = extension_games(old, aligned, store.schedule(), deal_key)
    store.extend(stored[2], aligned, len(old.entrants), games)
    if not games and len(aligned.entrants) == len(old.entrants):
        # Only settings that change no game (concurrency, the interpreter's path, ...): a resume.
        return Opened(config=aligned, how="resumed")
    return Opened(
        config=aligned, how="grown", new_entrants=[e.name for e in aligned.entrants[len(old.entrants) :]],
        new_games=len(games),
    )  # fmt: skip


def _new_store(path: Path) -> str:
    return f"start a new store for the new settings with --db {path.with_name(path.stem + '-2' + path.suffix)}"


def deal_key_from(db: Path, config: TournamentConfig) -> bytes:
    """The deal key of the store at ``db``, to repeat its deals; ValueError if it has none or deals others."""
    if not db.is_file():
        raise ValueError(f"--deals-from {db}: no such results file")
    other = Store(db)
    try:
        key = other.deal_key()
        theirs = other.config() if other.tournament() is not None else None
    finally:
        other.close()
    if theirs is None:
        raise ValueError(f"--deals-from {db}: holds no tournament, so no deals to repeat")
    if differences := deal_differences(config, theirs):
        # Its key would deal other cards here: the run would look like a repeat and be none.
        raise ValueError(
            f"--deals-from {db}: holds another tournament ({theirs.name!r}), whose deals this file does not "
            f"repeat: it differs in {', '.join(differences)}; give the same game, variants, seed, format and "
            "table sizes, or leave --deals-from out"
        )
    if key is None:
        raise ValueError(
            f"--deals-from {db}: that store was made before famiglia kept deal keys; its deals cannot be repeated this way"
        )
    return key


@dataclass(frozen=True)
class ReadyToRun:
    """A store opened for a run: the tournament in it, and each entrant's bot version."""

    store: Store
    opened: Opened
    versions: list[int]
    """Each entrant's bot version, in the store's order (``tournaments.lifecycle.versions``)."""
    public_deals: bool
    """A store made before deal keys: its deals follow from the file's seed, which a bot may read."""
    tightened: list[tuple[Path, int]]
    """The store's files and the replay folder that others could read, made private again, with their old modes."""


def open_for_run(
    config: TournamentConfig, db: Path, *, deals_from: Path | None = None, new_versions: Collection[str] = ()
) -> ReadyToRun:
    """Open (or make) the store at ``db`` and bring ``config`` into it, ready for its games to be played.

    ``deals_from``: another store whose deal key this one takes (a new store
    only), so the same seed deals the same games there and here.
    ``new_versions``: entrants whose changed bot is recorded as a new version.
    Whatever is refused (a file the store cannot grow into, a changed bot, a
    store of other deals) raises before a game is played; a store this call
    made is then removed, since a results file without a tournament would be
    taken for one by the next command. The caller holds the store's lock.
    """
    made_here = not db.exists()
    try:
        store = Store(db)
        if deals_from is not None:
            store.use_deal_key(deal_key_from(deals_from, config), str(deals_from))
        public_deals = store.deal_key() is None
        opened = open_tournament(store, config)
        # Before a game is played: a bot edited in place under an old name is refused here.
        versions = settle_versions(store, opened.config, new_versions)
    except BaseException:
        if made_here:
            remove_empty_store(db)
        raise
    tightened = list(store.tightened)
    replays = replays_folder(opened.config, store.tournament_id())
    # The tournament's own folder closed is enough: others then reach none of its replays or stderr files.
    if replays is not None and (mode := tighten(replays)) is not None:
        tightened.append((replays, mode))
    return ReadyToRun(store=store, opened=opened, versions=versions, public_deals=public_deals, tightened=tightened)
