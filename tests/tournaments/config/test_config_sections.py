"""The tournament file in sections: today's files, and stores begun before the sections, keep working.

``fixtures/first_release_stores.json`` holds configurations as a store made by
the code before the sections saved them (``msgspec.json.encode(config)`` of the
flat ``TournamentConfig``), with the fingerprint that code gave each. A store
keeps both, so a resume works only if they still decode and hash the same.
"""

from __future__ import annotations

import json
import sys
import tomllib
import typing
from pathlib import Path

import msgspec
import pytest

from referee.settings import BotLimits, ReplayLimits
from tests.conftest import TEST_BOTS
from tournaments.config.tournament import ConfigProblems, decode_stored, flat_settings, parse_tournament
from tournaments.hosting.ranges import field_problem
from tournaments.hosting.settings import (
    ExecutorSection,
    FormatSection,
    SandboxSection,
    TimeSection,
    referee_settings,
)

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).with_name("fixtures")
FIRST_RELEASE = json.loads((FIXTURES / "first_release_stores.json").read_text())
README_EXAMPLE = (FIXTURES / "readme_tournament.toml").read_text()
PASSER = str(TEST_BOTS / "passer")


@pytest.mark.parametrize("case", ["tuned", "plain", "gauntlet"])
def test_a_store_begun_before_the_sections_decodes_and_keeps_its_fingerprint(case: str) -> None:
    stored = FIRST_RELEASE[case]
    config = decode_stored(stored["stored"])
    assert config.fingerprint() == stored["fingerprint"]
    # What the store writes now decodes to the same configuration and fingerprint.
    again = decode_stored(msgspec.json.encode(config))
    assert again == config and again.fingerprint() == stored["fingerprint"]


def test_the_first_release_layout_lands_in_the_sections() -> None:
    config = decode_stored(FIRST_RELEASE["tuned"]["stored"])
    assert config.format.kind == "head-to-head" and config.format.a == "p0" and config.format.elo1 == 40.5
    assert config.time.margin_ms == 20 and config.time.game_wall_ms == 60000 and config.time.move_ms == 250
    assert config.sandbox.level == "none" and config.sandbox.limits.memory_mb == 512
    assert config.executor.kind == "dask" and config.executor.concurrency == 9 and not config.executor.reuse_processes


def test_the_readme_example_is_this_fixture() -> None:
    assert README_EXAMPLE in (ROOT / "README.md").read_text()


def test_the_readme_example_parses_to_the_configuration_the_first_release_stored() -> None:
    stored = FIRST_RELEASE["readme"]["stored"].replace("{ROOT}", str(ROOT)).replace("{PYTHON}", sys.executable)
    parsed = parse_tournament(tomllib.loads(README_EXAMPLE), base=ROOT)
    assert parsed == decode_stored(stored)


def _tuned_file(passer: str) -> dict[str, typing.Any]:
    data = json.loads(json.dumps(FIRST_RELEASE["tuned"]["file"]))
    for entrant in data["entrant"]:
        entrant["bot"] = passer
    return data


def test_the_sections_and_the_first_spellings_give_the_same_configuration() -> None:
    old = _tuned_file(PASSER)
    section = old["tournament"]
    new = {
        "tournament": {
            "name": "fixed", "game": "sicilianos", "seed": 7, "illegal_action": "pass", "variants": {},
            "format": {"kind": "head-to-head", "table_sizes": [3], "a": "p0", "b": "p1", "elo0": -10, "elo1": 40.5,
                       "alpha": 0.1, "beta": 0.2, "max_games": 300},
            "time": section["time"],
            "sandbox": {"level": "none", "limits": section["limits"]},
            "executor": {**section["executor"], "concurrency": 9, "workers": 3, "reuse_processes": False},
        },
        "entrant": old["entrant"],
    }  # fmt: skip
    assert parse_tournament(new, base=ROOT) == parse_tournament(old, base=ROOT)


