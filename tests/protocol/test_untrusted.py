"""``terminal_text``: a bot's text as a terminal shows it, every control visible, the length bounded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol.untrusted import MAX_SHOWN_CHARS, terminal_text

C0 = [chr(code) for code in range(0x20)]
C1 = [chr(code) for code in range(0x80, 0xA0)]
BIDI = [chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
FORBIDDEN = frozenset([*C0, "\x7f", *C1, *BIDI])
"""What a terminal obeys or reorders a line by: none of it may come out."""


def note(length: int) -> str:
    return f"... (cut: {length} characters in all)"


def test_every_c0_control_with_esc_and_the_line_breaks_shows_as_its_escape() -> None:
    for c in C0:
        assert terminal_text(c) == {"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(c, f"\\x{ord(c):02x}")
    assert terminal_text("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert terminal_text("one\ntwo\r\n") == "one\\ntwo\\r\\n"  # a bot cannot start a line of its own


def test_del_shows_as_its_escape() -> None:
    assert terminal_text("\x7f") == "\\x7f"


def test_every_c1_control_shows_as_its_escape() -> None:
    for c in C1:
        assert terminal_text(c) == f"\\x{ord(c):02x}"
    assert terminal_text("\x9b6n") == "\\x9b6n"  # CSI in one byte: a device status request


def test_every_bidi_override_and_isolate_shows_as_its_escape() -> None:
    for c in BIDI:
        assert terminal_text(c) == f"\\u{ord(c):04x}"
    assert terminal_text("evil\u202etxt.exe") == "evil\\u202etxt.exe"


def test_the_osc_title_and_device_status_request_show_as_escapes() -> None:
    assert terminal_text("\x1b]0;PWNED\x07") == "\\x1b]0;PWNED\\x07"
    assert terminal_text("\x1b[6n") == "\\x1b[6n"


def test_other_non_printable_characters_show_as_escapes() -> None:
    cases = {
        "\u200b": "\\u200b",  # zero width space
        "\ufeff": "\\ufeff",  # byte order mark
        "\u2028": "\\u2028",  # line separator
        "\xa0": "\\xa0",  # no-break space
        "\ue000": "\\ue000",  # private use
        "\ud800": "\\ud800",  # a lone surrogate
        "\U000e0001": "\\U000e0001",  # a language tag
    }
    for c, escape in cases.items():
        assert terminal_text(c) == escape


def test_printable_text_is_shown_unchanged() -> None:
    text = "caffè 世界 ☃ a\\x1b backslash, quotes ' \" and spaces"
    assert terminal_text(text) == text


def test_markup_is_left_as_plain_text_for_the_renderer_to_escape() -> None:
    # Rich reads this as a link; escaping it is the command line's job (tournaments.hosting.markup.shown).
    assert terminal_text("[link=https://evil.example]x[/link]") == "[link=https://evil.example]x[/link]"


def test_text_over_the_limit_is_cut_there_and_says_how_long_it_was() -> None:
    assert terminal_text("x" * 300, 50) == "x" * 50 + note(300)
    assert terminal_text("y" * 51, 50) == "y" * 50 + note(51)


def test_text_at_the_limit_is_not_cut() -> None:
    assert terminal_text("x" * 50, 50) == "x" * 50


def test_the_limit_counts_the_escapes_and_never_splits_one() -> None:
    # Ten ESCs are forty characters shown: two fit in ten, the third would be split.
    assert terminal_text("\x1b" * 10, 10) == "\\x1b\\x1b" + note(10)
    assert terminal_text("ab\u202e", 7) == "ab" + note(3)


def test_the_default_limit_is_max_shown_chars() -> None:
    assert terminal_text("z" * MAX_SHOWN_CHARS) == "z" * MAX_SHOWN_CHARS
    assert terminal_text("z" * (MAX_SHOWN_CHARS + 1)) == "z" * MAX_SHOWN_CHARS + note(MAX_SHOWN_CHARS + 1)


# Any text, with the dangerous characters made common and lone surrogates included.
texts = st.text(st.one_of(st.sampled_from(sorted(FORBIDDEN)), st.characters(exclude_categories=())), max_size=300)


@given(texts, st.integers(min_value=0, max_value=400))
def test_no_output_holds_a_control_an_escape_or_a_bidi_character(text: str, limit: int) -> None:
    shown = terminal_text(text, limit)
    assert not FORBIDDEN & set(shown)
    assert shown.isprintable()


@given(texts, st.integers(min_value=0, max_value=400))
def test_no_output_is_longer_than_the_limit_but_for_the_note_of_its_length(text: str, limit: int) -> None:
    shown = terminal_text(text, limit)
    if shown.endswith(note(len(text))):
        assert len(shown) - len(note(len(text))) <= limit
    else:
        assert len(shown) <= limit


@given(texts)
def test_showing_shown_text_again_changes_nothing(text: str) -> None:
    shown = terminal_text(text, 10_000)
    assert terminal_text(shown, 10_000) == shown


@given(st.text(st.characters(exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs")), max_size=100))
def test_printable_text_within_the_limit_is_never_changed(text: str) -> None:
    assert terminal_text(text, 100) == text
