"""money-scales: "£304m" = "£ 304 million" ("100m" alone stays metres)."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._tables import table
from cofe.matching.answer._text import ANY_DIGIT

_MONEY_SCALE = re.compile(r"[$£€¥]\s?(\d+(?:\.\d+)?)\s?(k|m|bn|b)\b", re.I)


def _spelt(match: re.Match[str]) -> str:
    word = table("en")["money_scales"][match[2].lower()]
    return f"{match[0][0]} {match[1]} {word}"


MONEY_SCALES = substitution(
    "money-scales",
    "A currency figure with a scale letter (k, m, bn) has the scale spelt out.",
    "en",
    _MONEY_SCALE,
    _spelt,
    lambda text: ANY_DIGIT.search(text) is not None and _MONEY_SCALE.search(text) is not None,
    reaches=(("Sky paid £304m.", "Sky paid £ 304 million."), ("$2bn", "$ 2 billion")),
    misses=("ran the 100m", "£304"),
)
