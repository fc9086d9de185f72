"""degrees: "46 degrees Celsius" = "46 Celsius": the scale after the figure says it."""

from functools import lru_cache

from cofe.matching.answer._rules import ContextRule, register
from cofe.matching.answer._tables import table


@lru_cache(maxsize=1)
def degrees() -> frozenset[str]:
    return frozenset(table("en")["degrees"])


DEGREES = register(
    ContextRule(
        "degrees",
        'The word "degrees" after a figure is skipped: the scale after it is the unit.',
        "en",
        reaches=(("46 degrees Celsius", "celsius"),),
        misses=(("46 degrees Celsius", "degre"), ("a degree in law", "law1")),
    )
)
