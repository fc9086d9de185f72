"""spaced-thousands: "13 000" = "13,000" = "13000"."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._text import ANY_DIGIT

SPACED_THOUSANDS = substitution(
    "spaced-thousands",
    "A space between thousands is dropped: 13 000 is 13000 (and '30, 000' is 30000).",
    "common",
    # a comma and a space before three digits join them only when those start with 0: no
    # list of figures writes "30, 000", while "3, 500" may be a list
    re.compile(r"(?<=\d)(?:[ \u00a0\u202f](?=\d{3}(?!\d))|,\s(?=0\d{2}(?!\d)))"),
    "",
    lambda text: ANY_DIGIT.search(text) is not None,
    reaches=(("About 13 000 years", "About 13000 years"), ("30, 000", "30000")),
    misses=("in 1990 2000 people", "no figure here", "scores of 3, 500 and 7"),
)
