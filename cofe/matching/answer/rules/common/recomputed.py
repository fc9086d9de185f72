"""recomputed: a computed figure the answer reaches one unit off in the last digit, rounded
at another step of the same computation ("101.4%" for "101.5%")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._rules import Binder, Case, register
from cofe.matching.answer.rules.common._tolerance import (
    at_step,
    beside,
    open_figures,
    significant,
)

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    """The rule a grader applies to a re-computed figure: the last written digit may differ
    by one. Only for a figure with decimals and three significant digits or more -- a
    ratio, a percentage, an amount worked out -- never a whole number (1994 is another year
    than 1995, 38 another count than 39), nor a figure of two digits (39.4 against 38.9)."""
    out = set()
    for number, value, step in open_figures(r):
        if "." not in number or step >= 1 or significant(value, step) < 3:
            continue
        for _, said in beside(m, r, number):
            if abs(at_step(said, step) - value) == step:
                out.add(number)
                break
    return frozenset(out)


RECOMPUTED = register(
    Binder(
        "recomputed",
        "A computed figure with decimals off by one in its last written digit.",
        "common",
        _bind,
        reaches=(
            Case("The ratio rose to 101.4%.", "101.5%"),
            Case("Earnings per share were $3.46.", "$3.45"),
        ),
        misses=(
            Case("He was born in 1995.", "1994", Decision.ABSENT),
            Case("The share was 38.9%.", "39.4%", Decision.ABSENT),
            Case("The ratio rose to 101.3%.", "101.5%", Decision.ABSENT),
        ),
        applies=lambda m, r: bool(r.frag.numbers - r.accounted),
    )
)
