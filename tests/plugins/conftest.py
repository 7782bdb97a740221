"""The example simultaneous game, registered for the tests that ask for it (``sealed``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.plugins.sealed_site import forget, register


@pytest.fixture
def sealed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Sealed registered in this test's process, and for the ``famiglia`` processes it starts."""
    folders = register(tmp_path / "site")
    for folder in reversed(folders):
        monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([*map(str, folders), str(ROOT)]))
    yield folders[0]
    forget()
