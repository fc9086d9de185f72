"""percent-ratio: a percentage stated as a ratio, or a ratio as a percentage ("0.66" for
"66%", "65.7%" for "0.657")."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._rules import Binder, Case, register
from cofe.matching.answer.rules.common._tolerance import at_step, decimal, open_figures

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

_HUNDRED = Decimal(100)


def _agrees(value: Decimal, step: Decimal, said: Decimal) -> bool:
    return said == value or at_step(said, step) == value


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    """A fragment's percentage met by a bare ratio of the answer (at most 10: "1.015" for
    "101.5%"), or a fragment's bare ratio (below 10, with decimals) met by a percentage of
    the answer, each read to the fragment's written precision; the fragment's "percent"
    goes with its figure."""
    out: set[str] = set()
    shares = {n for n, u in r.frag.measured if u == "percent"}
    said_shares = {n for n, u in m._measured if u == "percent"}
    bound = {n for n, _ in m._measured}
    for number, value, step in open_figures(r):
        if number in shares:  # "66%": a bare "0.66"
            candidates = [decimal(s) for s in m._numbers if s not in bound]
            if any(
                c is not None and c <= 10 and _agrees(value, step, c * _HUNDRED) for c in candidates
            ):
                out |= {number, "percent"}
        elif "." in number and value < 10 and not {u for n, u in r.frag.measured if n == number}:
            candidates = [decimal(s) for s in said_shares]
            if any(c is not None and _agrees(value, step, c / _HUNDRED) for c in candidates):
                out.add(number)
    return frozenset(out)


PERCENT_RATIO = register(
    Binder(
        "percent-ratio",
        "A percentage said as a ratio, or a ratio said as a percentage, to the written precision.",
        "common",
        _bind,
        reaches=(
            Case("The payout ratio is 0.66.", "66%"),
            Case("The payout ratio is 66%.", "0.66"),
            Case("Coverage stood at 65.7 percent.", "0.657"),
        ),
        misses=(
            Case("The payout ratio is 0.56.", "66%", Decision.ABSENT),
            Case("He scored 0.66 goals a game; 66 players.", "66%", Decision.UNDECIDED),
            Case("The payout ratio is 66%.", "66", Decision.PRESENT),
        ),
        applies=lambda m, r: bool(r.frag.numbers - r.accounted),
    )
)
