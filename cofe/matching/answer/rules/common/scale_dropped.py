"""scale-dropped: a figure of a table "in thousands" or "in millions" that the answer copies
with the table's digits and without its scale ("$14,366" for "$14,366 thousand").

Financial tables state their scale once, in the header; an answer reading the table often
repeats the digits as printed, and a grader reading it beside the table accepts them. Only
the exact digits count, of a figure with four significant digits or more: "14,366" for
"14,366 thousand", never "366" for "366 thousand" (a count the scale changes) nor "14,400"
for "14,366 thousand" (rounding is the tolerance rules' work, on the scaled figure)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._rules import Binder, Case, register
from cofe.matching.answer.rules.common._tolerance import beside, decimal, significant

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

# a figure as the fragment writes it, with its scale word after it
_SCALED = re.compile(
    r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(thousand|million|billion)\b",
    re.IGNORECASE,
)
_SHIFT = {"thousand": 3, "million": 6, "billion": 9}


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    out = set()
    for whole, decimals, scale in _SCALED.findall(r.frag.source):
        printed = Decimal(f"{whole.replace(',', '')}.{decimals or '0'}")
        if significant(printed, Decimal(1).scaleb(-len(decimals))) < 4:
            continue
        number = next(
            (
                n
                for n in r.frag.numbers - r.accounted
                if decimal(n) == printed.scaleb(_SHIFT[scale.casefold()])
            ),
            None,
        )
        if number is not None and any(value == printed for _, value in beside(m, r, number)):
            out.add(number)
    return frozenset(out)


SCALE_DROPPED = register(
    Binder(
        "scale-dropped",
        "A table's figure copied with its digits and without the table's scale word.",
        "common",
        _bind,
        reaches=(
            Case("Net income for fiscal 2017 was $14,366.", "$14,366 thousand"),
            Case("The average was -1,161.33.", "-1,161.33 thousand"),
        ),
        misses=(
            Case("The plant employs 366 people.", "366 thousand people", Decision.ABSENT),
            Case("Net income was $14,400.", "$14,366 thousand", Decision.ABSENT),
            Case("Net income was $14,366 million.", "$14,366 thousand", Decision.ABSENT),
        ),
        applies=lambda m, r: bool(r.frag.numbers - r.accounted),
    )
)
