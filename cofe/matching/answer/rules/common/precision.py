"""precision: the answer's figure, rounded to the last digit the fragment writes, is the
fragment's figure ("38.82%" for "39%", "$25,867 million" for "$25.9 billion")."""

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
    """Only an answer more precise than the fragment (a digit below its last one), and a
    fragment figure of two significant digits or more ("3 million" is not met by "2.6
    million"): the grader reads the fragment's figure to the precision it is written in."""
    out = set()
    for number, value, step in open_figures(r):
        if significant(value, step) < 2:
            continue
        for _, said in beside(m, r, number):
            if said % step and at_step(said, step) == value:
                out.add(number)
                break
    return frozenset(out)


PRECISION = register(
    Binder(
        "precision",
        "The answer's figure, rounded to the fragment's last written digit, is the fragment's.",
        "common",
        _bind,
        reaches=(
            Case("The gross margin was 38.82%.", "39%"),
            Case("Revenue was $25,867 million in 2023.", "$25.9 billion"),
            Case("净利润为25.87亿元。", "25.9亿元"),
        ),
        misses=(
            Case("The gross margin was 38.32%.", "39%", Decision.ABSENT),
            Case("Of the 38.82 members, most left.", "39%", Decision.ABSENT),
            Case("About 2.6 million people live there.", "3 million", Decision.ABSENT),
        ),
        applies=lambda m, r: bool(r.frag.numbers - r.accounted),
    )
)
