"""A game's variants, declared once: each key with its default and what it allows.

``GameRules`` (base.py) reads a configuration from ``key=value`` text with these
declarations, writes one back as text, and checks a configuration built in
Python, all in the same words for every game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["ChoiceVariant", "IntVariant", "TextVariant", "UnknownVariant", "Variant"]


class UnknownVariant(ValueError):
    """A variant key or value that the game does not know."""


class Variant:
    """One ``key=value`` variant of a game: its key, its default and what it allows.

    A game declares its variants once, as a tuple of these; ``GameRules`` reads a
    configuration from text with them, writes one back as text, and checks a
    configuration built in Python. The configuration Struct has one field per
    variant, named by its key.
    """

    __slots__ = ("default", "key")

    def __init__(self, key: str, default: Any) -> None:
        self.key = key
        self.default = default

    def parse(self, game: str, text: str) -> Any:
        """The value ``text`` names; UnknownVariant (one line) when it names none."""
        raise NotImplementedError

    def text(self, value: Any) -> str:
        """``value`` as the text ``parse`` reads back."""
        return str(value)

    def check(self, game: str, value: Any) -> None:
        """UnknownVariant unless ``value`` (from a configuration built in Python) is allowed."""
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise UnknownVariant(f"{game} {self.key}={value!r}: {self.allowed()}")
        self.parse(game, self.text(value))

    def allowed(self) -> str:
        """What the variant allows, said to the user after the bad value."""
        raise NotImplementedError


class ChoiceVariant(Variant):
    """A variant that takes one of a few words."""

    __slots__ = ("choices",)

    def __init__(self, key: str, choices: Sequence[str], default: str) -> None:
        super().__init__(key, default)
        self.choices = tuple(choices)

    def parse(self, game: str, text: str) -> str:
        value = str(text).strip()
        if value not in self.choices:
            raise UnknownVariant(f"{game} {self.key}={text!r}: {self.allowed()}")
        return value

    def check(self, game: str, value: Any) -> None:
        if value not in self.choices:  # exact: a padded word in a Struct is not the word
            raise UnknownVariant(f"{game} {self.key}={value!r}: {self.allowed()}")

    def allowed(self) -> str:
        return f"use one of {', '.join(self.choices)}"


class IntVariant(Variant):
    """A variant that takes a whole number in ``low..high``."""

    __slots__ = ("high", "low")

    def __init__(self, key: str, low: int, high: int, default: int) -> None:
        super().__init__(key, default)
        self.low = low
        self.high = high

    def parse(self, game: str, text: str) -> int:
        value = str(text).strip()
        if not (value.isascii() and value.isdigit()) or not self.low <= int(value) <= self.high:
            raise UnknownVariant(f"{game} {self.key}={text!r}: {self.allowed()}")
        return int(value)

    def check(self, game: str, value: Any) -> None:
        if type(value) is not int or not self.low <= value <= self.high:
            raise UnknownVariant(f"{game} {self.key}={value!r}: {self.allowed()}")

    def allowed(self) -> str:
        return f"use an integer from {self.low} to {self.high}"


class TextVariant(Variant):
    """A variant whose text has a shape of its own, checked by ``validate``
    (which raises ValueError on a bad text); ``hint`` says what to use."""

    __slots__ = ("hint", "validate")

    def __init__(self, key: str, default: str, validate: Any, hint: str) -> None:
        super().__init__(key, default)
        self.validate = validate
        self.hint = hint

    def parse(self, game: str, text: str) -> str:
        value = str(text).strip()
        try:
            self.validate(value)
        except ValueError:
            raise UnknownVariant(f"{game} {self.key}={text!r}: {self.allowed()}") from None
        return value

    def allowed(self) -> str:
        return f"use {self.hint}"
