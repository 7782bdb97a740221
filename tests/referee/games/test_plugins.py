"""Games as plug-ins: the example game under examples/ installed by pip, found through
the ``famiglia.games`` entry points, keeping the contract and playing a real match
with real bot processes; and bad plug-ins reported in one line, never breaking the
built-in games.

The example is installed once per module with ``pip install --no-deps
--no-build-isolation --target`` into a temporary folder that only these tests put
on their path (about 3 s on a quiet machine, 15 s on a busy one); the match runs
``famiglia play`` in a subprocess with that folder on PYTHONPATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.contract import check_game
from referee.games import BadGamePlugin, UnknownGame, game_names, get_rules, plugin_problems

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "famiglia-sotto"
FAMIGLIA = Path(sys.executable).with_name("famiglia")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example game installed by pip into a folder of its own (the source copied
    first, so the build leaves nothing in the checkout)."""
    work = tmp_path_factory.mktemp("sotto")
    source = work / "source"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return target


@pytest.fixture
def on_path(installed: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(installed))
    yield installed
    for name in [m for m in sys.modules if m == "famiglia_sotto" or m.startswith("famiglia_sotto.")]:
        del sys.modules[name]


@pytest.mark.slow
def test_an_installed_plugin_is_found_through_its_entry_point_and_keeps_the_contract(on_path: Path) -> None:
    assert game_names()[:2] == ("vendetta", "sicilianos")
    assert "sotto" in game_names()
    rules = get_rules("sotto")
    assert type(rules).__module__ == "famiglia_sotto"
    assert plugin_problems() == []
    check_game(rules, seeds=(1, 2))


def test_without_the_plugin_on_the_path_the_game_is_unknown_and_the_built_ins_remain() -> None:
    assert "sotto" not in game_names()
    with pytest.raises(UnknownGame, match="unknown game 'sotto': choose one of vendetta, sicilianos"):
        get_rules("sotto")


@pytest.mark.slow
def test_the_example_plays_a_real_match_with_its_bot_processes_in_the_default_sandbox(
    installed: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(installed), os.environ.get("PYTHONPATH")]))}
    bot = str(EXAMPLE / "bot")
    replay = tmp_path / "sotto.jsonl"
    run = subprocess.run(
        [str(FAMIGLIA), "play", "sotto", bot, bot, bot, "--seed", "5", "--json", "--replay", str(replay)],
        check=False, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert '"ended_by": "all_tricks"' in run.stdout
    assert '"terminations": []' in run.stdout
    assert "Traceback" not in run.stderr

    # Its replay verifies, and the viewer draws it with the generic tables (the example brings no drawing).
    verify = subprocess.run(
        [str(FAMIGLIA), "replay", "verify", str(replay)], check=False, capture_output=True, text=True, env=env
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    view = subprocess.run(
        [str(FAMIGLIA), "replay", "view", str(replay), "--out", str(tmp_path / "view.html")],
        check=False, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert view.returncode == 0, view.stdout + view.stderr
    assert "Traceback" not in view.stderr
    assert "generic-view-" in (tmp_path / "view.html").read_text(encoding="utf-8")  # the default drawing's script
    assert (tmp_path / "view.seat-2.html").is_file()


# ---------------------------------------------------------------------------
# Bad plug-ins: distributions written by hand, as pip would lay them out.


def _distribution(site: Path, name: str, entry_points: str, modules: dict[str, str]) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[famiglia.games]\n{entry_points}\n", encoding="utf-8")
    for module, text in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def bad_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = tmp_path / "site"
    _distribution(site, "broken-import", "broken = broken_game:RULES", {"broken_game": "import no_such_module\n"})
    _distribution(site, "not-rules", "notrules = not_rules_game:RULES", {"not_rules_game": "RULES = 'a string'\n"})
    _distribution(site, "misnamed", "alias = misnamed_game:RULES",
                  {"misnamed_game": "from referee.games.vendetta import RULES\n"})  # fmt: skip
    _distribution(site, "thief", "vendetta = thief_game:RULES", {"thief_game": "RULES = None\n"})
    monkeypatch.syspath_prepend(str(site))
    yield site
    for module in ("broken_game", "not_rules_game", "misnamed_game", "thief_game"):
        sys.modules.pop(module, None)


@pytest.mark.parametrize(
    ("game", "message"),
    [
        ("broken", ("game plug-in 'broken' from distribution broken-import does not load 'broken_game:RULES': "
                    "ModuleNotFoundError: No module named 'no_such_module'")),
        ("notrules", ("game plug-in 'notrules' from distribution not-rules gives str from 'not_rules_game:RULES', "
                      "not a GameRules")),
        ("alias", ("game plug-in 'alias' from distribution misnamed is registered as 'alias' but its rules are "
                   "named 'vendetta'")),
    ],
)  # fmt: skip
def test_a_bad_plugin_fails_its_own_game_in_one_line_naming_its_distribution(
    bad_site: Path, game: str, message: str
) -> None:
    assert game in game_names()
    with pytest.raises(BadGamePlugin) as caught:
        get_rules(game)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
    assert get_rules("vendetta").name == "vendetta" and get_rules("sicilianos").name == "sicilianos"


def test_a_plugin_taking_a_built_in_name_is_left_out_and_said_so(bad_site: Path) -> None:
    assert get_rules("vendetta").__class__.__module__ == "referee.games.vendetta"
    assert game_names().count("vendetta") == 1
    assert plugin_problems() == [
        (
            "game plug-in 'vendetta' from distribution thief is left out: the name is taken by famiglia; "
            "register it under another name"
        )
    ]


@pytest.mark.slow
def test_famiglia_play_with_a_bad_plugin_says_one_line_and_no_traceback(bad_site: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(bad_site), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [str(FAMIGLIA), "play", "broken", "python3 x.py", "python3 x.py", "python3 x.py"],
        check=False, capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert run.returncode == 2
    assert "Traceback" not in run.stderr + run.stdout
    lines = [line for line in (run.stderr + run.stdout).splitlines() if line.strip()]
    assert len(lines) == 1 and "distribution broken-import" in lines[0], lines
