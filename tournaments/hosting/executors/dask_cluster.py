"""Reaching a Dask cluster from the host: the address, its security, and the famiglia its workers run.

Whoever reaches a plain (tcp://) Dask scheduler can run any code on its
workers, which run as root to give bots uids of their own. Dask's answer is
TLS with certificates: a ``tls://`` scheduler accepts only peers holding a
certificate signed by the cluster's CA. The host takes its certificate from
Dask's own configuration (``distributed.comm.tls.*``, for example the
``DASK_DISTRIBUTED__COMM__TLS__...`` environment variables), as every Dask
client does, and warns when it reaches a scheduler off this machine in the
clear.

Dask's ``connect`` bounds the TCP connection but not the handshake after it,
so a port that accepts and never answers would hold a client for ever: the
host shakes hands itself, under its own deadline, before it makes a client.

Before it joins, the host asks the scheduler to prove it was started for
this host's runs (``cluster_identity``: a shared secret): another program's
scheduler on the same port is refused in one line.

A scheduler started with certificates speaks TLS only: reached at tcp:// (or
an address without a scheme, which Dask reads as tcp://) it drops the
connection, which Dask reports as "Connection reset by peer". When that
happens, the port is asked whether it answers a TLS hello, so the host and
``famiglia worker start`` (``tls_only_address``) say which address to give
instead. A scheduler that answers in plain TCP is never sent that hello.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import sys
from typing import Any

from distributed import Client
from distributed.comm import connect, parse_address
from distributed.comm.addressing import parse_host_port
from distributed.security import Security

from tournaments.hosting.executors.asyncio_apart import run_apart
from tournaments.hosting.executors.cluster_identity import cluster_secret, identity_problem
from tournaments.hosting.executors.installed import (
    InstalledFamiglia,
    WrongFamiglia,
    famiglia_problem,
    installed_famiglia,
)

__all__ = [
    "DaskUnreachable",
    "WrongFamiglia",
    "check_workers",
    "clear_text_warning",
    "connect_client",
    "listening",
    "print_notice",
    "security_for",
    "tls_only_address",
    "worker_refusal",
]

_TLS_VARIABLES = (
    "DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT and "
    "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY"
)


class DaskUnreachable(ValueError):
    """The scheduler cannot be reached (or not safely) at the address given."""


def print_notice(line: str) -> None:
    """Where the executor's notices go by default: one line on stderr (Rich's live display prints it above itself)."""
    print(f"famiglia: {line}", file=sys.stderr, flush=True)


def security_for(address: str) -> Security:
    """Dask's security settings from its configuration; DaskUnreachable when a tls:// address has no certificate."""
    security = Security()
    protocol, _ = parse_address(address)
    if protocol == "tls" and not (security.tls_ca_file and security.tls_client_cert):
        raise DaskUnreachable(
            f"the Dask scheduler at {address} needs this host's certificate of the cluster: set {_TLS_VARIABLES} "
            "(docs/distributed.md, Security)"
        )
    return security


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(str(entry[4][0])).is_loopback for entry in found)


def clear_text_warning(address: str) -> str | None:
    """The warning for a scheduler reached without TLS off this machine, or None."""
    protocol, location = parse_address(address)
    if protocol != "tcp":
        return None
    host, _ = parse_host_port(location)
    if _is_loopback(host):
        return None
    return (
        f"warning: the Dask scheduler at {address} is reached in the clear: whoever reaches it can run any code "
        "on its workers (root on their machines); use a tls:// scheduler with certificates (docs/distributed.md, Security)"
    )


def _probe(address: str, timeout_s: float) -> None:
    """OSError at once when nothing listens at a tcp:// or tls:// address (Dask's connect would retry until its timeout)."""
    protocol, location = parse_address(address)
    if protocol not in ("tcp", "tls"):
        return
    host, port = parse_host_port(location)
    socket.create_connection((host, port), timeout=timeout_s).close()


def _handshake(address: str, security: Security, timeout_s: float) -> None:
    """Shake hands with the scheduler as Dask's client would, all of it within ``timeout_s``."""

    async def shake() -> None:
        comm = await connect(address, timeout=timeout_s, **security.get_connection_args("client"))
        await comm.close()

    try:
        run_apart(shake, timeout_s)
    except TimeoutError:
        protocol, _ = parse_address(address)
        hint = "; a scheduler started with --tls-* certificates is reached at tls://" if protocol == "tcp" else ""
        raise TimeoutError(f"no Dask answer within {timeout_s:g} s{hint}") from None
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001  # any reply that is not Dask's, however it fails to parse
        # Something else listens there (a web server, another service): its
        # bytes read as a Dask frame can ask for any size of buffer.
        raise OSError(f"what answered is not a Dask scheduler: {type(exc).__name__}") from None


