"""A free TCP port for a test's server: every run asks the OS, so two suites on one machine never collide."""

from __future__ import annotations

import socket

__all__ = ["free_port"]


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now (the OS's choice, so not one another run holds)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
