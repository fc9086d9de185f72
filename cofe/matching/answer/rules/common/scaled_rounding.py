"""scaled-rounding: a large whole figure the answer rounds and writes with a scale ("1.6
billion" for "$1,577 million")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._figures import rounds_to
from cofe.matching.answer._rules import Binder, Case, register
from cofe.matching.answer.rules.common._tolerance import beside, decimal

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    """Only a fragment figure of six digits or more (an amount, a population: "1994" and
    "1,142" stay exact), and an answer figure that is visibly rounded -- two significant
    digits or more, ending in four zeros or more, as "1.6 billion" and "1,500,000" do --
    and is the fragment's figure rounded (``rounds_to``)."""
    out = set()
    for number in r.frag.numbers - r.accounted:
        value = decimal(number)
        if value is None or "." in number or abs(value) < 100_000:
            continue
        for said, amount in beside(m, r, number):
            digits = m._written.get(said, said).replace(",", "").lstrip("-")
            if "." in said or "." in digits or len(digits) - len(digits.rstrip("0")) < 4:
                continue
            if amount != value and rounds_to(number, said):
                out.add(number)
                break
    return frozenset(out)


SCALED_ROUNDING = register(
    Binder(
        "scaled-rounding",
        "A figure of six digits or more that the answer rounds and writes with a scale.",
        "common",
        _bind,
        reaches=(
            Case("Revenue came to 1.6 billion.", "$1,577 million"),
            Case("About 1.5 million people live there.", "1,460,000"),
        ),
        misses=(
            Case("The dam produces 1,100 megawatts.", "1,142 megawatts", Decision.UNDECIDED),
            Case("Revenue came to 1.7 billion.", "$1,577 million", Decision.ABSENT),
        ),
        applies=lambda m, r: bool(r.frag.numbers - r.accounted),
    )
)
