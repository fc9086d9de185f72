"""year-ranges: "1861-67" as "1861-1867" (the second year with the first one's century)."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._text import ANY_DIGIT


def _whole(match: re.Match[str]) -> str:
    century, first, between, last = match[1], match[2], match[3], match[4]
    if int(last) <= int(first):
        return match[0]  # "2008-05" is a year and a month, not a range
    return f"{century}{first}{between}{century}{last}"


YEAR_RANGES = substitution(
    "year-ranges",
    "The second year of a range written short gets the first one's century.",
    "en",
    re.compile(r"\b(1\d|20)(\d\d)(\s*[-–—/]\s*)(\d\d)\b(?![-–—/.:]?\d)"),
    _whole,
    lambda text: ANY_DIGIT.search(text) is not None,
    reaches=(
        ("over 1861-67.", "over 1861-1867."),
        ("the 2008/09 recession", "the 2008/2009 recession"),
    ),
    misses=("in 2008-05", "1861-1867"),
)
