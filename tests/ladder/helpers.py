"""What the ladder tests share: a ladder file, uploads of real bot folders, hand-made hostile archives."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from referee.bot_folder import pack_folder

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_BOTS = ROOT / "sample_bots"
BROKEN_BOT = ROOT / "tests" / "bots" / "hostile" / "wrong_id"
"""Sends the wrong request id: check-bot fails it."""


def write_ladder(folder: Path, *, concurrency: int = 2, sandbox: str = "none", per_hour: int = 6) -> Path:
    """A ladder file for 3-seat Vendetta; its store and data go beside it."""
    path = folder / "ladder.toml"
    path.write_text(
        "[ladder]\n"
        'name = "test ladder"\n'
        'game = "vendetta"\n'
        "table_sizes = [3]\n"
        f"concurrency = {concurrency}\n"
        "[ladder.time]\n"
        # Generous clocks: check-bot must not reject a sample bot because other work slows the machine.
        "startup_ms = 20000\n"
        "move_ms = 5000\n"
        "bank_ms = 20000\n"
        "[ladder.sandbox]\n"
        f'level = "{sandbox}"\n'
        "[ladder.submissions]\n"
        f"per_hour = {per_hour}\n",
        encoding="utf-8",
    )
    return path


def upload_of(folder: Path) -> bytes:
    return pack_folder(folder)[1]


def archive(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    """A tar archive of hand-made members: what an attacker sends instead of ``ladder submit``'s."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buffer.getvalue()


def file_member(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def link_member(name: str, target: str, *, hard: bool = False) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE if hard else tarfile.SYMTYPE
    info.linkname = target
    return info, b""


def device_member(name: str) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    info.devmajor, info.devminor = 1, 3
    return info, b""


MANIFEST = file_member("bot.toml", b'name = "x"\ncommand = "python3 bot.py"\n')
