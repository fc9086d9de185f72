"""inches: "in" after a figure is inches only where no noun phrase follows it."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._text import ANY_DIGIT

INCHES = substitution(
    "inches",
    '"in" right after a figure and before no noun phrase is inches: "9.54 in (242 mm)".',
    "en",
    re.compile(
        r"(?<=\d)\s?in\b\.?"
        r"(?=\s*(?:[^\sA-Za-z0-9]|$|(?:long|wide|high|tall|deep|thick|of|by|x)\b))"
    ),
    " inches",
    lambda text: ANY_DIGIT.search(text) is not None and "in" in text,
    reaches=(
        ("It fell 2 in of rain.", "It fell 2 inches of rain."),
        ("6 in long", "6 inches long"),
    ),
    misses=("7.2 million in the United States", "in 1990 in Paris"),
)
