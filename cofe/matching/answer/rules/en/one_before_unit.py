"""one-before-unit: "1" is mostly an article ("one of the largest"), a figure before a unit."""

from cofe.matching.answer._rules import ContextRule, register

ONE_BEFORE_UNIT = register(
    ContextRule(
        "one-before-unit",
        'The figure 1 counts as a figure only before a unit of measure ("1 km").',
        "en",
        reaches=(("It is 1 km long.", "km"),),
        misses=(("one of the largest", "largest1"),),
    )
)
