"""Toolchains under the host's home still build and run in the sandbox (issue 25, part 4).

A version manager puts a proxy on PATH (rustup's ``~/.cargo/bin/cargo``, a pyenv,
asdf or mise shim) that finds the real program through the manager's own folders
and variables, which default to places under ``$HOME``; in the sandbox ``HOME`` is
the bot's private ``/tmp``. Each test here builds a faithful small layout of one
manager under a fake home in ``tmp_path`` (the proxy works as the real one does:
it reads the manager's variables, falls back on ``$HOME``, then execs the real
program), puts it first on PATH, and runs real processes in the real sandbox. The
slow tests at the end use the real rustup and pyenv of this machine, when there
are. Then the runtime folders a host names itself: ``--runtime`` and
``runtimes = [...]``, and their refusals.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from typer.testing import CliRunner

from referee.bots import BotSpec, load_bot
from referee.match import MatchRecord, MatchSpec
from referee.play import play_match, prepare_bots
from referee.process import open_bot
from referee.sandbox import SandboxUnavailable, require_level
from referee.sandbox.view import mount_flags, runtime_env, runtime_paths
from referee.settings import RefereeSettings
from tests.conftest import TEST_BOTS
from tournaments.cli import app
from tournaments.config.tournament import ConfigProblems, parse_tournament
from tournaments.playing import settings_for

PASSER = TEST_BOTS / "passer"
SYSTEM_PYTHON = "/usr/bin/python3"

# The bot every fake compiler "compiles": the first option, or an empty placement.
FIRST_OPTION_BOT = f"""#!{SYSTEM_PYTHON}
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({{"type": "ready", "name": "built"}}), flush=True)
    elif message["type"] == "request":
        action = (message.get("options") or [{{"type": "place", "placements": []}}])[0]
        print(json.dumps({{"type": "action", "id": message["id"], "action": action}}), flush=True)
"""


def _sandbox() -> RefereeSettings:
    try:
        return RefereeSettings(sandbox=require_level("standard"), grace_ms=200)
    except SandboxUnavailable as exc:
        pytest.skip(f"the standard sandbox cannot run here: {exc}")


def _write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def _open_to_others(root: Path) -> None:
    """A root referee's bots run as uids of their own: the fake home must be readable by them."""
    for folder, dirs, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | stat.S_IROTH)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fake home folder, the referee's HOME, with a secret the bots must never see."""
    folder = tmp_path / "home"
    _write(folder / "secret.txt", "the host's own")
    _write(folder / ".local" / "share" / "keyring", "the host's own")
    monkeypatch.setenv("HOME", str(folder))
    for variable in ("RUSTUP_HOME", "CARGO_HOME", "PYENV_ROOT", "ASDF_DATA_DIR", "MISE_DATA_DIR", "SDKMAN_DIR"):
        monkeypatch.delenv(variable, raising=False)
    yield folder


