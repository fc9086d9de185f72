"""rounded: a figure with decimals the answer rounds ("46.9%" as "47 percent")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._figures import rounds_to
from cofe.matching.answer._rules import Binder, Case, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    """Keeping two significant digits or more, beside the fragment's unit when it has one
    ("47 percent", not "47 members"). Never a whole number ("1994" is not "1990", nor
    "1,142" "1,100"): a figure written whole is exact."""
    out = set()
    for number in r.frag.numbers - r.accounted:
        if "." not in number:
            continue
        beside = {u for n, u in r.frag.measured if n == number}
        for said in m._numbers:
            if beside and not any((said, u) in m._measured for u in beside):
                continue
            if "." in said and len(said.partition(".")[2]) >= len(number.partition(".")[2]):
                continue
            if rounds_to(number, said):
                out.add(number)
    return frozenset(out)


ROUNDED = register(
    Binder(
        "rounded",
        "A figure with decimals the answer rounds to two significant digits or more.",
        "common",
        _bind,
        reaches=(Case("Nearly 47 percent of them were Hispanic.", "46.9%"),),
        misses=(
            Case("Of the 47 members, 30% were Hispanic.", "46.9%", Decision.UNDECIDED),
            Case("In 1990 it rose.", "1994", Decision.ABSENT),
        ),
        applies=lambda m, r: bool(r.frag.numbers - r.accounted),
    )
)
