"""check-bot's ``Transcript``: what it keeps of the bot's lines, without a process (a stand-in the test turns)."""

from __future__ import annotations

import pytest
import trio

from tournaments.hosting.checkbot.transcript import Transcript


class _FakeProcess:
    """Stands in for a BotProcess: a CPU meter the test turns, the lines the bot 'says', and what the
    Transcript reads besides."""

    def __init__(self, lines: list[bytes] | None = None) -> None:
        self.cpu_ns = 0
        self.meter = lambda: self.cpu_ns
        self.waited = None  # no wait meter: check-bot's own figure is the CPU, as here
        self.sandbox = "none"
        self.can_hold = False
        self.sent: list[bytes] = []
        self.lines = list(lines or [])

    async def send(self, data: bytes) -> None:
        self.sent.append(data)

    async def readline(self) -> bytes:
        return self.lines.pop(0)


def transcript_of(process: _FakeProcess, *, cpu_clock: bool = True) -> Transcript:
    return Transcript(process, cpu_clock=cpu_clock)  # type: ignore[arg-type]


@pytest.mark.parametrize(("cpu_clock", "charged_ms"), [(True, 40.0), (False, 1000.0)])
async def test_thinking_is_charged_as_the_hosts_clock_charges_it(
    cpu_clock: bool, charged_ms: float, autojump_clock: trio.abc.Clock
) -> None:
    # 40 ms of CPU over 1 s of wall time (a bot that sleeps, or waits for a core): the cpu clock
    # charges the 40 ms, the wall clock the second; check-bot's "time" check judges the same figure.
    process = _FakeProcess([b'{"type":"action","id":1,"action":{}}'])
    transcript = transcript_of(process, cpu_clock=cpu_clock)
    await transcript.send(b'{"type":"request","id":1,"decision":"place"}\n')
    process.cpu_ns += 40_000_000
    await trio.sleep(1.0)
    await transcript.readline()
    assert transcript.thinking_ms == [pytest.approx(charged_ms)]


async def test_every_line_passes_through_unchanged_and_answered_ids_are_kept(autojump_clock: trio.abc.Clock) -> None:
    said = [b'{"type":"ready"}', b'{"type":"log","message":"hm"}', b'{"type":"action","id":1,"action":{}}']
    process = _FakeProcess(said)
    transcript = transcript_of(process)
    await transcript.send(b'{"type":"start","match":"m","seat":0}\n')
    assert await transcript.readline() == said[0]
    await transcript.send(b'{"type":"request","id":1,"decision":"place"}\n')
    assert [await transcript.readline(), await transcript.readline()] == said[1:]
    assert process.sent[1] == b'{"type":"request","id":1,"decision":"place"}\n'
    assert transcript.answered == {1} and transcript.open_request == 0 and transcript.decision == "place"


async def test_only_a_fresh_processs_first_ready_is_its_start_up(autojump_clock: trio.abc.Clock) -> None:
    process = _FakeProcess([b'{"type":"ready"}', b'{"type":"ready"}'])
    transcript = transcript_of(process)
    await trio.sleep(0.3)  # the process takes 300 ms to say ready
    await transcript.send(b'{"type":"start"}\n')
    await transcript.readline()
    await trio.sleep(2.0)  # a second game on the warm process: no new start-up
    await transcript.send(b'{"type":"start"}\n')
    await transcript.readline()
    assert transcript.startup_ms == [pytest.approx(300.0)]


async def test_a_line_that_is_no_message_counts_as_heard(autojump_clock: trio.abc.Clock) -> None:
    # After a wrong line the bot has answered, rightly or not: a kill then looks for no late answer.
    transcript = transcript_of(_FakeProcess([b"not json", b'{"type":"log","message":"x"}']))
    await transcript.send(b'{"type":"request","id":3,"decision":"pick"}\n')
    assert not transcript.heard
    await transcript.readline()
    assert transcript.heard
    await transcript.send(b'{"type":"request","id":4,"decision":"pick"}\n')
    await transcript.readline()  # a log line is not an answer
    assert not transcript.heard
