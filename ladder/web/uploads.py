"""A submission arriving over the web: the API's body or the entrant page's form, one way through.

``receive_upload`` holds what both share: one upload at a time per entrant
(each holds up to ``max_bytes`` in memory while it arrives), a deadline for
it to arrive, the archive turned into a package and checked
(``ladder.archives``, in a thread: a zip of many members takes a moment),
the hourly limit, the package stored before the version row names it, and
the version handed to the intake. ``Refused`` carries the HTTP status and
the one line the sender is shown; the API sends it as JSON, the form as a
page.

The page's form is ``multipart/form-data`` (a file input, no JavaScript);
its body is bounded before it is parsed, and parsed with the standard
library's MIME parser, since only one field of it is read.
"""

from __future__ import annotations

import email.parser
import email.policy
import sys
from collections.abc import Awaitable, Callable

import trio
from starlette.requests import Request

from ladder.archives import accept_upload
from ladder.store import RateLimited, VersionRow
from ladder.submissions import save_upload
from ladder.upload import UploadRefused
from ladder.web.auth import Entrant
from ladder.web.guard import BodyTooLarge, read_body
from ladder.web.site import site
from protocol.untrusted import terminal_text

__all__ = ["FORM_OVERHEAD", "UPLOAD_S", "Refused", "archive_of_form", "receive_upload"]

UPLOAD_S = 300.0
"""How long an upload may take to arrive: max_bytes at a slow link's pace."""
FORM_OVERHEAD = 16 << 10
"""What a form's encoding adds around the file: boundaries and part headers."""


class Refused(Exception):
    """A submission not taken: the HTTP status and the line its sender is shown."""

    def __init__(self, status: int, said: str) -> None:
        super().__init__(said)
        self.status = status
        self.said = said


async def receive_upload(
    request: Request, who: Entrant, extract: Callable[[Request, int], Awaitable[bytes]]
) -> VersionRow:
    """The new queued version of ``who`` made of the archive ``extract`` reads from ``request``; Refused otherwise."""
    shared = site(request)
    limits = shared.ladder.config.submissions
    if (closed := shared.ladder.season_closed()) is not None:
        raise Refused(403, closed)  # before a byte is read: the season's versions are frozen
    if who.row.id in shared.uploading:
        raise Refused(429, "an upload of yours is still arriving; send one at a time")
    shared.uploading.add(who.row.id)
    try:
        # A deadline: an upload stalled for good (its sender's network gone) must not hold its
        # entrant's one upload at a time for as long as the connection lingers.
        with trio.move_on_after(UPLOAD_S) as arriving:
            data = await extract(request, limits.max_bytes)
        if arriving.cancelled_caught:
            raise Refused(408, f"the upload took over {UPLOAD_S:.0f} s to arrive; send it again")
        accepted = await trio.to_thread.run_sync(accept_upload, data, limits)
    except BodyTooLarge as exc:
        raise Refused(413, str(exc)) from None
    except UploadRefused as exc:
        raise Refused(400, str(exc)) from None
    finally:
        shared.uploading.discard(who.row.id)
    prior = (shared.ladder.config.rating.prior_mu, shared.ladder.config.rating.prior_sigma)
    try:
        # No await from here to add_version: no other request of this entrant's comes in between.
        shared.store.check_rate(who.row.id, limits.per_hour)
        save_upload(shared.ladder.paths.uploads, accepted.digest, accepted.package)
        version = shared.store.add_version(who.row.id, accepted.digest, prior, limits.per_hour)
    except RateLimited as exc:
        raise Refused(429, str(exc)) from None
    except OSError as exc:
        # The ladder's disk, not the entrant's upload (nothing of it was kept: the file is written whole or not
        # at all). The host reads why on the server's output; the entrant, that it is worth sending again.
        print(terminal_text(f"an upload of {who.row.name} could not be kept: {exc}"), file=sys.stderr, flush=True)
        raise Refused(503, "the ladder cannot keep uploads just now (its disk); send it again later") from None
    shared.ladder.enqueue(version.id)
    return version


async def archive_of_body(request: Request, max_bytes: int) -> bytes:
    """The API's way: the request's body is the archive."""
    return await read_body(request, max_bytes)


async def archive_of_form(request: Request, max_bytes: int) -> bytes:
    """The page's way: the file of the form's ``archive`` field."""
    kind = request.headers.get("content-type", "")
    if not kind.lower().startswith("multipart/form-data"):
        raise UploadRefused("send the form with its file (multipart/form-data)")
    body = await read_body(request, max_bytes + FORM_OVERHEAD)
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"content-type: " + kind.encode("latin-1", "replace") + b"\r\n\r\n" + body
    )
    if not message.is_multipart():
        raise UploadRefused("the form could not be read; choose the archive and send it again")
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "archive":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes) and payload:
                if len(payload) > max_bytes:
                    raise BodyTooLarge(f"the archive is over {max_bytes} bytes")
                return payload
    raise UploadRefused("choose the archive of your bot's folder (a zip or tar) before sending the form")
