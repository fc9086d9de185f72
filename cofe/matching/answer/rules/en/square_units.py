"""square-units: "square miles" is one unit ("sqmile"), as "km²" is."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._tables import table

_SQUARE = re.compile(
    r"\b(?:square|sq\.?)\s*(kilomet(?:re|er)s?|km|miles?|mi|met(?:re|er)s?|m|feet|foot|ft)\b",
    re.IGNORECASE,
)


def _square(match: re.Match[str]) -> str:
    word = match[1].casefold()
    squared: dict[str, str] = table("measures")["squared"]
    return squared.get(word[:2], squared[word[0]])


def square_shown(unit: str) -> str:
    """A square unit as a person reads it ("sqmile" -> "square miles")."""
    shown: dict[str, str] = table("measures")["square_shown"]
    return shown.get(unit, unit)


SQUARE_UNITS = substitution(
    "square-units",
    'A square unit of length is one unit: "734,000 square miles" = "734,000 sqmile".',
    "en",
    _SQUARE,
    _square,
    lambda text: "sq" in text or "Sq" in text,
    reaches=(("734,000 square miles", "734,000 sqmile"), ("5 sq. km", "5 sqkm")),
    misses=("a square table", "Square Enix"),
)
