"""threshold: most units found (two thirds), no name or figure missing: present."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


# At or above this share of a fragment's content units found, it is present; else
# undecided. Chosen on the shipped dev set (benchmarks/data/answer_points) with blame
# precision first: an undecided point costs a judge call, a wrong "absent" blames the
# generator for a correct answer.
PRESENT_AT = 2 / 3


def _decide(m: AnswerMatcher, r: Reading) -> Fragment:
    missing = r.missing
    found = 1.0 - len(missing) / len(r.evidence)
    names = r.frag.names & missing
    numbers = r.frag.numbers & missing
    if found >= PRESENT_AT and not names and not numbers:
        return Fragment(Decision.PRESENT, r.text, r.shown())
    return Fragment(Decision.UNDECIDED, r.text, r.shown())


THRESHOLD = register(
    Decider(
        "threshold",
        "Two thirds of the units that count found, and every name and figure: else undecided.",
        "common",
        _decide,
        reaches=(
            Case("It became a weekly show.", "regular weekly show"),
            Case("The Broncos won the game.", "Denver Broncos", Decision.UNDECIDED),
        ),
        misses=(Case("It took five years.", "5 years"),),
    )
)
