"""What the figure-tolerance binders share: a fragment figure's written precision, and
whether an answer's figure stands beside a unit that fits it.

A grader reads a figure to the precision it is written in: "39%" is met by "38.82%", "$25.9
billion" by "$25,867 million" -- the answer's figure rounded to the fragment's last written
digit is the fragment's figure. The matcher's units hold figures normalised (scales
multiplied out: "25.9 billion" is 25900000000), which loses where the written digits end,
so the precision is read again from the fragment as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from typing import TYPE_CHECKING

from cofe.matching.answer.rules.common.currency_implied import CURRENCIES

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

# a figure as written, with the scale after it ("25.9 billion", "1,577 million", "25.9亿")
_WRITTEN = re.compile(
    r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*"
    r"(thousand|million|billion|trillion|bn|万亿|万|亿)?",
    re.IGNORECASE,
)
_SCALE = {
    "thousand": 3,
    "million": 6,
    "billion": 9,
    "bn": 9,
    "trillion": 12,
    "万": 4,
    "亿": 8,
    "万亿": 12,
}


def decimal(number: str) -> Decimal | None:
    """A normalised figure as an exact decimal, or None (a figure the units write otherwise)."""
    try:
        value = Decimal(number.replace(",", ""))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


@lru_cache(maxsize=4096)
def written_steps(source: str) -> dict[Decimal, Decimal]:
    """Each figure of a fragment as written -> the step of its last written digit, scale
    included ("25.9 billion" -> 1E+8, "39%" -> 1, "0.66" -> 0.01)."""
    steps: dict[Decimal, Decimal] = {}
    for whole, decimals, scale in _WRITTEN.findall(source):
        shift = _SCALE.get(scale.casefold(), 0) if scale else 0
        value = Decimal(f"{whole.replace(',', '')}.{decimals or '0'}").scaleb(shift)
        steps.setdefault(value, Decimal(1).scaleb(shift - len(decimals)))
    return steps


def step_of(number: str, value: Decimal, r: Reading) -> Decimal:
    """The step of a fragment figure's last written digit (its own digits when the
    fragment's text does not show it)."""
    found = written_steps(r.frag.source).get(value)
    if found is not None:
        return found
    exponent = value.as_tuple().exponent
    return Decimal(1).scaleb(min(0, exponent if isinstance(exponent, int) else 0))


def open_figures(r: Reading) -> Iterator[tuple[str, Decimal, Decimal]]:
    """The fragment's figures no binder has accounted for yet: each as the units write it,
    its exact value and the step of its last written digit."""
    for number in sorted(r.frag.numbers - r.accounted):
        value = decimal(number)
        if value is not None:
            yield number, value, step_of(number, value, r)


def significant(value: Decimal, step: Decimal) -> int:
    """How many significant digits ``value`` has when written down to ``step``."""
    if value == 0:
        return 0
    return max(0, value.copy_abs().adjusted() - step.adjusted() + 1)


def at_step(value: Decimal, step: Decimal) -> Decimal:
    """``value`` rounded to a multiple of ``step`` (half up, as people round)."""
    return (value / step).quantize(Decimal(1), rounding=ROUND_HALF_UP) * step


def beside(m: AnswerMatcher, r: Reading, number: str) -> list[tuple[str, Decimal]]:
    """The answer's figures that may state the fragment's ``number``: beside a unit the
    fragment writes beside it (an amount's currency, or none); for a bare figure, any but a
    percentage ("47 members" does not state "46.9%", "39%" does not state "$39")."""
    wanted = {u for n, u in r.frag.measured if n == number}
    units = {n: u for n, u in m._measured}
    out = []
    for said in m._numbers:
        unit = units.get(said)
        if wanted - CURRENCIES:
            fits = any((said, u) in m._measured for u in wanted)
        elif wanted:  # an amount: in its currency, or with none ("1.6 billion")
            fits = unit is None or unit in wanted
        else:  # a bare figure is met by any but a share
            fits = unit != "percent"
        value = decimal(said)
        if fits and value is not None:
            out.append((said, value))
    return out
