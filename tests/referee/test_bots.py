"""A bot's bot.toml read for its author: what is wrong with it, in the author's terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.bots import BotSpecError, load_bot


@pytest.mark.parametrize(
    ("manifest", "says"),
    [
        ("", 'no name in it; a bot.toml needs at least name = "mybot" and command = "python3 bot.py"'),
        ('name = "x"\n', 'no command in it; a bot.toml needs at least name = "mybot" and command = "python3 bot.py"'),
        ('name = 5\ncommand = "python3 bot.py"\n', 'name must be text in quotes, e.g. name = "mybot", not 5'),
        ('name = ["x"]\ncommand = "python3 bot.py"\n', 'name must be text in quotes, e.g. name = "mybot", not a list'),
        (
            'name = "x"\ncommand = ["python3", 5]\n',
            (
                'command must be text in quotes, e.g. command = "python3 bot.py", or a list of words, '
                "not a list with something other than text in it"
            ),
        ),
        ('name = "x"\ncommand = "python3 bot.py"\nbuild = true\n', "build must be text in quotes, e.g. build = "),
    ],
    ids=["empty", "no-command", "name-a-number", "name-a-list", "command-list-of-a-number", "build-a-bool"],
)
def test_a_bot_toml_of_the_wrong_shape_names_the_key_and_what_it_takes(
    tmp_path: Path, manifest: str, says: str
) -> None:
    # msgspec's own words ("Object missing required field `name`", "Expected `str`, got `int` - at
    # `$.name`") were shown as they were.
    (tmp_path / "bot.toml").write_text(manifest)
    with pytest.raises(BotSpecError) as raised:
        load_bot(str(tmp_path))
    assert str(raised.value).startswith(f"{tmp_path / 'bot.toml'}: {says}")


def test_a_bot_toml_that_is_a_folder_is_called_a_folder_not_missing(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").mkdir()
    with pytest.raises(BotSpecError, match="bot.toml: a folder, not a file; bot.toml is a file of a few lines"):
        load_bot(str(tmp_path))
