"""spaced-thousands: "13 000" = "13,000" = "13000"."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._text import ANY_DIGIT

SPACED_THOUSANDS = substitution(
    "spaced-thousands",
    "A space between thousands is dropped: 13 000 is 13000.",
    "common",
    re.compile(r"(?<=\d)[ \u00a0\u202f](?=\d{3}(?!\d))"),
    "",
    lambda text: ANY_DIGIT.search(text) is not None,
    reaches=(("About 13 000 years", "About 13000 years"),),
    misses=("in 1990 2000 people", "no figure here"),
)