def test_a_setting_given_in_both_spellings_is_refused_naming_both() -> None:
    data = _tuned_file(PASSER)
    data["tournament"]["executor"]["concurrency"] = 2
    with pytest.raises(ConfigProblems) as caught:
        parse_tournament(data, base=ROOT)
    assert caught.value.problems == [
        "tournament.concurrency: give concurrency or [tournament.executor] concurrency, not both"
    ]


@pytest.mark.parametrize(
    ("tournament", "expected"),
    [
        ({"executor": {"concurrency": 0}}, "tournament.executor.concurrency: must be 1 to 4096 games at once, got 0"),
        ({"sandbox": {"limits": {"memory_mb": 1}}}, "tournament.sandbox.limits.memory_mb: 1 cannot work: below 32"),
        ({"limits": {"memory_mb": 1}}, "tournament.limits.memory_mb: 1 cannot work: below 32"),
        ({"sandbox": {"level": "tight"}}, "tournament.sandbox.level: unknown sandbox level 'tight'"),
        ({"sandbox": "tight"}, "tournament.sandbox: unknown sandbox level 'tight'"),
        ({"sandbox": {"level": 3}}, "tournament.sandbox.level: 3 is not none, standard or strict"),
        ({"format": {"kind": "swiss"}}, "tournament.format.kind: 'swiss' is not round-robin, gauntlet or head-to-head"),
        ({"format": {"repetitions": 0}}, "tournament.format.repetitions: must be 1 or more round-robins, got 0"),
        ({"time": {"move_ms": True}}, "tournament.time.move_ms: expected a whole number of milliseconds, 1 or more"),
        ({"executor": {"kind": "slurm"}}, "tournament.executor.kind: 'slurm' is not local or dask"),
        ({"executor": {"threads": 2}}, "tournament.executor.threads: unknown key"),
        ({"executor": "dask"}, "tournament.executor: expected a table of settings"),
        ({"format": 5}, "tournament.format: 5 is not round-robin, gauntlet or head-to-head"),
        ({"sandbox": {"replay": {"kb_per_game": 0}}}, "tournament.sandbox.replay.kb_per_game: must be 1 to 16384 KiB"),
        ({"sandbox": {"replay": {"kbs": 3}}}, "tournament.sandbox.replay.kbs: unknown key"),
    ],
)
def test_a_bad_value_in_a_section_is_one_line_naming_the_key_as_written(
    tournament: dict[str, typing.Any], expected: str
) -> None:
    data = {"tournament": {"game": "vendetta", "table_size": 3, **tournament}, "entrant": [
        {"name": f"p{i}", "bot": PASSER} for i in range(3)]}  # fmt: skip
    with pytest.raises(ConfigProblems) as caught:
        parse_tournament(data, base=ROOT)
    assert len(caught.value.problems) == 1 and caught.value.problems[0].startswith(expected), caught.value.problems


SECTIONS: list[type[msgspec.Struct]] = [
    TimeSection, SandboxSection, FormatSection, ExecutorSection, BotLimits, ReplayLimits,
]  # fmt: skip


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.__name__)
def test_every_number_setting_declares_its_range(section: type[msgspec.Struct]) -> None:
    hints = typing.get_type_hints(section, include_extras=True)
    for key in section.__struct_fields__:
        info = msgspec.inspect.type_info(hints[key])
        if isinstance(info, msgspec.inspect.UnionType):
            info = next(t for t in info.types if not isinstance(t, msgspec.inspect.NoneType))
        if isinstance(info, msgspec.inspect.IntType | msgspec.inspect.FloatType):
            assert info.ge is not None or info.gt is not None, f"{section.__name__}.{key} has no lower bound"


