"""scales: "1.2 million" = 1200000 (before text2num, which reads it as 1.2 and 1e6)."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._tables import table
from cofe.matching.answer._text import ANY_DIGIT
from cofe.matching.answer.rules.common._figures import FIGURE_BEFORE_SCALE

_SCALE = re.compile(FIGURE_BEFORE_SCALE + r"\s*(thousand|million|billion|trillion)\b", re.I)


def _scaled(match: re.Match[str]) -> str:
    value = float(match[1].replace(",", "")) * table("en")["scales"][match[2].lower()]
    return str(int(value)) if value.is_integer() else str(value)


SCALES = substitution(
    "scales",
    "A figure in digits before thousand, million, billion or trillion, multiplied out.",
    "en",
    _SCALE,
    _scaled,
    lambda text: ANY_DIGIT.search(text) is not None and _SCALE.search(text) is not None,
    reaches=(("cost 1.2 million dollars", "cost 1200000 dollars"), ("1,200 million", "1200000000")),
    misses=("millions of people", "a million people"),
)