def _client_hello() -> bytes:
    """The first bytes a TLS client sends (its ClientHello), made by Python's ssl without a socket."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # nothing is trusted or sent over it: only the answer's first bytes are read
    outgoing = ssl.MemoryBIO()
    hello = context.wrap_bio(ssl.MemoryBIO(), outgoing)
    try:
        hello.do_handshake()
    except ssl.SSLWantReadError:  # the hello is written; the handshake waits for the server's answer
        pass
    return outgoing.read()


def _answers_tls(address: str, timeout_s: float) -> str | None:
    """The tls:// address to give instead of ``address`` when that is a tcp:// one (or has no scheme)
    whose port answers a TLS hello in TLS: a scheduler started with certificates. Else None (nothing
    listens there, it is not tcp://, or it answers otherwise)."""
    protocol, location = parse_address(address)
    if protocol != "tcp":
        return None
    host, port = parse_host_port(location)
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as connection:
            connection.sendall(_client_hello())
            answer = connection.recv(3)
    except OSError:
        return None
    # A TLS record: a handshake (22) or an alert (21), in protocol version 3.x. A Dask
    # scheduler in the clear answers with a frame of its own, whose first bytes are a count.
    if len(answer) >= 2 and answer[0] in (21, 22) and answer[1] == 3:
        return f"tls://{location}"
    return None


def tls_only_address(address: str, timeout_s: float) -> str | None:
    """When the tcp:// ``address`` reaches a scheduler that answers in TLS only, the tls:// address to give
    instead; None when it answers in plain TCP, nothing listens there (yet), or it is no tcp:// address.

    ``famiglia worker start`` asks before it starts a Dask worker, which would
    otherwise fail on such a scheduler with a traceback and be started again.
    """
    protocol, _ = parse_address(address)
    if protocol != "tcp":
        return None
    try:
        _probe(address, timeout_s)
    except OSError:
        return None  # nothing listens: the worker waits for its scheduler
    try:
        _handshake(address, Security(), timeout_s)
    except TimeoutError:  # no answer at all; caught first, as it is an OSError too
        return None
    except OSError:  # dropped, as a TLS scheduler drops a peer in the clear
        return _answers_tls(address, timeout_s)
    return None


def listening(address: str, timeout_s: float) -> bool:
    """Whether something accepts connections at the tcp:// or tls:// ``address`` now."""
    try:
        _probe(address, timeout_s)
    except OSError:
        return False
    return True


def worker_refusal(address: str, timeout_s: float) -> str | None:
    """Why ``famiglia worker start`` must not join the scheduler listening at ``address`` (a line), or None:
    it proves the cluster identity this machine expects (or neither has one), or it did not answer the
    challenge in time (not a scheduler a worker could join either)."""
    try:
        cluster_secret()
    except ValueError as exc:
        return str(exc)
    try:
        return identity_problem(address, security_for(address), timeout_s)
    except (OSError, TimeoutError, DaskUnreachable):
        return None


def connect_client(address: str, timeout_s: float) -> Client:
    """A client of the scheduler at ``address``; DaskUnreachable within about ``timeout_s`` if it does not
    answer, or if it was not started for this host (``cluster_identity``)."""
    security = security_for(address)
    try:
        cluster_secret()  # a secret too short to be one is said before anything is reached
    except ValueError as exc:
        raise DaskUnreachable(str(exc)) from None
    try:
        _probe(address, timeout_s)
        try:
            _handshake(address, security, timeout_s)
        except TimeoutError:
            raise  # no answer at all (an OSError too): a TLS hello would wait as long again for nothing
        except OSError:
            if (tls := _answers_tls(address, timeout_s)) is not None:
                raise DaskUnreachable(
                    f"the Dask scheduler at {address} did not answer in plain TCP: it speaks TLS, so it was started "
                    f"with certificates; give its address as {tls} and set this host's certificate of the cluster "
                    f"in {_TLS_VARIABLES} (docs/distributed.md, Security)"
                ) from None
            raise
        if (problem := identity_problem(address, security, timeout_s)) is not None:
            raise DaskUnreachable(problem)
        # direct_to_workers: answers come from the workers, not through the
        # scheduler (which would pass every replay on). The host runs where
        # the scheduler runs, so it reaches the workers at the addresses the
        # scheduler does.
        return Client(address, timeout=timeout_s, security=security, set_as_default=False, direct_to_workers=True)
    except DaskUnreachable:
        raise  # said in full already
    except (OSError, TimeoutError, ValueError) as exc:
        raise DaskUnreachable(
            f"cannot reach the Dask scheduler at {address} ({_one_line(exc)}); start one with `dask scheduler` "
            "and give its address (tcp://HOST:8786, or tls://HOST:8786 with certificates)"
        ) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def check_workers(client: Client, expected: InstalledFamiglia | None = None) -> None:
    """WrongFamiglia naming the first worker whose famiglia is not the host's (or that has none)."""
    host = expected if expected is not None else installed_famiglia()
    answers: dict[str, Any] = client.run(installed_famiglia, on_error="return")
    for address, answer in sorted(answers.items()):
        problem = famiglia_problem(host, answer)
        if problem is not None:
            raise WrongFamiglia(f"Dask worker {address} {problem}")
