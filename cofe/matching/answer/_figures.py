"""Figures and units of measure: scaling, rounding, converting (exact decimal arithmetic)."""

from __future__ import annotations

import math
import unicodedata
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache

from cofe.matching.answer._tables import inverted, table


@lru_cache(maxsize=1)
def measures() -> dict[str, str]:
    """A unit of measure's names and symbols -> the one unit ("feet", "ft" -> "ft")."""
    return inverted(table("measures")["names"])


@lru_cache(maxsize=1)
def after_number() -> dict[str, str]:
    """Symbols that are also words ("in", "m", "c"): units only right after a figure."""
    return dict(table("measures")["after_number"])


@lru_cache(maxsize=1)
def multiples() -> dict[str, tuple[str, int, bool]]:
    """A unit that is a multiple of another -> (the base unit, times, a power with no figure)."""
    return {k: (v[0], int(v[1]), bool(v[2])) for k, v in table("measures")["multiples"].items()}


@lru_cache(maxsize=1)
def dimensions() -> dict[str, tuple[str, float | None]]:
    """Per unit: what it measures, and one of it in that dimension's base unit (metre,
    square metre, kilogram, litre, watt, second; None: no conversion -- a year is as often
    a date as a duration, and temperature scales have an offset, read by ``in_base``)."""
    return {k: (v[0], v[1]) for k, v in table("measures")["dimensions"].items()}


def kind(unit: str) -> str:
    """What a unit of measure measures ("length", ...; "" for none)."""
    return dimensions().get(unit, ("", None))[0]


def dimension(word: str) -> str:
    """What a unit of measure measures ("" for no unit): a bracket restates a figure only
    in a unit of the same kind ("5 km (3 mi)", not "5 km (10 minutes)")."""
    word = unicodedata.normalize("NFKC", word).casefold().replace("°", "").strip()
    unit = measures().get(word) or after_number().get(word, "")
    if word in ("in", "in."):  # right before the bracket: "9.54 in (242.3 mm)"
        unit = "inch"
    return kind(unit)


def times(number: str, by: int) -> str | None:
    """The figure times a power of ten, written as the matcher writes figures; None for a
    figure that is not a plain number ("1960s", "2x")."""
    try:
        value = Decimal(number.replace(",", "")) * by  # exact: 1.2 * 10**4 is 12000
    except InvalidOperation:
        return None
    return str(int(value)) if value == value.to_integral_value() else str(value.normalize())


def in_base(number: str, unit: str, *, rounded: bool) -> tuple[float, float] | None:
    """A figure in its dimension's base unit, and half the step of its last digit there: how
    far it may be from the value it stands for. ``rounded``: an answer's figure, whose
    trailing zeros are rounding ("1.9 million" +- 50,000), with two significant digits at
    least (a "2 hours" or "3000 m" says too little to convert); else a fragment's, copied
    from the source, whose every digit is written ("1,230" +- 0.5). None when the unit does
    not convert, or the figure is not a finite number."""
    measured, factor = dimensions().get(unit, ("", None))
    try:
        value = Decimal(number)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    if rounded:
        shape = value.normalize().as_tuple()
        if len(shape.digits) < 2 or not isinstance(shape.exponent, int):
            return None
        exponent = shape.exponent
    else:
        exponent = min(0, int(value.as_tuple().exponent))
    step = Decimal(1).scaleb(exponent) / 2
    if measured == "temperature":  # in degrees Celsius
        if unit == "celsius":
            return float(value), float(step)
        return float((value - 32) * 5 / 9), float(step * 5 / 9)
    if factor is None:
        return None
    base = float(value) * factor
    return (base, float(step) * factor) if math.isfinite(base) else None


def same_quantity(asked: tuple[str, str], said: tuple[str, str]) -> bool:
    """A fragment's figure in one unit is the answer's in another, once converted ("1,230
    km" and "764 miles", "1.5 metres" and "4.9 feet"): within what the two roundings allow."""
    a, b = in_base(*asked, rounded=False), in_base(*said, rounded=True)
    if a is None or b is None:
        return False
    return abs(a[0] - b[0]) <= a[1] + b[1]


def rounds_to(number: str, said: str) -> bool:
    """``said`` is ``number`` rounded, keeping two significant digits or more: "47" of
    "46.9", "1500000" of "1460000" (the trailing zeros of ``said`` are its rounding). Only a
    figure with decimals or of five digits or more: "1990" is another year than "1986", and
    "700 feet" another height than "720 feet"."""
    if "." not in number and len(number) < 5:
        return False
    try:
        value, rounded = Decimal(number), Decimal(said)
    except InvalidOperation:
        return False
    if not (value.is_finite() and rounded.is_finite()) or value == rounded:
        return False
    shape = rounded.normalize().as_tuple()
    if len(shape.digits) < 2 or not isinstance(shape.exponent, int):
        return False
    step = Decimal(1).scaleb(shape.exponent)
    return value.quantize(step, rounding=ROUND_HALF_UP) == rounded
