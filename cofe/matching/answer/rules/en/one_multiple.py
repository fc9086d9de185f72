"""one-multiple: "a decade", "a century" are one of it ("within a decade" = 10 years)."""

import re

from cofe.matching.answer._rules import substitution

_ONE = re.compile(r"\b(?:a|one|a single)\s+(decade|century)\b", re.IGNORECASE)

ONE_MULTIPLE = substitution(
    "one-multiple",
    "'A decade' or 'a century' is one of it, so the multiples rule reads 10 or 100 years.",
    "en",
    _ONE,
    r"1 \1",
    lambda text: ("decade" in text or "entury" in text) and _ONE.search(text) is not None,
    reaches=(("cut it by half within a decade", "cut it by half within 1 decade"),),
    misses=("for decades", "the twentieth century"),
)
