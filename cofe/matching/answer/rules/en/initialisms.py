"""initialisms: "U.S." = "US"."""

import re

from cofe.matching.answer._rules import substitution

INITIALISMS = substitution(
    "initialisms",
    'Letters with full stops are one acronym: "U.S." = "US".',
    "en",
    re.compile(r"\b(?:[A-Z]\.){2,}"),
    lambda match: match[0].replace(".", ""),
    lambda text: "." in text,
    reaches=(("moved to the U.S. in 1990", "moved to the US in 1990"),),
    misses=("Mr. Smith", "It ended. Then"),
)
