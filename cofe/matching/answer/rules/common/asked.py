"""asked: the question's units are no evidence (every answer repeats its question)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._rules import Binder, Case, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    """Sets the question's units aside (none accounted for): unless the fragment only
    repeats the question, then it is judged on all of it."""
    evidence = frozenset(u for u in r.everything if not m.asked(u))
    if evidence:
        r.set_aside(ASKED, evidence)
    return frozenset()


ASKED = register(
    Binder(
        "asked",
        "Sets aside the units the question holds, once the answer says a unit or a figure.",
        "common",
        _bind,
        reaches=(
            Case(
                "The current annual salary of the president is not public.",
                "current annual salary is $155,756",
                Decision.UNDECIDED,
                "What is the current annual salary of the president?",
            ),
        ),
        misses=(Case("The weather was mild.", "massive exodus", Decision.ABSENT),),
        # with nothing of the fragment said, the question changes nothing
        applies=lambda m, r: bool(r.frag.numbers or r.accounted),
        trace="never",
    )
)
