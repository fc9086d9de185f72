"""foreign-words: a word outside ASCII is its own unit (no English stem for it)."""

from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._text import STEM


def _read(t: Token) -> Unit | None:
    return None if t.token.isascii() else (t.token, STEM, t.token, t.acronym)


FOREIGN_WORDS = register(
    TokenRule(
        "foreign-words",
        "A word of letters outside ASCII is a unit as it is (Snowball English stems ASCII).",
        "common",
        "word",
        _read,
        reaches=(("Ελλάδα", "ελλάδα"), ("Москва", "москва")),
        misses=("castle", "Visa"),
    )
)
