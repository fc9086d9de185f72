"""ordinals: "3rd" is 3 (number words: "third" is "3rd" to text2num)."""

import re

from cofe.matching.answer._rules import Token, TokenRule, Unit, register

_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


def _read(t: Token) -> Unit | None:
    ordinal = _ORDINAL.match(t.token)
    if ordinal:
        t.token = ordinal[1]
    return None


ORDINALS = register(
    TokenRule(
        "ordinals",
        "An ordinal in figures is its number: 3rd is 3.",
        "en",
        "figure",
        _read,
        reaches=(("3rd", "3"), ("21st", "21")),
        misses=("35", "b737"),
    )
)
