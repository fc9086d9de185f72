"""multiples: a multiple of a unit read in the base unit ("1.142 GW" = "1,142 MW")."""

from cofe.matching.answer._rules import ContextRule, register

# the figure before it is read in the base unit, so "1.142 gigawatts" = "1,142 megawatts"
# and "six decades" = "60 years"; with no figure, a power is still a power ("a gigawatt"
# touches "megawatts"), but "decades" is not "years" ("a decade" is one: one-multiple)
MULTIPLES = register(
    ContextRule(
        "multiples",
        "A figure before a multiple of a unit (gigawatt, decade) is read in the base unit.",
        "en",
        reaches=(
            ("about 1.142 gigawatts", "1142000000"),
            ("six decades", "60"),
            ("a gigawatt", "watt"),
        ),
        misses=(("in 2010, a decade after", "20100"), ("for decades", "year")),
    )
)