def _path_first(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    monkeypatch.setenv("PATH", ":".join([*map(str, folders), "/usr/bin", "/bin"]))


def _facts_tool(path: Path, *lines: str) -> Path:
    """A program that reports what it sees on stderr (``key=value``), then waits for end of input."""
    body = "\n".join(f'echo "{line}" >&2' for line in lines)
    return _write(path, f'#!/bin/sh\n{body}\necho "done=1" >&2\nexec cat > /dev/null\n', 0o755)


async def _facts(spec: BotSpec, settings: RefereeSettings) -> dict[str, str]:
    async with open_bot(spec, settings) as bot:
        with trio.move_on_after(10):
            while "done=1" not in bot.stderr_text() and bot.process.returncode is None:
                await trio.sleep(0.02)
        text = bot.stderr_text()
    assert "done=1" in text, text
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _bot_folder(folder: Path, toml: str, files: dict[str, str]) -> Path:
    _write(folder / "bot.toml", toml)
    for name, text in files.items():
        _write(folder / name, text)
    _open_to_others(folder)
    return folder


async def _play_against_passers(spec: BotSpec, settings: RefereeSettings) -> MatchRecord:
    passer = load_bot(str(PASSER))
    with trio.fail_after(60):
        return await play_match(MatchSpec(game="vendetta", seed=3), [passer, spec, passer], settings)


# --- rustup: ~/.cargo/bin/rustc is a link to rustup ---------------------------

# Like rustup's proxy: the tool it stands for is its own name; the toolchain is the
# default one of RUSTUP_HOME's settings (``$HOME/.rustup`` when unset).
RUSTUP_PROXY = """#!/bin/sh
tool=${0##*/}
home=${RUSTUP_HOME:-$HOME/.rustup}
chain=$(sed -n 's/^default_toolchain = "\\(.*\\)"$/\\1/p' "$home/settings.toml" 2>/dev/null)
if [ -z "$chain" ]; then
    echo "error: rustup could not choose a version of $tool to run, because one wasn't specified explicitly, and no default is configured." >&2
    exit 1
fi
exec "$home/toolchains/$chain/bin/$tool" "$@"
"""

# The toolchain's compiler: ``rustc -o OUT SRC`` makes OUT from SRC; ``rustc --facts`` reports.
FAKE_RUSTC = """#!/bin/sh
if [ "$1" = "--facts" ]; then
    echo "rustup_home=$RUSTUP_HOME" >&2
    echo "cargo_home=$CARGO_HOME" >&2
    if [ -e "$CARGO_HOME/credentials.toml" ]; then echo "credentials=visible" >&2; else echo "credentials=hidden" >&2; fi
    if touch "$RUSTUP_HOME/written" 2>/dev/null; then echo "writable=yes" >&2; else echo "writable=no" >&2; fi
    echo "home=$(ls -A "${RUSTUP_HOME%/*}" | sort | tr '\\n' ' ')" >&2
    echo "done=1" >&2
    exec cat > /dev/null
fi
[ "$1" = "-o" ] || { echo "usage: rustc -o OUT SRC" >&2; exit 2; }
cp "$3" "$2" && chmod 755 "$2"
"""


def _fake_rustup(home: Path) -> Path:
    cargo_bin = home / ".cargo" / "bin"
    _write(cargo_bin / "rustup", RUSTUP_PROXY, 0o755)
    (cargo_bin / "rustc").symlink_to("rustup")
    _write(home / ".cargo" / "credentials.toml", '[registry]\ntoken = "the host\'s token"\n')
    (home / ".cargo" / "registry" / "index").mkdir(parents=True)
    _write(home / ".rustup" / "settings.toml", 'version = "12"\ndefault_toolchain = "stable-fake"\n')
    _write(home / ".rustup" / "toolchains" / "stable-fake" / "bin" / "rustc", FAKE_RUSTC, 0o755)
    _open_to_others(home)
    return cargo_bin


@pytest.mark.skipif(not os.path.exists(SYSTEM_PYTHON), reason=f"the built bot runs on {SYSTEM_PYTHON}")
async def test_a_build_whose_compiler_is_a_rustup_proxy_under_the_home_builds_and_its_bot_plays(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _sandbox()
    _path_first(monkeypatch, _fake_rustup(home))
    folder = _bot_folder(
        tmp_path / "rusty",
        'name = "rusty"\ncommand = "./bot"\nbuild = "rustc -o bot bot.src"\nlanguage = "rust"\n',
        {"bot.src": FIRST_OPTION_BOT},
    )
    (spec,) = await trio.to_thread.run_sync(prepare_bots, [load_bot(str(folder))], settings)
    record = await _play_against_passers(spec, settings)
    assert record.result.terminations == [] and record.sandbox == "standard"


async def test_a_rustup_proxy_finds_its_toolchain_read_only_and_not_cargos_credentials(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _sandbox()
    _path_first(monkeypatch, _fake_rustup(home))
    found = await _facts(BotSpec(name="rustc", command=["rustc", "--facts"], cwd=str(TEST_BOTS)), settings)
    assert found["rustup_home"] == str(home / ".rustup") and found["cargo_home"] == str(home / ".cargo")
    assert found["credentials"] == "hidden" and found["writable"] == "no"
    # Only the manager's own folders of that home exist; its secret does not.
    assert found["home"].split() == [".cargo", ".rustup"]
    assert not (home / ".rustup" / "written").exists()


# --- pyenv: ~/.pyenv/shims/<tool> execs libexec/pyenv, which picks a version ----


def _fake_pyenv(home: Path, tool: str) -> Path:
    root = home / ".pyenv"
    # As pyenv writes its shims: PYENV_ROOT baked in, then ``pyenv exec``.
    _write(root / "shims" / tool, (
        f'#!/bin/sh\nset -e\nprogram="${{0##*/}}"\nexport PYENV_ROOT="{root}"\n'
        f'exec "{root}/libexec/pyenv" exec "$program" "$@"\n'
    ), 0o755)  # fmt: skip
    # ``pyenv exec``: the version from PYENV_VERSION, else PYENV_ROOT's global ``version`` file.
    _write(root / "libexec" / "pyenv", (
        '#!/bin/sh\n[ "$1" = exec ] || exit 2\nprogram=$2\nshift 2\n'
        'version=${PYENV_VERSION:-$(cat "$PYENV_ROOT/version")}\n'
        'exec "$PYENV_ROOT/versions/$version/bin/$program" "$@"\n'
    ), 0o755)  # fmt: skip
    _write(root / "version", "9.9-fake\n")
    (root / "versions" / "9.9-fake" / "bin").mkdir(parents=True)
    (root / "versions" / "9.9-fake" / "bin" / tool).symlink_to(SYSTEM_PYTHON)
    _open_to_others(home)
    return root / "shims"


@pytest.mark.skipif(not os.path.exists(SYSTEM_PYTHON), reason=f"the fake version runs {SYSTEM_PYTHON}")
async def test_a_bot_whose_interpreter_is_a_pyenv_shim_plays(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _sandbox()
    _path_first(monkeypatch, _fake_pyenv(home, "fakepython"))
    folder = _bot_folder(tmp_path / "snake", 'name = "snake"\ncommand = "fakepython bot.py"\n', {
        "bot.py": FIRST_OPTION_BOT})  # fmt: skip
    (spec,) = prepare_bots([load_bot(str(folder))], settings)
    assert runtime_env(spec) == {"PYENV_ROOT": str(home / ".pyenv")}
    record = await _play_against_passers(spec, settings)
    assert record.result.terminations == []


# --- asdf and mise: shims that find the version in .tool-versions ---------------

# How asdf and mise choose a tool's version: the nearest .tool-versions from the
# working folder up, else the one in $HOME.
CHOOSE_VERSION = """
version=""
dir=$PWD
while [ -z "$version" ]; do
    [ -f "$dir/.tool-versions" ] && version=$(sed -n "s/^$tool //p" "$dir/.tool-versions")
    [ "$dir" = / ] && break
    dir=$(dirname "$dir")
done
[ -n "$version" ] || version=$(sed -n "s/^$tool //p" "$HOME/.tool-versions" 2>/dev/null)
[ -n "$version" ] || { echo "No version is set for command $tool" >&2; exit 126; }
"""


async def test_an_asdf_shim_finds_asdf_its_installs_and_the_hosts_global_version(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _sandbox()
    data = home / ".asdf"
    # asdf 0.16 and later: a shim runs ``asdf exec``, the asdf found on PATH (here ~/.local/bin).
    _write(
        data / "shims" / "faketool", '#!/bin/sh\n# asdf-plugin: faketool 1.0\nexec asdf exec "faketool" "$@"\n', 0o755
    )
    _write(home / ".local" / "bin" / "asdf", (
        '#!/bin/sh\n[ "$1" = exec ] || exit 2\ntool=$2\nshift 2\ndata=${ASDF_DATA_DIR:-$HOME/.asdf}\n'
        + CHOOSE_VERSION + 'exec "$data/installs/$tool/$version/bin/$tool" "$@"\n'
    ), 0o755)  # fmt: skip
    (data / "plugins" / "faketool").mkdir(parents=True)
    _facts_tool(
        data / "installs" / "faketool" / "1.0" / "bin" / "faketool",
        "version=1.0",
        f"local=$(ls -A {home}/.local | tr '\\n' ' ')",
    )
    _write(home / ".tool-versions", "faketool 1.0\n")
    _open_to_others(home)
    _path_first(monkeypatch, data / "shims", home / ".local" / "bin")
    found = await _facts(BotSpec(name="tool", command=["faketool"], cwd=str(TEST_BOTS)), settings)
    assert found["version"] == "1.0"
    assert found["local"].split() == ["bin"]  # asdf itself, not the rest of ~/.local


async def test_a_mise_shim_finds_mise_and_its_installs(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _sandbox()
    data = home / ".local" / "share" / "mise"
    mise = _write(home / ".local" / "bin" / "mise", (
        '#!/bin/sh\ntool=${0##*/}\ndata=${MISE_DATA_DIR:-$HOME/.local/share/mise}\n'
        + CHOOSE_VERSION + 'exec "$data/installs/$tool/$version/bin/$tool" "$@"\n'
    ), 0o755)  # fmt: skip
    (data / "shims").mkdir(parents=True)
    (data / "shims" / "faketool").symlink_to(mise)  # mise's shims are links to mise itself
    _facts_tool(
        data / "installs" / "faketool" / "2.0" / "bin" / "faketool",
        "version=2.0",
        f"share=$(ls -A {home}/.local/share | tr '\\n' ' ')",
    )
    _write(home / ".tool-versions", "faketool 2.0\n")
    _open_to_others(home)
    _path_first(monkeypatch, data / "shims")
    found = await _facts(BotSpec(name="tool", command=["faketool"], cwd=str(TEST_BOTS)), settings)
    assert found["version"] == "2.0"
    assert found["share"].split() == ["mise"]  # not the host's keyring beside it


# --- sdkman: candidates/<tool>/current, one tool running another ----------------


async def test_an_sdkman_tool_finds_the_other_candidates_it_runs(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _sandbox()
    candidates = home / ".sdkman" / "candidates"
    _write(home / ".sdkman" / "bin" / "sdkman-init.sh", "# sdkman's start-up script\n")
    _facts_tool(candidates / "java" / "21.0-fake" / "bin" / "java", "java=21", "java_home=$JAVA_HOME")
    (candidates / "java" / "current").symlink_to("21.0-fake")
    # Like gradle's start script: the JVM from JAVA_HOME when it is set.
    _write(candidates / "gradle" / "8.5" / "bin" / "gradle", '#!/bin/sh\nexec "$JAVA_HOME/bin/java" "$@"\n', 0o755)
    (candidates / "gradle" / "current").symlink_to("8.5")
    _open_to_others(home)
    _path_first(monkeypatch, candidates / "gradle" / "current" / "bin", candidates / "java" / "current" / "bin")
    found = await _facts(BotSpec(name="gradle", command=["gradle"], cwd=str(TEST_BOTS)), settings)
    assert found["java"] == "21" and found["java_home"] == str(candidates / "java" / "current")


# --- what is never shown -------------------------------------------------------


def test_a_program_in_a_homes_local_bin_brings_only_that_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pipx's and pip's programs live there; ~/.local/share holds every program's data.
    _write(home / ".local" / "bin" / "mytool", "#!/bin/sh\n", 0o755)
    _path_first(monkeypatch, home / ".local" / "bin")
    assert runtime_paths(BotSpec(name="t", command=["mytool"], cwd="/srv")) == [str(home / ".local" / "bin")]


# --- runtime folders the host names ---------------------------------------------


def _pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, word in enumerate(argv[:-2]) if word == flag]


def test_a_named_runtime_is_mounted_read_only_and_a_managers_folder_brings_its_variables(
    home: Path, tmp_path: Path
) -> None:
    jdk = tmp_path / "opt" / "jdk-21"
    (jdk / "bin").mkdir(parents=True)
    _fake_rustup(home)
    spec = BotSpec(name="b", command=["make"], cwd=str(tmp_path))
    flags = mount_flags(spec, fifo=None, tmp_bytes=0, runtimes=[str(jdk), str(home / ".rustup"), str(home / ".cargo")])
    read_only = _pairs(flags, "--ro-bind")
    for folder in (jdk, home / ".rustup", home / ".cargo" / "bin"):
        assert (str(folder), str(folder)) in read_only
    assert (str(home / ".cargo"), str(home / ".cargo")) not in read_only  # its credentials stay out
    assert ("RUSTUP_HOME", str(home / ".rustup")) in _pairs(flags, "--setenv")
    assert ("CARGO_HOME", str(home / ".cargo")) in _pairs(flags, "--setenv")


def _tournament(tmp_path: Path, sandbox: dict[str, Any]) -> dict[str, Any]:
    return {"tournament": {"game": "vendetta", "table_size": 3, "sandbox": sandbox},
            "entrant": [{"name": f"p{i}", "bot": str(PASSER)} for i in range(3)]}  # fmt: skip


def test_a_tournament_names_its_runtimes_and_bad_ones_are_one_line_each(home: Path, tmp_path: Path) -> None:
    jdk = tmp_path / "jdk"
    jdk.mkdir()
    config = parse_tournament(_tournament(tmp_path, {"runtimes": [f"{jdk}/"]}), base=tmp_path)
    assert config.sandbox.runtimes == (str(jdk),)
    assert settings_for(config).runtimes == (str(jdk),)
    bad = ["jdk", "/", str(tmp_path / "missing"), str(home), "/tmp"]
    with pytest.raises(ConfigProblems) as caught:
        parse_tournament(_tournament(tmp_path, {"runtimes": bad}), base=tmp_path)
    where = "tournament.sandbox.runtimes"
    assert caught.value.problems == [
        f"{where}: jdk: give the folder's absolute path (a runtime is mounted where it is on this machine)",
        f"{where}: /: that is the whole filesystem; name the runtime's own folder (for example /opt/jdk-21)",
        f"{where}: {tmp_path / 'missing'}: no such folder",
        f"{where}: {home}: that is the home folder {home}; name the toolchain's own folder in it (for example "
        + f"{home / '.rustup'}), never a whole home",
        f"{where}: /tmp: every bot has a private /tmp of its own; name a folder inside it",
    ]
    with pytest.raises(ConfigProblems, match="runtimes: expected a list of absolute folders in quotes"):
        parse_tournament(_tournament(tmp_path, {"runtimes": "/opt/jdk"}), base=tmp_path)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("relative/jdk", "give the folder's absolute path"),
        ("/", "that is the whole filesystem"),
        ("/no/such/folder", "no such folder"),
        ("HOME", "that is the home folder"),
        ("HOME/..", "that folder holds the home folder"),
    ],
)
@pytest.mark.parametrize("command", ["play", "check-bot"])
def test_a_bad_runtime_on_the_command_line_is_one_line_and_exit_2(
    home: Path, command: str, value: str, says: str
) -> None:
    value = value.replace("HOME", str(home))
    bots = ["vendetta", str(PASSER), str(PASSER), str(PASSER)] if command == "play" else [str(PASSER)]
    result = CliRunner().invoke(app, [command, *bots, "--runtime", value])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"famiglia: error: --runtime {value}: {says}"), result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_check_bot_sends_a_failed_build_to_the_section_on_building(tmp_path: Path) -> None:
    folder = _bot_folder(tmp_path / "broken", 'name = "broken"\ncommand = "./bot"\nbuild = "rustc -o bot bot.rs"\n', {})
    result = CliRunner().invoke(app, ["check-bot", str(folder), "--json"])
    assert result.exit_code == 1, result.output
    (build,) = json.loads(result.output)["checks"]
    assert build["name"] == "build" and build["fix"].endswith('(PROTOCOL.md, section "Building your bot")')


async def test_a_bot_sees_the_runtime_folders_its_host_named(tmp_path: Path) -> None:
    settings = _sandbox()
    jdk = tmp_path / "opt" / "jdk-21"
    _facts_tool(jdk / "bin" / "java", "java=seen")
    _open_to_others(tmp_path / "opt")
    named = RefereeSettings(sandbox=settings.sandbox, grace_ms=200, runtimes=(str(jdk),))
    found = await _facts(BotSpec(name="j", command=["sh", "-c", f"exec {jdk}/bin/java"], cwd=str(TEST_BOTS)), named)
    assert found["java"] == "seen"


# --- the real rustup and pyenv of this machine ------------------------------------

REAL_CARGO_BIN = Path.home() / ".cargo" / "bin"

RUST_BOT = """use std::io::{self, BufRead, Write};

// The first option of each request, or an empty placement; copied from the request line.
fn first_option(line: &str) -> String {
    let bytes = line.as_bytes();
    if let Some(at) = line.find("\\"options\\":[") {
        let start = at + "\\"options\\":[".len();
        let (mut depth, mut in_string, mut i) = (0i32, false, start);
        while i < bytes.len() {
            let c = bytes[i];
            if in_string {
                if c == b'\\\\' { i += 1; } else if c == b'"' { in_string = false; }
            } else if c == b'"' {
                in_string = true;
            } else if c == b'{' || c == b'[' {
                depth += 1;
            } else if c == b'}' || c == b']' {
                if depth == 0 { break; }
                depth -= 1;
                if depth == 0 { return line[start..=i].to_string(); }
            } else if c == b',' && depth == 0 {
                return line[start..i].to_string();
            }
            i += 1;
        }
    }
    "{\\"type\\":\\"place\\",\\"placements\\":[]}".to_string()
}

fn main() {
    let mut out = io::stdout();
    for line in io::stdin().lock().lines().map_while(Result::ok) {
        if line.starts_with("{\\"type\\":\\"start\\"") {
            writeln!(out, "{{\\"type\\":\\"ready\\",\\"name\\":\\"rusty\\"}}").ok();
        } else if line.starts_with("{\\"type\\":\\"request\\"") {
            let id: String = line["{\\"type\\":\\"request\\",\\"id\\":".len()..].chars().take_while(|c| c.is_ascii_digit()).collect();
            writeln!(out, "{{\\"type\\":\\"action\\",\\"id\\":{},\\"action\\":{}}}", id, first_option(&line)).ok();
        }
        out.flush().ok();
    }
}
"""


def _rustup_cargo() -> str | None:
    """Why there is no rustup-managed cargo to build with here, or None."""
    cargo = REAL_CARGO_BIN / "cargo"
    if not cargo.exists() or not (REAL_CARGO_BIN / "rustup").is_file():
        return f"no rustup-managed cargo at {cargo}"
    if shutil.which("cc") is None:
        return "no C linker (cc) for rustc"
    done = subprocess.run(
        [str(REAL_CARGO_BIN / "rustup"), "show", "active-toolchain"], capture_output=True, check=False
    )
    return None if done.returncode == 0 else "rustup has no default toolchain"


@pytest.mark.slow
async def test_a_rust_bot_built_with_rustups_cargo_at_the_default_level_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if (why := _rustup_cargo()) is not None:
        pytest.skip(why)
    settings = _sandbox()
    _path_first(monkeypatch, REAL_CARGO_BIN)
    folder = _bot_folder(
        tmp_path / "rusty",
        'name = "rusty"\ncommand = "./target/release/rusty"\nbuild = "cargo build --release --offline"\n'
        'language = "rust"\n',
        {"Cargo.toml": '[package]\nname = "rusty"\nversion = "0.1.0"\nedition = "2021"\n', "src/main.rs": RUST_BOT},
    )
    (spec,) = await trio.to_thread.run_sync(prepare_bots, [load_bot(str(folder))], settings)
    record = await _play_against_passers(spec, settings)
    assert record.result.terminations == [], record.result.terminations


@pytest.mark.slow
async def test_a_bot_run_by_the_real_pyenvs_shim_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    version = (root / "version").read_text().split()[0] if (root / "version").is_file() else ""
    interpreter = f"python{'.'.join(version.split('.')[:2])}"
    if not (root / "shims" / interpreter).is_file() or not (root / "versions" / version).is_dir():
        pytest.skip(f"no pyenv with a global version under {root}")
    settings = _sandbox()
    _path_first(monkeypatch, root / "shims")
    # It runs only on the interpreter pyenv chose, and says so by playing.
    check = f"import sys\nif not sys.prefix.startswith({str(root)!r}): sys.exit('not pyenv: ' + sys.prefix)\n"
    body = FIRST_OPTION_BOT.split("\n", 1)[1]
    folder = _bot_folder(tmp_path / "snake", f'name = "snake"\ncommand = "{interpreter} bot.py"\n', {
        "bot.py": check + body})  # fmt: skip
    (spec,) = prepare_bots([load_bot(str(folder))], settings)
    record = await _play_against_passers(spec, settings)
    assert record.result.terminations == [], record.result.terminations
