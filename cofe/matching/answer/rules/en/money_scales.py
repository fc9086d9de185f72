"""money-scales: "£304m" = "£ 304 million" ("100m" alone stays metres); "5.2bn" and "5.2 mn"
are a billion and a million with or without a currency sign (no unit is written "bn")."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._tables import table
from cofe.matching.answer._text import ANY_DIGIT

_MONEY_SCALE = re.compile(
    r"[$£€¥]\s?(\d+(?:\.\d+)?)\s?(k|m|bn|b)\b|(?<![\w.,])(\d+(?:\.\d+)?)\s?(bn|mn)\b", re.I
)


def _spelt(match: re.Match[str]) -> str:
    if match[1] is None:  # a figure and "bn" / "mn", no currency sign
        return f"{match[3]} {table('en')['money_scales'][match[4].lower()]}"
    word = table("en")["money_scales"][match[2].lower()]
    return f"{match[0][0]} {match[1]} {word}"


MONEY_SCALES = substitution(
    "money-scales",
    "A currency figure with a scale letter (k, m, bn) has the scale spelt out.",
    "en",
    _MONEY_SCALE,
    _spelt,
    lambda text: ANY_DIGIT.search(text) is not None and _MONEY_SCALE.search(text) is not None,
    reaches=(
        ("Sky paid £304m.", "Sky paid £ 304 million."),
        ("$2bn", "$ 2 billion"),
        ("revenue of 5.2bn dollars", "revenue of 5.2 billion dollars"),
        ("a 3 mn loss", "a 3 million loss"),
    ),
    misses=("ran the 100m", "£304", "the 5b road", "room 5bn2"),
)
