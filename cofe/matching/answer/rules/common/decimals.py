"""decimals: "3.5" stays one number (the tokeniser would cut it at the point)."""

import re

from cofe.matching.answer._rules import substitution

DECIMALS = substitution(
    "decimals",
    'A decimal point between digits is kept inside the figure: "3.5" is one number.',
    "common",
    re.compile(r"(?<=\d)\.(?=\d)"),
    "_",
    lambda text: "." in text,
    reaches=(("it is 3.5 m", "it is 3_5 m"),),
    misses=("It ended in 1990. Then", "U.S."),
)
