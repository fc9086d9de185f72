"""hyphens: a hyphen between letters is a space ("four-week" -> "four week")."""

import re

from cofe.matching.answer._rules import substitution

HYPHENS = substitution(
    "hyphens",
    'A hyphen between letters is a space, so text2num reads "twenty-five" and "four-week".',
    "en",
    re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])"),
    " ",
    lambda text: "-" in text,
    reaches=(("a four-week period", "a four week period"),),
    misses=("1861-1867", "a 4-week period"),
)
