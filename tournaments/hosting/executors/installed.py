"""The famiglia installed in this process: its files, a fingerprint of their content, and a wheel of them.

A Dask cluster runs code the host pickled against its own famiglia; a worker
with other files would referee by other rules (or fail to unpickle). The host
and every worker therefore compare a content fingerprint of famiglia's
packages (the installed distribution's top-level ones: ``protocol``,
``referee``, ``tournaments``, ...) as they are on disk, not the version
string, which an edited checkout never changes.

A worker machine gets the host's famiglia as a wheel that ``write_wheel``
builds from exactly the files the fingerprint covers, so a worker installed
from it has the host's fingerprint by construction. It needs no build tool
and works the same for an editable install and a wheel-installed host.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import zipfile
from importlib.metadata import Distribution, distributions
from pathlib import Path

import msgspec

__all__ = [
    "PACKAGES",
    "InstalledFamiglia",
    "WrongFamiglia",
    "famiglia_packages",
    "famiglia_problem",
    "installed_famiglia",
    "package_files",
    "write_wheel",
]

PACKAGES = ("protocol", "referee", "tournaments")
"""famiglia's packages when the installed distribution does not list them (a source tree never installed)."""
_WHEEL_TIME = (1980, 1, 1, 0, 0, 0)  # a fixed date: the same files always make the same wheel bytes


class WrongFamiglia(ValueError):
    """A Dask worker runs another famiglia than the host (or none): install the host's wheel there."""


class InstalledFamiglia(msgspec.Struct, frozen=True, kw_only=True):
    """What famiglia a process runs: the distribution's version and a hash of its packages' files."""

    version: str
    fingerprint: str
    """Hex SHA-256 over every file's path and content (bytecode caches left out)."""

    def describe(self) -> str:
        return f"famiglia {self.version}, files {self.fingerprint[:12]}"


def _kept(path: Path) -> bool:
    """Whether a file belongs to the package: not a bytecode cache, not a hidden (editor or OS) file."""
    return not any(part == "__pycache__" or part.startswith(".") for part in path.parts) and path.suffix != ".pyc"


def package_files() -> list[tuple[str, Path]]:
    """(path inside the wheel, file on disk) for every file of famiglia's packages, sorted by the first."""
    files: list[tuple[str, Path]] = []
    for package in famiglia_packages():
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue  # listed but not importable: nothing of it can run here, so none of it counts
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in root.rglob("*"):
            relative = path.relative_to(root)
            if path.is_file() and _kept(relative):
                files.append(((Path(package) / relative).as_posix(), path))
    return sorted(files)


def _package_contents() -> list[tuple[str, bytes]]:
    """(path inside the wheel, content) of every file of famiglia's packages; a file removed meanwhile is left out."""
    contents: list[tuple[str, bytes]] = []
    for name, path in package_files():
        try:
            contents.append((name, path.read_bytes()))
        except FileNotFoundError:  # an editor's save replaced or removed it since the listing
            continue
    return contents


def famiglia_packages() -> list[str]:
    """The top-level packages the installed famiglia has (its top_level.txt), else ``PACKAGES``."""
    try:
        listed = _installed_metadata()[0].read_text("top_level.txt") or ""
    except ValueError:
        listed = ""
    return sorted({line.strip() for line in listed.splitlines() if line.strip()}) or list(PACKAGES)


def _version() -> str:
    try:
        return _installed_metadata()[0].version
    except ValueError:  # a source tree that was never installed
        return "unknown"


def installed_famiglia() -> InstalledFamiglia:
    """This process's famiglia, read from disk now (a file edited since counts: it is what a new import would run)."""
    digest = hashlib.sha256()
    for name, data in _package_contents():
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return InstalledFamiglia(version=_version(), fingerprint=digest.hexdigest())


def famiglia_problem(host: InstalledFamiglia, answer: object) -> str | None:
    """What is wrong with a worker's ``installed_famiglia()`` (or the error it raised); None for the host's famiglia."""
    fix = "install the host's wheel there (famiglia worker wheel; docs/distributed.md) and restart the worker"
    if isinstance(answer, InstalledFamiglia):
        if answer.fingerprint == host.fingerprint:
            return None
        return f"runs {answer.describe()}, not this host's {host.describe()}: {fix}"
    if isinstance(answer, BaseException):
        said = " ".join(str(answer).split())
        return f"cannot run this host's famiglia ({type(answer).__name__}: {said}): {fix}"
    return f"answered {type(answer).__name__} when asked for its famiglia: {fix}"


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _installed_metadata() -> tuple[Distribution, str]:
    """The installed distribution and its METADATA.

    A source checkout on ``sys.path`` may also hold a ``famiglia.egg-info``
    left by an old build (PKG-INFO, no METADATA): the installed one is wanted.
    """
    for dist in distributions(name="famiglia"):
        if (metadata := dist.read_text("METADATA")) is not None:
            return dist, metadata
    raise ValueError(
        "famiglia is not installed in this environment (run from a source tree?): install it with "
        "`pip install -e .` in the famiglia checkout, then build the wheel again"
    )


def write_wheel(folder: Path) -> Path:
    """Write a wheel of the famiglia installed here into ``folder``; its path.

    Metadata (dependencies, extras, the console script and the game entry
    points) comes from the installed distribution, so ``pip install
    'famiglia-....whl[dask]'`` on a worker pulls the same dependencies from the
    package index.
    """
    dist, metadata = _installed_metadata()
    version = dist.version
    info = f"famiglia-{version}.dist-info"
    members = _package_contents()
    members.append((f"{info}/METADATA", metadata.encode()))
    members.append(
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: famiglia\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    )
    if (entry_points := dist.read_text("entry_points.txt")) is not None:
        members.append((f"{info}/entry_points.txt", entry_points.encode()))
    members.append((f"{info}/top_level.txt", "".join(f"{p}\n" for p in famiglia_packages()).encode()))
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in members) + f"{info}/RECORD,,\n"
    members.append((f"{info}/RECORD", record.encode()))

    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"famiglia-{version}-py3-none-any.whl"
    partial = wheel.with_name(wheel.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            entry = zipfile.ZipInfo(name, date_time=_WHEEL_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
    partial.replace(wheel)  # never a half-written wheel under the real name
    return wheel