def test_the_replay_bounds_of_a_tournament_file_and_a_ladder_file_reach_the_referee(tmp_path: Path) -> None:
    from ladder.config import load_ladder

    data = {"tournament": {"game": "vendetta", "table_size": 3, "sandbox": {"replay": {"kb_per_game": 300}}},
            "entrant": [{"name": f"p{i}", "bot": PASSER} for i in range(3)]}  # fmt: skip
    config = parse_tournament(data, base=ROOT)
    settings = referee_settings(config.time, config.sandbox, config.illegal_action)
    assert settings.replay == ReplayLimits(kb_per_decision=64, kb_per_game=300)
    ladder_file = tmp_path / "club.toml"
    ladder_file.write_text('[ladder]\nname = "club"\n[ladder.sandbox.replay]\nkb_per_decision = 8\n')
    ladder = load_ladder(ladder_file)
    assert referee_settings(ladder.time, ladder.sandbox, "forfeit").replay.kb_per_decision == 8
    ladder_file.write_text('[ladder]\nname = "club"\n[ladder.sandbox.replay]\nkb_per_decision = 0\n')
    with pytest.raises(
        ValueError, match=r"club.toml: Expected `int` >= 1 - at `ladder.sandbox.replay.kb_per_decision`"
    ):
        load_ladder(ladder_file)


def test_build_mb_counts_in_the_fingerprint_only_when_set_and_is_no_limit_the_none_level_ignores() -> None:
    from tournaments.config.notes import config_notes

    def tournament(limits: dict[str, int], level: str = "standard") -> typing.Any:
        return parse_tournament(
            {"tournament": {"game": "vendetta", "table_size": 3, "sandbox": {"level": level, "limits": limits}},
             "entrant": [{"name": f"p{i}", "bot": PASSER} for i in range(3)]},
            base=ROOT,
        )  # fmt: skip

    default = tournament({})
    assert tournament({"build_mb": 1024}).fingerprint() == default.fingerprint()  # stores begun before it resume
    assert tournament({"build_mb": 64}).fingerprint() != default.fingerprint()
    # build_mb holds at every level (famiglia measures what a build leaves): no note that it is not applied.
    assert not any("sandbox.limits" in note for note in config_notes(tournament({"build_mb": 64}, "none")))
    assert any("sandbox.limits" in note for note in config_notes(tournament({"cpu_s": 5}, "none")))


def test_the_command_line_and_the_file_refuse_a_clock_in_the_same_words() -> None:
    problem = field_problem(TimeSection, "startup_ms", 0)
    assert problem is not None and problem.startswith("0 ms is too short for any bot to start")
    data = {"tournament": {"game": "vendetta", "table_size": 3, "time": {"startup_ms": 0}},
            "entrant": [{"name": f"p{i}", "bot": PASSER} for i in range(3)]}  # fmt: skip
    with pytest.raises(ConfigProblems) as caught:
        parse_tournament(data, base=ROOT)
    assert caught.value.problems == [f"tournament.time.startup_ms: {problem}"]


def test_flat_settings_name_each_setting_as_the_readme_file_does() -> None:
    flat = flat_settings(decode_stored(FIRST_RELEASE["tuned"]["stored"]))
    assert flat["format"] == "head-to-head" and flat["table_sizes"] == [3] and flat["sandbox"] == "none"
    assert flat["time.margin_ms"] == 20 and flat["limits.memory_mb"] == 512 and flat["concurrency"] == 9


def test_parsing_leaves_the_callers_tables_as_they_were() -> None:
    data = _tuned_file(PASSER)
    before = json.dumps(data, sort_keys=True)
    parse_tournament(data, base=ROOT)
    assert json.dumps(data, sort_keys=True) == before


@pytest.mark.parametrize("section", [TimeSection, SandboxSection, FormatSection, ExecutorSection])
def test_a_value_of_the_wrong_type_in_any_setting_is_a_problem_line_never_an_exception(
    section: type[msgspec.Struct],
) -> None:
    # A careless file: a number where text goes (scheduler = 5 once raised), text where a number goes, a table.
    for key in section.__struct_fields__:
        for wrong in (5, "fast", {"a": 1}, [1, 2]):
            try:
                problem = field_problem(section, key, wrong)
            except Exception as exc:  # noqa: BLE001 - the failure this test is about
                pytest.fail(f"{section.__name__}.{key} = {wrong!r} raised {exc!r}")
            decoded_ok = problem is None
            if not decoded_ok:
                assert isinstance(problem, str) and "\n" not in problem and problem, (key, wrong)
