"""measures: units of measure by one name ("720 ft" = "720 feet", "1142 MW" = "megawatts")."""

from cofe.matching.answer._figures import measures
from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._text import STEM


def _read(t: Token) -> Unit | None:
    measure = measures().get(t.token)
    return None if measure is None else (measure, STEM, t.token, t.acronym)


# full names and unambiguous symbols map everywhere; a symbol that is also a word ("in",
# "m", "c") only right after a number (the context rule measure-after-number)
MEASURES = register(
    TokenRule(
        "measures",
        "A unit of measure's names and unambiguous symbols read as one unit (feet, ft -> ft).",
        "common",
        ("figure", "word"),
        _read,
        reaches=(("feet", "ft"), ("MW", "mw"), ("km2", "km2"), ("kilometres", "km")),
        misses=("castle", "m"),
    )
)
