"""hedges: "roughly 3,000" and "close to 3,000" say the figure."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._text import ANY_DIGIT

# not "nearly" or "almost", which bound it from below: "more than 3,000" is not "nearly"
HEDGES = substitution(
    "hedges",
    "A word that only says a figure is approximate, right before it, is dropped.",
    "en",
    re.compile(r"\b(?:approximately|approx\.?|roughly|circa|close to)\s+(?=[$£€¥]?\d)", re.I),
    "",
    lambda text: ANY_DIGIT.search(text) is not None,
    reaches=(("approximately 3,000 people", "3,000 people"), ("close to $5", "$5")),
    misses=("nearly 3,000 people", "roughly speaking, 5"),
)
