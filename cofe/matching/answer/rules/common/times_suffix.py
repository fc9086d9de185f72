"""times-suffix: a multiple written with an x after it ("1.5x", "3×") read as "1.5 times"."""

import re

from cofe.matching.answer._rules import substitution

_SUFFIX = re.compile(r"(\d)\s?[x×](?![\w])", re.IGNORECASE)

TIMES_SUFFIX = substitution(
    "times-suffix",
    "A figure followed by x or × is that many times: '1.5x' is '1.5 times'.",
    "common",
    _SUFFIX,
    r"\1 times",
    lambda text: ("x" in text or "X" in text or "×" in text) and _SUFFIX.search(text) is not None,
    reaches=(
        ("a current ratio of 1.5x", "a current ratio of 1.5 times"),
        ("3× faster", "3 times faster"),
    ),
    misses=("a 4x4 truck", "the 1080p display", "Xbox 360"),
)
